"""Version-agnostic, immutable models of DeviceMetadata and typed access to device attributes.

The models are frozen, slotted standard-library dataclasses that mirror the wire schema. pydantic
understands them natively (field aliases come from ``__pydantic_config__``), which is how the JSON
Schemas in ``schemas/`` are generated, yet importing and decoding never load pydantic: its
BaseModel alone costs more import time than a whole ``dra-metadata show``, and building
BaseModels is several times slower than decoding needs to be.

Hand-built objects are checked and normalized in ``__post_init__`` (lists become tuples, dicts
become read-only mappings); the decoder checks wire data itself and builds objects through
`builder`, skipping those checks.
"""

# No `from __future__ import annotations`: the annotations are evaluated here, at class
# creation, so that pydantic need not resolve names in the public module these classes report.

import builtins
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, overload

from dra_metadata._model._checks import (
    _check,
    _check_int64,
    _check_optional,
    _coerce_tuple,
    _is_bool,
    _is_int64,
    _is_str,
    _type_error,
)
from dra_metadata._model._errors import AttributeNotFoundError, AttributeValueError, shown_names
from dra_metadata._model._repr import set_fields_repr

AttributeValue = int | bool | str | tuple[int, ...] | tuple[bool, ...] | tuple[str, ...]
"""The plain Python value of a device attribute."""

_T = TypeVar("_T")
_C = TypeVar("_C")
_new_object = object.__new__
_object_setattr = object.__setattr__


def camel(name: str) -> str:
    """The wire name of a field: ``interface_name`` -> ``interfaceName``."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


# Read by pydantic when it builds a schema for these dataclasses: wire names as aliases.
_PYDANTIC_CONFIG = {"alias_generator": camel, "validate_by_name": True, "validate_by_alias": True}


def builder(cls: type[_C]) -> Callable[..., _C]:
    """A constructor taking every field positionally, in order, without checks.

    For the decoder, which has checked the values already: several times faster than __init__.
    The instance is made as a plain twin of the slotted class, with the same slots, whose
    attribute stores the interpreter runs at full speed (those of a frozen class go through
    its __setattr__ and cannot), then given the class, whose layout is the same.
    """
    names = [item.name for item in fields(cls)]  # type: ignore[arg-type]
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": cls.__slots__})  # type: ignore[attr-defined]
    namespace: dict[str, Any] = {"_twin": twin, "_cls": cls}
    stores = "".join(f"    instance.{name} = {name}\n" for name in names)
    source = (
        f"def build_{cls.__name__}({', '.join(names)}):\n"
        f"    instance = _twin()\n{stores}    instance.__class__ = _cls\n    return instance\n"
    )
    exec(source, namespace)  # noqa: S102 - source built above from the dataclass's own field names
    build: Callable[..., _C] = namespace[f"build_{cls.__name__}"]
    return build


@dataclass(frozen=True, slots=True, repr=False)
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
        """The single value set: int, bool, str (string or version) or a tuple for list forms.

        None when nothing is set; AttributeValueError when several members are set.
        """
        members = self.members
        if not members:
            return None
        if len(members) > 1:
            raise AttributeValueError(
                f"attribute has several values set ({', '.join(members)}); exactly one is allowed"
            )
        result: AttributeValue = getattr(self, members[0])
        return result


ATTRIBUTE_MEMBERS = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
"""The members of a DeviceAttribute, in wire order."""


def _member_is_set(value: object) -> builtins.bool:
    if isinstance(value, tuple):
        return bool(value)
    return value is not None


def wire_attribute(attribute: DeviceAttribute) -> dict[str, Any]:
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


_build_attribute = builder(DeviceAttribute)


def attribute_from_checked_wire(raw: dict[str, Any] | None) -> DeviceAttribute:
    """A DeviceAttribute from a type-checked wire object (None and unknown keys allowed)."""
    if not raw:
        return _build_attribute(None, None, None, None, (), (), (), ())
    get = raw.get
    ints, bools, strings, versions = get("ints"), get("bools"), get("strings"), get("versions")
    return _build_attribute(
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

    Decoded maps keep the checked wire objects and build each DeviceAttribute on first access,
    which keeps decoding of attribute-heavy files cheap; the wire objects stay as they are.
    """

    __slots__ = ("_built", "_entries", "one_scalar_member_each")
    __hash__ = None  # type: ignore[assignment]
    _entries: dict[str, Any]
    """DeviceAttributes (maps built by hand) or checked wire objects (decoded maps)."""
    _built: dict[str, DeviceAttribute]
    """The DeviceAttributes built so far from the wire objects of a decoded map."""
    one_scalar_member_each: builtins.bool
    """True when the decoder found exactly one scalar member in every attribute, which makes
    each wire object exactly what Go writes; False for maps built by hand; unset on decoded
    maps that hold something else (use getattr)."""

    def __init__(self, entries: Mapping[str, "AttributeInput"] | None = None) -> None:
        self._entries = _attribute_entries(entries or {}, "AttributeMap")
        self.one_scalar_member_each = False

    @staticmethod
    def from_checked_wire(raw: dict[str, Any]) -> "AttributeMap":
        """Wrap a type-checked wire ``attributes`` object without building its values yet."""
        instance = _new_object(AttributeMap)
        _set_entries(instance, raw)
        return instance

    def __getitem__(self, key: str) -> DeviceAttribute:
        value = self._entries[key]
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

    def __repr__(self) -> str:
        return f"AttributeMap({dict(self.items())!r})"


class _AttributeMapSchema:
    """Annotation marker: how pydantic validates, serializes and describes attribute maps."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema  # noqa: PLC0415 - pydantic only when asked

        as_dict = handler.generate_schema(dict[str, DeviceAttribute])
        from_dict = core_schema.no_info_after_validator_function(AttributeMap, as_dict)
        return core_schema.json_or_python_schema(
            json_schema=from_dict,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(AttributeMap), from_dict]
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
member is unambiguous (str -> string, int -> int, bool -> bool, a non-empty list or tuple of one
of them -> strings, ints, bools). A version is never guessed from a str: use
``DeviceAttribute(version=...)``."""

_PLAIN_VALUE_HELP = (
    "a DeviceAttribute, or a plain str, int, bool or non-empty list of one of them "
    "(a version is written DeviceAttribute(version='1.2.3'), a list of versions "
    "DeviceAttribute(versions=[...]))"
)


def _attribute_entries(entries: Mapping[Any, Any], owner: str) -> dict[str, Any]:
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
        if isinstance(value, str):
            return DeviceAttribute(string=value)
        if isinstance(value, (list, tuple)) and value:
            if all(isinstance(item, builtins.bool) for item in value):
                return DeviceAttribute(bools=value)
            if not any(isinstance(item, builtins.bool) for item in value):
                if all(isinstance(item, builtins.int) for item in value):
                    return DeviceAttribute(ints=[builtins.int(item) for item in value])
                if all(isinstance(item, str) for item in value):
                    return DeviceAttribute(strings=value)
    except TypeError as error:  # an int outside the int64 range
        raise TypeError(f"{owner}[{key!r}]: {error}") from None
    raise TypeError(f"{owner}[{key!r}] must be {_PLAIN_VALUE_HELP}, not {value!r}")


@dataclass(frozen=True, slots=True, repr=False)
class NetworkDeviceData:
    """Network data of a device, often published later than the device itself."""

    # The docstring of a wire model is its JSON Schema's description: one line; the fields say
    # the rest.

    interface_name: str = ""
    """The interface's name in the pod's network namespace (``net1``)."""
    ips: Sequence[str] = ()
    """Addresses in CIDR form (``10.56.217.12/24``, ``fd00:56::12/64``); a tuple, which can
    be empty without IPAM: which fields a reader requires is its choice
    (wait_for_network_data's ``require``)."""
    hardware_address: str = ""
    """The MAC address (``0a:58:0a:38:d9:0c``)."""

    __pydantic_config__ = _PYDANTIC_CONFIG
    __repr__ = set_fields_repr

    def __post_init__(self) -> None:
        _check(self, "interface_name", str, "a str")
        _coerce_tuple(self, "ips", _is_str, "strs")
        _check(self, "hardware_address", str, "a str")


@dataclass(frozen=True, slots=True, repr=False)
class Device:
    """One allocated device: who serves it, where it comes from, and what it looks like."""

    driver: str = ""
    """The DRA driver that serves the device (``gpu.example.com``)."""
    pool: str = ""
    """The resource pool of the device in the driver's ResourceSlices (often the node)."""
    name: str = ""
    """The device's name within its pool (``gpu-0``)."""
    attributes: Annotated[Mapping[str, DeviceAttribute], _AttributeMapSchema()] = field(
        default_factory=AttributeMap
    )
    """Qualified name -> attribute; always an AttributeMap (a read-only Mapping)."""
    network_data: NetworkDeviceData | None = None
    """None until the driver publishes network data for the device."""

    __pydantic_config__ = _PYDANTIC_CONFIG
    __repr__ = set_fields_repr

    if TYPE_CHECKING:  # what type checkers see: attributes also take plain values

        def __init__(
            self,
            driver: str = "",
            pool: str = "",
            name: str = "",
            attributes: Mapping[str, AttributeInput] = ...,
            network_data: NetworkDeviceData | None = None,
        ) -> None: ...

    def __post_init__(self) -> None:
        for name in ("driver", "pool", "name"):
            _check(self, name, str, "a str")
        _coerce_attributes(self)
        _check_optional(self, "network_data", NetworkDeviceData, "a NetworkDeviceData")

    def get_attribute(self, name: str) -> DeviceAttribute | None:
        """The attribute called ``name``; an unqualified name also finds ``<driver>/<name>``.

        Drivers may publish keys with or without their own domain, so ``model`` and
        ``gpu.example.com/model`` find the same attribute of a ``gpu.example.com`` device.
        None when the device has no such attribute. An unqualified name that the device has
        only under another domain (``pciBusID`` for ``resource.kubernetes.io/pciBusID``)
        raises AttributeNotFoundError, which names the attributes it may have meant.
        """
        entries = self.attributes
        if name in entries:
            return entries[name]
        domain, separator, identifier = name.rpartition("/")
        if separator:
            if domain == self.driver and identifier in entries:
                return entries[identifier]
            return None
        found = entries.get(f"{self.driver}/{name}")
        if found is None:
            elsewhere = tuple(key for key in entries if key.rpartition("/")[2] == name)
            if elsewhere:
                raise AttributeNotFoundError(
                    f"device {self.name} ({self.driver}) has no attribute {name} (an "
                    f"unqualified name finds {name} and {self.driver}/{name}); did you mean "
                    f"{shown_names(elsewhere, ' or ')}?",
                    name=name,
                    suggestions=elsewhere,
                )
        return found

    @overload
    def attribute(self, name: str, default: None = None) -> AttributeValue | None: ...
    @overload
    def attribute(self, name: str, default: _T) -> AttributeValue | _T: ...
    def attribute(self, name: str, default: _T | None = None) -> AttributeValue | _T | None:
        """The plain value of attribute ``name`` (see get_attribute), or ``default``.

        ``default`` is for an attribute the device does not have or that has no value; a name
        the device has only under another domain raises AttributeNotFoundError. Type checkers
        see ``AttributeValue | None`` without a default and no None with one that is not None
        (``device.attribute("index", -1)``).

        Examples:
            >>> device = dra_metadata.Device(
            ...     driver="gpu.example.com", name="gpu-0", attributes={"gpu.example.com/index": 0}
            ... )
            >>> device.attribute("index"), device.attribute("uuid"), device.attribute("uuid", "")
            (0, None, '')
        """
        found = self.get_attribute(name)
        if found is None:
            return default
        value = found.value
        return default if value is None else value


PUBLIC_MODELS = (
    DeviceAttribute,
    AttributeMap,
    NetworkDeviceData,
    Device,
)
for _public in PUBLIC_MODELS:
    _public.__module__ = "dra_metadata"
