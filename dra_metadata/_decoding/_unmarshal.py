"""Go's unmarshalling of a parsed object into the DeviceMetadata types, for the exact path.

Input is what `_gojson.parse_value` returns (objects as ordered pairs, numbers as text); output
is the wire dictionary the converter takes, holding what Go's structs hold after
``json.Unmarshal`` (spec §3.3):

* keys match case-sensitively; unknown keys are skipped;
* a key given twice is decoded into what the first produced: objects are merged, arrays are
  decoded element by element into the existing elements (including elements a shorter array
  cut off earlier: Go keeps them in the slice's backing array, which it grows only when it is
  full, copying all of it) and then cut; map entries and scalars are replaced;
* ``null`` sets map, slice and pointer fields to nil and leaves others as they are, except a
  non-pointer time, whose UnmarshalJSON resets it;
* a type mismatch is remembered and decoding goes on (the first mismatch is reported), but a
  time that does not parse stops decoding at once, as Go's errors do.

`type_meta` is the other half: how Kubernetes finds apiVersion and kind (case-insensitively).
"""

from __future__ import annotations

from typing import Any

from dra_metadata._decoding._fields import ExactJson, WireTypeError
from dra_metadata._decoding._gojson import Number, Pairs, to_python
from dra_metadata._decoding._gotime import TimeFormatError, parse_rfc3339
from dra_metadata._model._checks import INT64_MAX, INT64_MIN


def describe_node(node: object) -> str:
    """A JSON-flavoured description of a parsed node for error messages."""
    if type(node) is Pairs:
        return "an object"
    if type(node) is list:
        return "an array"
    if type(node) is Number:
        return f"the number {node}"
    if node is True or node is False:  # never null: every type takes null
        return "true" if node else "false"
    shown = node if len(node) <= 40 else node[:37] + "..."  # type: ignore[arg-type, index]
    return f"a string ({shown!r})"


class _Decoder:
    """One unmarshal: remembers the first type mismatch, as Go's decodeState does."""

    __slots__ = ("first_error",)

    def __init__(self) -> None:
        self.first_error: WireTypeError | None = None

    def mismatch(self, path: str, expected: str, node: object) -> None:
        if self.first_error is None:
            self.first_error = WireTypeError(
                path, f"expected {expected}, got {describe_node(node)}"
            )


class _Type:
    """A Go type: how a JSON node is decoded into its current value, and the wire form."""

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:
        raise NotImplementedError

    def wire(self, value: Any) -> Any:
        """The wire form of a (non-nil) value."""
        return value

    def zero_wire(self) -> Any:
        """The wire form of the zero value, for elements of slices and maps."""
        return None


class _String(_Type):
    def __init__(self, *, pointer: bool) -> None:
        self.pointer = pointer

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:
        if type(node) is str:
            return node
        if node is None:
            return None if self.pointer else current
        state.mismatch(path, "a string", node)
        return current

    def zero_wire(self) -> Any:
        return ""


class _Bool(_Type):
    def __init__(self, *, pointer: bool) -> None:
        self.pointer = pointer

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:
        if node is True or node is False:
            return node
        if node is None:
            return None if self.pointer else current
        state.mismatch(path, "true or false", node)
        return current

    def zero_wire(self) -> Any:
        return False


class _Int64(_Type):
    def __init__(self, *, pointer: bool) -> None:
        self.pointer = pointer

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:
        if type(node) is Number:
            text = node.lstrip("-")
            if text.isdigit() and len(text) <= 19:  # strconv.ParseInt(text, 10, 64)
                number = int(node)
                if INT64_MIN <= number <= INT64_MAX:
                    return number
        elif node is None:
            return None if self.pointer else current
        state.mismatch(path, "an integer in the int64 range", node)
        return current

    def zero_wire(self) -> Any:
        return 0


class _Time(_Type):
    """metav1.Time (or a pointer to one): its UnmarshalJSON parses RFC 3339 and fails hard."""

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:  # noqa: ARG002
        if node is None:
            return None  # a pointer becomes nil; a Time's own UnmarshalJSON resets it
        if type(node) is not str:
            raise WireTypeError(
                path, f"expected an RFC 3339 time string, got {describe_node(node)}"
            )
        try:
            parse_rfc3339(node)
        except TimeFormatError as error:
            raise WireTypeError(path, f"not an RFC 3339 time ({error}): {node!r}") from None
        return node


class _Raw(_Type):
    """metav1.FieldsV1: any JSON value, kept whole (null makes the pointer nil)."""

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:  # noqa: ARG002
        return None if node is None else ExactJson(to_python(node))


class _Struct(_Type):
    def __init__(self, fields: dict[str, _Type], *, pointer: bool) -> None:
        self.fields = fields
        self.pointer = pointer

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:
        if type(node) is Pairs:
            target = current if current is not None else {}
            fields = self.fields
            for key, value in node:
                field = fields.get(key)
                if field is not None:
                    field_path = f"{path}.{key}" if path else key
                    target[key] = field.decode(value, target.get(key), field_path, state)
            return target
        if node is None:
            return None if self.pointer else current
        state.mismatch(path, "an object", node)
        return current

    def wire(self, value: Any) -> Any:
        fields = self.fields
        return {key: fields[key].wire(item) for key, item in value.items() if item is not None}

    def zero_wire(self) -> Any:
        return {}


class _Map(_Type):
    def __init__(self, element: _Type) -> None:
        self.element = element

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:
        if type(node) is Pairs:
            target = current if current is not None else {}
            element = self.element
            for key, value in node:  # each entry starts from the zero value: last one wins
                target[key] = element.decode(value, None, f"{path}[{key}]", state)
            return target
        if node is None:
            return None
        state.mismatch(path, "an object", node)
        return current

    def wire(self, value: Any) -> Any:
        element = self.element
        zero = element.zero_wire()
        return {key: zero if item is None else element.wire(item) for key, item in value.items()}


class _Slice:
    """A Go slice: its backing array, of which the first `length` elements count."""

    __slots__ = ("items", "length")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.length = 0


class _SliceOf(_Type):
    def __init__(self, element: _Type) -> None:
        self.element = element

    def decode(self, node: Any, current: Any, path: str, state: _Decoder) -> Any:
        if type(node) is list:
            if not node:
                return _Slice()  # a new empty slice: earlier elements are gone
            target: _Slice = current if current is not None else _Slice()
            items = target.items
            element = self.element
            for index, value in enumerate(node):
                if index == len(items):  # the backing array is full: Go grows it
                    items.append(None)
                items[index] = element.decode(value, items[index], f"{path}[{index}]", state)
            target.length = len(node)
            return target
        if node is None:
            return None
        state.mismatch(path, "an array", node)
        return current

    def wire(self, value: Any) -> Any:
        element = self.element
        zero = element.zero_wire()
        return [
            zero if item is None else element.wire(item) for item in value.items[: value.length]
        ]


def _string() -> _String:
    return _String(pointer=False)


_ATTRIBUTE = _Struct(
    {
        "int": _Int64(pointer=True),
        "bool": _Bool(pointer=True),
        "string": _String(pointer=True),
        "version": _String(pointer=True),
        "ints": _SliceOf(_Int64(pointer=False)),
        "bools": _SliceOf(_Bool(pointer=False)),
        "strings": _SliceOf(_string()),
        "versions": _SliceOf(_string()),
    },
    pointer=False,
)
_NETWORK_DATA = _Struct(
    {
        "interfaceName": _string(),
        "ips": _SliceOf(_string()),
        "hardwareAddress": _string(),
    },
    pointer=True,
)
_DEVICE = _Struct(
    {
        "driver": _string(),
        "pool": _string(),
        "name": _string(),
        "attributes": _Map(_ATTRIBUTE),
        "networkData": _NETWORK_DATA,
    },
    pointer=False,
)
_REQUEST = _Struct({"name": _string(), "devices": _SliceOf(_DEVICE)}, pointer=False)
_OWNER_REFERENCE = _Struct(
    {
        "apiVersion": _string(),
        "kind": _string(),
        "name": _string(),
        "uid": _string(),
        "controller": _Bool(pointer=True),
        "blockOwnerDeletion": _Bool(pointer=True),
    },
    pointer=False,
)
_MANAGED_FIELDS_ENTRY = _Struct(
    {
        "manager": _string(),
        "operation": _string(),
        "apiVersion": _string(),
        "time": _Time(),
        "fieldsType": _string(),
        "fieldsV1": _Raw(),
        "subresource": _string(),
    },
    pointer=False,
)
_OBJECT_META = _Struct(
    {
        "name": _string(),
        "generateName": _string(),
        "namespace": _string(),
        "selfLink": _string(),
        "uid": _string(),
        "resourceVersion": _string(),
        "generation": _Int64(pointer=False),
        "creationTimestamp": _Time(),
        "deletionTimestamp": _Time(),
        "deletionGracePeriodSeconds": _Int64(pointer=True),
        "labels": _Map(_string()),
        "annotations": _Map(_string()),
        "ownerReferences": _SliceOf(_OWNER_REFERENCE),
        "finalizers": _SliceOf(_string()),
        "managedFields": _SliceOf(_MANAGED_FIELDS_ENTRY),
    },
    pointer=False,
)
_DEVICE_METADATA = _Struct(
    {
        "kind": _string(),
        "apiVersion": _string(),
        "metadata": _OBJECT_META,
        "podClaimName": _String(pointer=True),
        "requests": _SliceOf(_REQUEST),
    },
    pointer=False,
)
"""v1alpha1 and v1beta1 DeviceMetadata (identical)."""


def unmarshal_device_metadata(pairs: Pairs) -> dict[str, Any]:
    """The wire dictionary Go's structs hold after unmarshalling ``pairs``; raises WireTypeError."""
    state = _Decoder()
    value = _DEVICE_METADATA.decode(pairs, None, "", state)
    if state.first_error is not None:
        raise state.first_error
    wire: dict[str, Any] = _DEVICE_METADATA.wire(value)
    return wire


def type_meta_key(key: str) -> str | None:
    """Which of apiVersion and kind a key finds in Go's case-insensitive field lookup."""
    if len(key) in {4, 10}:
        folded = key.casefold()  # Unicode folding as Go's: Kelvin sign is k, long s is s
        if folded == "kind":
            return "kind"
        if folded == "apiversion":
            return "apiVersion"
    return None


def type_meta(pairs: Pairs) -> tuple[Any, Any]:
    """(apiVersion, kind) as Kubernetes reads them: every key that matches case-insensitively is
    decoded in turn (the last string wins, null changes nothing). A value of another type makes
    the lookup fail whatever follows; it is returned as found, for the caller to report."""
    found: dict[str, Any] = {}
    wrong: dict[str, Any] = {}
    for key, value in pairs:
        name = type_meta_key(key)
        if name is None or value is None:
            continue
        if type(value) is str:
            found[name] = value
        else:
            wrong.setdefault(name, value)
    found.update(wrong)
    return found.get("apiVersion"), found.get("kind")
