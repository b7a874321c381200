"""Version-agnostic, immutable models of devices, and typed access to their attributes.

The models are frozen, slotted standard-library dataclasses (made by ``_frozen.frozen_model``,
which compiles nothing at import) that mirror the wire schema. pydantic
understands them natively (field aliases come from ``__pydantic_config__``), which is how the JSON
Schemas in ``schemas/`` are generated, yet importing and decoding never load pydantic: its
BaseModel alone costs more import time than a whole ``dra-metadata show``, and building
BaseModels is several times slower than decoding needs to be.

Hand-built objects are checked and normalized in ``__post_init__`` (lists become tuples, dicts
become read-only mappings); the decoder checks wire data itself and builds objects through
`builder`, skipping those checks. Attributes and their map are ``_attributes``'s; this module
re-exports them for the layers above.
"""

# No `from __future__ import annotations`: the annotations are evaluated here, at class
# creation, so that pydantic need not resolve names in the public module these classes report.

from collections.abc import Mapping, Sequence
from dataclasses import field

from dra_metadata._model._attributes import (
    ATTRIBUTE_MEMBERS,
    AttributeInput,
    AttributeMap,
    AttributeValue,
    DeviceAttribute,
    _coerce_attributes,
    attribute_from_checked_wire,
    build_attribute,
    wire_attribute,
)
from dra_metadata._model._building import _PYDANTIC_CONFIG, camel, twin_of
from dra_metadata._model._checks import _check, _check_optional, _coerce_tuple, _is_str
from dra_metadata._model._errors import AttributeNotFoundError, shown_names
from dra_metadata._model._frozen import FACTORY, frozen_model
from dra_metadata._model._repr import set_fields_repr
from dra_metadata._model._semver import Version
from dra_metadata._model._typed_reads import member_of_type, typed_value

__all__ = [  # with what the layers above import from here, defined in _attributes, _building
    "ATTRIBUTE_MEMBERS",
    "PUBLIC_MODELS",
    "AttributeInput",
    "AttributeMap",
    "AttributeValue",
    "Device",
    "DeviceAttribute",
    "NetworkDeviceData",
    "attribute_from_checked_wire",
    "build_attribute",
    "build_device",
    "build_network_data",
    "camel",
    "wire_attribute",
]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, TypeVar, overload

    _T = TypeVar("_T")
_store = object.__setattr__


@frozen_model
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

    def __eq__(self, other: "Any") -> bool:  # noqa: PYI032 - checked just below
        # Written out, as __hash__: faster than what frozen_model makes (a test ties them).
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.interface_name, self.ips, self.hardware_address) == (
            other.interface_name,
            other.ips,
            other.hardware_address,
        )

    def __hash__(self) -> int:
        return hash((self.interface_name, self.ips, self.hardware_address))

    def __init__(
        self, interface_name: str = "", ips: Sequence[str] = (), hardware_address: str = ""
    ) -> None:
        _store(self, "interface_name", interface_name)
        _store(self, "ips", ips)
        _store(self, "hardware_address", hardware_address)
        self.__post_init__()

    def __post_init__(self) -> None:
        _check(self, "interface_name", str, "a str")
        _coerce_tuple(self, "ips", _is_str, "strs")
        _check(self, "hardware_address", str, "a str")


@frozen_model
class Device:
    """One allocated device: who serves it, where it comes from, and what it looks like."""

    driver: str = ""
    """The DRA driver that serves the device (``gpu.example.com``)."""
    pool: str = ""
    """The resource pool of the device in the driver's ResourceSlices (often the node)."""
    name: str = ""
    """The device's name within its pool (``gpu-0``)."""
    attributes: AttributeMap = field(default_factory=AttributeMap)
    """Qualified name -> attribute; always an AttributeMap (a read-only Mapping)."""
    network_data: NetworkDeviceData | None = None
    """None until the driver publishes network data for the device."""

    __pydantic_config__ = _PYDANTIC_CONFIG
    __repr__ = set_fields_repr

    def __eq__(self, other: "Any") -> bool:  # noqa: PYI032 - checked just below
        # Written out, as __hash__: faster than what frozen_model makes (a test ties them).
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.driver, self.pool, self.name, self.attributes, self.network_data) == (
            other.driver,
            other.pool,
            other.name,
            other.attributes,
            other.network_data,
        )

    def __hash__(self) -> int:
        return hash((self.driver, self.pool, self.name, self.attributes, self.network_data))

    def __init__(
        self,
        driver: str = "",
        pool: str = "",
        name: str = "",
        attributes: Mapping[str, AttributeInput] = FACTORY,  # plain values too
        network_data: NetworkDeviceData | None = None,
    ) -> None:
        _store(self, "driver", driver)
        _store(self, "pool", pool)
        _store(self, "name", name)
        _store(self, "attributes", AttributeMap() if attributes is FACTORY else attributes)
        _store(self, "network_data", network_data)
        self.__post_init__()

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
        found = self._find(name)
        return None if found is None else found[1]

    def _find(self, name: str) -> tuple[str, DeviceAttribute] | None:
        """The key and attribute that ``name`` finds (see get_attribute)."""
        entries = self.attributes
        if name in entries:
            return name, entries[name]
        domain, separator, identifier = name.rpartition("/")
        if separator:
            if domain == self.driver and identifier in entries:
                return identifier, entries[identifier]
            return None
        qualified = f"{self.driver}/{name}"
        if qualified in entries:
            return qualified, entries[qualified]
        elsewhere = tuple(key for key in entries if key.rpartition("/")[2] == name)
        if elsewhere:
            raise AttributeNotFoundError(
                f"device {self.name} ({self.driver}) has no attribute {name} (an "
                f"unqualified name finds {name} and {self.driver}/{name}); did you mean "
                f"{shown_names(elsewhere, ' or ')}?",
                name=name,
                suggestions=elsewhere,
            )
        return None

    if TYPE_CHECKING:
        # Without type=: the whole union of attribute values. With it: that type (see below).
        @overload
        def attribute(self, name: str, default: None = None) -> AttributeValue | None: ...
        @overload
        def attribute(self, name: str, default: _T) -> AttributeValue | _T: ...
        # bool before int and Version before str: each is a subclass of the other.
        @overload
        def attribute(
            self, name: str, default: None = None, *, type: type[bool]
        ) -> bool | None: ...
        @overload
        def attribute(self, name: str, default: _T, *, type: type[bool]) -> bool | _T: ...
        @overload
        def attribute(self, name: str, default: None = None, *, type: type[int]) -> int | None: ...
        @overload
        def attribute(self, name: str, default: _T, *, type: type[int]) -> int | _T: ...
        @overload
        def attribute(
            self, name: str, default: None = None, *, type: type[Version]
        ) -> Version | None: ...
        @overload
        def attribute(self, name: str, default: _T, *, type: type[Version]) -> Version | _T: ...
        @overload
        def attribute(self, name: str, default: None = None, *, type: type[str]) -> str | None: ...
        @overload
        def attribute(self, name: str, default: _T, *, type: type[str]) -> str | _T: ...
        @overload
        def attribute(
            self, name: str, default: None = None, *, type: type[tuple[bool, ...]]
        ) -> tuple[bool, ...] | None: ...
        @overload
        def attribute(
            self, name: str, default: _T, *, type: type[tuple[bool, ...]]
        ) -> tuple[bool, ...] | _T: ...
        @overload
        def attribute(
            self, name: str, default: None = None, *, type: type[tuple[int, ...]]
        ) -> tuple[int, ...] | None: ...
        @overload
        def attribute(
            self, name: str, default: _T, *, type: type[tuple[int, ...]]
        ) -> tuple[int, ...] | _T: ...
        @overload
        def attribute(
            self, name: str, default: None = None, *, type: type[tuple[Version, ...]]
        ) -> tuple[Version, ...] | None: ...
        @overload
        def attribute(
            self, name: str, default: _T, *, type: type[tuple[Version, ...]]
        ) -> tuple[Version, ...] | _T: ...
        @overload
        def attribute(
            self, name: str, default: None = None, *, type: type[tuple[str, ...]]
        ) -> tuple[str, ...] | None: ...
        @overload
        def attribute(
            self, name: str, default: _T, *, type: type[tuple[str, ...]]
        ) -> tuple[str, ...] | _T: ...

    def attribute(
        self,
        name: str,
        default: "Any" = None,
        *,
        type: "Any" = None,  # noqa: A002 - the name users know from dict.get-like APIs
    ) -> "Any":
        """The plain value of attribute ``name`` (see get_attribute), or ``default``.

        ``default`` is for an attribute the device does not have or that has no value; a name
        the device has only under another domain raises AttributeNotFoundError. Type checkers
        see ``AttributeValue | None`` without a default and no None with one that is not None
        (``device.attribute("index", -1)``). A ``version`` attribute's value is a `Version`.

        With ``type``, the attribute must hold that type's member, and type checkers see that
        type: ``int`` (an ``int`` attribute), ``bool``, ``str`` (``string``), ``Version``
        (``version``), and the list forms as the tuples they are returned as,
        ``tuple[int, ...]`` (``ints``), ``tuple[bool, ...]``, ``tuple[str, ...]``,
        ``tuple[Version, ...]``. Members are never converted: a ``string`` "3" is not an int,
        a ``version`` is not read by ``type=str`` (read it with ``type=Version``, a str).

        Raises:
            AttributeValueError: with ``type``, the attribute holds another member (its
                ``.name`` and ``.kind`` say which attribute and what it holds), several
                members, or a version that is not a semantic version.
            AttributeNotFoundError: the device has ``name`` only under another domain.
            TypeError: ``type`` is none of the types above.

        Examples:
            >>> device = dra_metadata.Device(
            ...     driver="gpu.example.com", name="gpu-0", attributes={"gpu.example.com/index": 0}
            ... )
            >>> device.attribute("index"), device.attribute("uuid"), device.attribute("uuid", "")
            (0, None, '')
            >>> index: int = device.attribute("index", -1, type=int)
            >>> try:
            ...     device.attribute("index", type=str)
            ... except dra_metadata.AttributeValueError as error:
            ...     print(error.name, "holds", error.kind)
            gpu.example.com/index holds int
        """
        if type is None:
            found = self.get_attribute(name)
            if found is None:
                return default
            value = found.value
            return default if value is None else value
        member = member_of_type(type)
        entry = self._find(name)
        if entry is None:
            return default
        typed = typed_value(f"device {self.name} ({self.driver})", *entry, member)
        return default if typed is None else typed


_NetworkDeviceDataTwin = twin_of(NetworkDeviceData)


def build_network_data(
    interface_name: str,
    ips: Sequence[str],
    hardware_address: str,
) -> NetworkDeviceData:
    """A NetworkDeviceData of values the decoder has checked: each field, in order, unchecked."""
    instance = _NetworkDeviceDataTwin()
    instance.interface_name = interface_name
    instance.ips = ips
    instance.hardware_address = hardware_address
    instance.__class__ = NetworkDeviceData
    return instance  # type: ignore[no-any-return]


_DeviceTwin = twin_of(Device)


def build_device(
    driver: str,
    pool: str,
    name: str,
    attributes: Mapping[str, DeviceAttribute],
    network_data: NetworkDeviceData | None,
) -> Device:
    """A Device of values the decoder has checked: each field, in order, unchecked."""
    instance = _DeviceTwin()
    instance.driver = driver
    instance.pool = pool
    instance.name = name
    instance.attributes = attributes
    instance.network_data = network_data
    instance.__class__ = Device
    return instance  # type: ignore[no-any-return]


PUBLIC_MODELS = (
    DeviceAttribute,
    AttributeMap,
    NetworkDeviceData,
    Device,
)
for _public in PUBLIC_MODELS:
    _public.__module__ = "dra_metadata"
