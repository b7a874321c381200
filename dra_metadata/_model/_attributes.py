"""Device attributes: one value (DeviceAttribute) and a device's read-only map of them.

An attribute holds one of eight members (``int``, ``bool``, ``string``, ``version`` and their
list forms); `DeviceAttribute.value` is the plain Python value of the member that is set, a
`Version` for a version. `AttributeMap` is what ``Device.attributes`` always is: a read-only,
hashable Mapping whose decoded values are built on first access.
"""

# No `from __future__ import annotations`: the annotations are evaluated here, at class
# creation, so that pydantic need not resolve names in the public module these classes report.

import builtins
from collections.abc import Iterator, Mapping, Sequence

from dra_metadata._model._building import _PYDANTIC_CONFIG, twin_of
from dra_metadata._model._checks import (
    _check_int64,
    _check_optional,
    _coerce_tuple,
    _is_bool,
    _is_int64,
    _is_str,
    _type_error,
)
from dra_metadata._model._errors import AttributeNotFoundError, AttributeValueError, shown_names
from dra_metadata._model._frozen import frozen_model
from dra_metadata._model._repr import set_fields_repr
from dra_metadata._model._semver import Version, version_or_text

AttributeValue = int | bool | str | tuple[int, ...] | tuple[bool, ...] | tuple[str, ...]
"""The plain Python value of a device attribute."""

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, TypeVar, overload

    _T = TypeVar("_T")
_new_object = object.__new__
_object_setattr = object.__setattr__


@frozen_model
class DeviceAttribute:
    """One attribute value. Exactly one member should be set; `value` returns it.

    Decoding is lenient like upstream: an attribute with no member or several members set still
    decodes (validation reports it); `value` then returns None or raises AttributeValueError.
    """

    int: builtins.int | None = None
    bool: builtins.bool | None = None
    string: str | None = None
    version: str | None = None
    ints: Sequence[builtins.int] = ()
    bools: Sequence[builtins.bool] = ()
    strings: Sequence[str] = ()
    versions: Sequence[str] = ()

    __pydantic_config__ = _PYDANTIC_CONFIG
    __repr__ = set_fields_repr

    def __eq__(self, other: "Any") -> "builtins.bool":  # noqa: PYI032 - checked just below
        # Written out, as __hash__: faster than what frozen_model makes (a test ties them).
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (
            self.int,
            self.bool,
            self.string,
            self.version,
            self.ints,
            self.bools,
            self.strings,
            self.versions,
        ) == (
            other.int,
            other.bool,
            other.string,
            other.version,
            other.ints,
            other.bools,
            other.strings,
            other.versions,
        )

    def __hash__(self) -> "builtins.int":
        return hash(
            (
                self.int,
                self.bool,
                self.string,
                self.version,
                self.ints,
                self.bools,
                self.strings,
                self.versions,
            )
        )

    def __init__(
        self,
        int: builtins.int | None = None,  # noqa: A002 - the members' wire names
        bool: builtins.bool | None = None,  # noqa: A002
        string: str | None = None,
        version: str | None = None,
        ints: Sequence[builtins.int] = (),
        bools: Sequence[builtins.bool] = (),
        strings: Sequence[str] = (),
        versions: Sequence[str] = (),
    ) -> None:
        _object_setattr(self, "int", int)
        _object_setattr(self, "bool", bool)
        _object_setattr(self, "string", string)
        _object_setattr(self, "version", version)
        _object_setattr(self, "ints", ints)
        _object_setattr(self, "bools", bools)
        _object_setattr(self, "strings", strings)
        _object_setattr(self, "versions", versions)
        self.__post_init__()

    def __post_init__(self) -> None:
        _check_int64(self, "int", optional=True)
        _check_optional(self, "bool", builtins.bool, "a bool")
        _check_optional(self, "string", str, "a str")
        _check_optional(self, "version", str, "a str")
        _coerce_tuple(self, "ints", _is_int64, "int64 ints")
        _coerce_tuple(self, "bools", _is_bool, "bools")
        _coerce_tuple(self, "strings", _is_str, "strs")
        _coerce_tuple(self, "versions", _is_str, "strs")

    @property
    def members(self) -> tuple[str, ...]:
        """Wire names of the members that are set (a list member counts when non-empty)."""
        return tuple(name for name in ATTRIBUTE_MEMBERS if _member_is_set(getattr(self, name)))

    @property
    def value(self) -> AttributeValue | None:
        """The single value set: int, bool, str, Version, or a tuple of one of them for the
        list forms.

        A ``version`` is a `Version` (a str ordered by semantic-version precedence); one that
        is not a semantic version, which only a hand-written file holds (the decoder accepts
        it, as Go's does; validation reports it), stays a plain str, and so does each such
        element of ``versions``. None when nothing is set; AttributeValueError when several
        members are set.
        """
        members = self.members
        if not members:
            return None
        if len(members) > 1:
            raise AttributeValueError(
                f"attribute has several values set ({', '.join(members)}); exactly one is allowed"
            )
        member = members[0]
        if member == "version":
            return version_or_text(self.version)  # type: ignore[arg-type]  # it is set
        if member == "versions":
            return tuple(map(version_or_text, self.versions))
        result: AttributeValue = getattr(self, member)
        return result


ATTRIBUTE_MEMBERS = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
"""The members of a DeviceAttribute, in wire order."""


def _member_is_set(value: object) -> builtins.bool:
    if isinstance(value, tuple):
        return bool(value)
    return value is not None


def wire_attribute(attribute: DeviceAttribute) -> "dict[str, Any]":
    """The wire object of an attribute, as Go writes it: the members set, in wire order."""
    wire: dict[str, Any] = {}
    if attribute.int is not None:  # a pointer in Go: 0, false and "" are written
        wire["int"] = attribute.int
    if attribute.bool is not None:
        wire["bool"] = attribute.bool
    if attribute.string is not None:
        wire["string"] = attribute.string
    if attribute.version is not None:
        wire["version"] = attribute.version
    if attribute.ints:
        wire["ints"] = list(attribute.ints)
    if attribute.bools:
        wire["bools"] = list(attribute.bools)
    if attribute.strings:
        wire["strings"] = list(attribute.strings)
    if attribute.versions:
        wire["versions"] = list(attribute.versions)
    return wire


_DeviceAttributeTwin = twin_of(DeviceAttribute)


def build_attribute(
    int: builtins.int | None,  # noqa: A002 - the members' wire names
    bool: builtins.bool | None,  # noqa: A002
    string: str | None,
    version: str | None,
    ints: Sequence[builtins.int],
    bools: Sequence[builtins.bool],
    strings: Sequence[str],
    versions: Sequence[str],
) -> DeviceAttribute:
    """A DeviceAttribute of values the decoder has checked: each field, in order, unchecked."""
    instance = _DeviceAttributeTwin()
    instance.int = int
    instance.bool = bool
    instance.string = string
    instance.version = version
    instance.ints = ints
    instance.bools = bools
    instance.strings = strings
    instance.versions = versions
    instance.__class__ = DeviceAttribute
    return instance  # type: ignore[no-any-return]


def attribute_from_checked_wire(raw: "dict[str, Any] | None") -> DeviceAttribute:
    """A DeviceAttribute from a type-checked wire object (None and unknown keys allowed)."""
    if not raw:
        return build_attribute(None, None, None, None, (), (), (), ())
    get = raw.get
    ints, bools, strings, versions = get("ints"), get("bools"), get("strings"), get("versions")
    return build_attribute(
        get("int"),
        get("bool"),
        get("string"),
        get("version"),
        tuple(ints) if ints else (),
        tuple(bools) if bools else (),
        tuple(strings) if strings else (),
        tuple(versions) if versions else (),
    )


class AttributeMap(Mapping[str, DeviceAttribute]):
    """Read-only mapping of qualified attribute name to DeviceAttribute, in file order.

    Keys are exact: ``attributes["index"]`` finds only a key ``index``; a KeyError for a
    name that the map holds under a domain (``gpu.example.com/index``) names that key and
    says to use ``Device.attribute``, which also finds ``<driver>/<name>``. Hashable, and
    equal to any Mapping with the same items (so two maps that are equal hash equal).

    Decoded maps keep the checked wire objects and build each DeviceAttribute on first access,
    which keeps decoding of attribute-heavy files cheap; the wire objects stay as they are.
    """

    __slots__ = ("_built", "_entries", "_hash", "one_scalar_member_each")
    _entries: "dict[str, Any]"
    """DeviceAttributes (maps built by hand) or checked wire objects (decoded maps)."""
    _built: dict[str, DeviceAttribute]
    """The DeviceAttributes built so far from the wire objects of a decoded map."""
    _hash: builtins.int
    """The hash, once computed (the map never changes)."""
    one_scalar_member_each: builtins.bool
    """True when the decoder found exactly one scalar member in every attribute, which makes
    each wire object exactly what Go writes; False for maps built by hand; unset on decoded
    maps that hold something else (use getattr)."""

    def __init__(self, entries: Mapping[str, "AttributeInput"] | None = None) -> None:
        self._entries = _attribute_entries(entries or {}, "AttributeMap")
        self.one_scalar_member_each = False

    @staticmethod
    def from_checked_wire(raw: "dict[str, Any]") -> "AttributeMap":
        """Wrap a type-checked wire ``attributes`` object without building its values yet."""
        instance = _new_object(AttributeMap)
        _set_entries(instance, raw)
        return instance

    def __getitem__(self, key: str) -> DeviceAttribute:
        try:
            value = self._entries[key]
        except KeyError:
            raise self._missing(key) from None
        if value is not None and type(value) is not dict:
            built_by_hand: DeviceAttribute = value  # a DeviceAttribute, or of a subclass
            return built_by_hand
        try:
            built = self._built
        except AttributeError:
            built = self._built = {}
        attribute = built.get(key)
        if attribute is None:
            attribute = built[key] = attribute_from_checked_wire(value)
        return attribute

    def _missing(self, key: object) -> KeyError:
        """The KeyError for ``key``: it names the keys of the same name under another domain
        (or none), which an exact lookup does not find."""
        if not isinstance(key, str):
            return KeyError(key)
        identifier = key.rpartition("/")[2]
        similar = tuple(name for name in self._entries if name.rpartition("/")[2] == identifier)
        if not similar:
            return KeyError(key)
        return AttributeNotFoundError(
            f"no attribute {key!r}: the keys of an attribute map are exact, and this one has "
            f"{shown_names([repr(name) for name in similar], ' and ')}; use that key, or "
            f"device.attribute({identifier!r}), which finds both {identifier} and "
            f"<driver>/{identifier}",
            name=key,
            suggestions=similar,
        )

    if TYPE_CHECKING:

        @overload
        def get(self, key: str, /) -> DeviceAttribute | None: ...
        @overload
        def get(self, key: str, /, default: DeviceAttribute | _T) -> DeviceAttribute | _T: ...

    def get(self, key: str, /, default: object = None) -> object:
        """The attribute called exactly ``key``, or ``default`` (None)."""
        return self[key] if key in self._entries else default

    def __contains__(self, key: object) -> builtins.bool:
        return key in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> builtins.int:
        return len(self._entries)

    def __eq__(self, other: object) -> builtins.bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    def __hash__(self) -> builtins.int:
        try:
            return self._hash
        except AttributeError:
            pass
        computed = self._hash = hash(frozenset(self.items()))
        return computed

    def __repr__(self) -> str:
        return f"AttributeMap({dict(self.items())!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: "Any", handler: "Any") -> "Any":
        """How pydantic validates, serializes and describes attribute maps: as a dict of
        DeviceAttributes on the wire, an AttributeMap in Python."""
        from pydantic_core import core_schema  # noqa: PLC0415 - pydantic only when asked

        as_dict = handler.generate_schema(dict[str, DeviceAttribute])
        from_dict = core_schema.no_info_after_validator_function(cls, as_dict)
        return core_schema.json_or_python_schema(
            json_schema=from_dict,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(cls), from_dict]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                dict, return_schema=as_dict
            ),
        )


_set_entries = AttributeMap._entries.__set__  # type: ignore[attr-defined]  # noqa: SLF001


def _coerce_attributes(owner: object) -> None:
    value = owner.attributes  # type: ignore[attr-defined]
    if isinstance(value, AttributeMap):
        return
    if not isinstance(value, Mapping):
        raise _type_error(owner, "attributes", "a mapping of str to DeviceAttribute", value)
    attributes = _new_object(AttributeMap)
    _set_entries(attributes, _attribute_entries(value, f"{type(owner).__name__}.attributes"))
    attributes.one_scalar_member_each = False
    _object_setattr(owner, "attributes", attributes)


AttributeInput = DeviceAttribute | str | int | bool | Sequence[str] | Sequence[int] | Sequence[bool]
"""What a hand-built attribute map takes for a value: a DeviceAttribute, or a plain value whose
member is unambiguous (str -> string, Version -> version, int -> int, bool -> bool, a non-empty
list or tuple of one of them -> strings, versions, ints, bools). A version is never guessed
from a plain str: use ``Version("1.2.3")`` or ``DeviceAttribute(version=...)``. So the values
that ``Device.attribute`` returns build the same attributes again."""

_PLAIN_VALUE_HELP = (
    "a DeviceAttribute, or a plain str, Version, int, bool or non-empty list of one of them "
    "(a version is written Version('1.2.3') or DeviceAttribute(version='1.2.3'))"
)


def _attribute_entries(entries: "Mapping[Any, Any]", owner: str) -> "dict[str, Any]":
    """The entries of a hand-built map: DeviceAttributes kept, plain values converted."""
    checked: dict[str, Any] = {}
    for key, value in entries.items():
        if not isinstance(key, str):
            raise TypeError(f"{owner} keys must be attribute names (str), not {key!r}")
        checked[key] = (
            value if isinstance(value, DeviceAttribute) else _plain_attribute(owner, key, value)
        )
    return checked


def _plain_attribute(owner: str, key: str, value: object) -> DeviceAttribute:
    """The DeviceAttribute of a plain value whose member is unambiguous (see AttributeInput)."""
    try:
        if isinstance(value, builtins.bool):
            return DeviceAttribute(bool=value)
        if isinstance(value, builtins.int):
            return DeviceAttribute(int=builtins.int(value))
        if isinstance(value, Version):
            return DeviceAttribute(version=value)
        if isinstance(value, str):
            return DeviceAttribute(string=value)
        if isinstance(value, (list, tuple)) and value:
            attribute = _plain_list_attribute(value)
            if attribute is not None:
                return attribute
    except TypeError as error:  # an int outside the int64 range, a mix of Version and str
        raise TypeError(f"{owner}[{key!r}]: {error}") from None
    raise TypeError(f"{owner}[{key!r}] must be {_PLAIN_VALUE_HELP}, not {value!r}")


def _plain_list_attribute(items: Sequence[object]) -> DeviceAttribute | None:
    """The list attribute of a non-empty list of plain values of one kind, or None."""
    if all(isinstance(item, builtins.bool) for item in items):
        return DeviceAttribute(bools=items)  # type: ignore[arg-type]
    if any(isinstance(item, builtins.bool) for item in items):
        return None
    if all(isinstance(item, builtins.int) for item in items):
        return DeviceAttribute(ints=[builtins.int(item) for item in items])  # type: ignore[call-overload]
    if all(isinstance(item, Version) for item in items):
        return DeviceAttribute(versions=items)  # type: ignore[arg-type]
    if not all(isinstance(item, str) for item in items):
        return None
    if any(isinstance(item, Version) for item in items):
        raise TypeError(
            "mixes Version and str: make every element a Version for a versions attribute, "
            "or a str for a strings one"
        )
    return DeviceAttribute(strings=items)  # type: ignore[arg-type]
