"""Version-agnostic, immutable models of DeviceMetadata and typed access to device attributes.

The models mirror the wire schema (field aliases are the JSON names) so that JSON Schemas can be
generated from them. Decoding builds them through `construct` without re-validating (the decoder
checks types itself, faster); users who build objects by hand get full pydantic validation.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, JsonValue
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import core_schema

from dra_metadata._errors import AttributeValueError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

Int64 = Annotated[int, Field(strict=True, ge=INT64_MIN, le=INT64_MAX)]
StrictStr = Annotated[str, Field(strict=True)]
StrictBool = Annotated[bool, Field(strict=True)]

AttributeValue = int | bool | str | tuple[int, ...] | tuple[bool, ...] | tuple[str, ...]
"""The plain Python value of a device attribute."""

_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)
_new_object = object.__new__
# The slot descriptors of BaseModel, called directly: faster than object.__setattr__.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_ALL_FIELDS: dict[type[BaseModel], set[str]] = {}


def construct(cls: type[_M], values: dict[str, Any]) -> _M:
    """Build a model from complete, already checked field values (every field present).

    The fast path of decoding: pydantic's own model_construct costs several times more.
    """
    instance = _new_object(cls)
    _set_dict(instance, values)
    fields_set = _ALL_FIELDS.get(cls)
    if fields_set is None:
        fields_set = _ALL_FIELDS[cls] = set(cls.__pydantic_fields__)
    # Shared per class: pydantic never mutates the set of a frozen model (copies copy it).
    _set_fields_set(instance, fields_set)
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
    )


class DeviceAttribute(_Model):
    """One attribute value. Exactly one member should be set; `value` returns it.

    Decoding is lenient like upstream: an attribute with no member or several members set still
    decodes (validation reports it); `value` then returns None or raises AttributeValueError.
    """

    int: Int64 | None = None
    bool: StrictBool | None = None
    string: StrictStr | None = None
    version: StrictStr | None = None
    ints: tuple[Int64, ...] = ()
    bools: tuple[StrictBool, ...] = ()
    strings: tuple[StrictStr, ...] = ()
    versions: tuple[StrictStr, ...] = ()

    @property
    def members(self) -> tuple[str, ...]:
        """Wire names of the members that are set (a list member counts when non-empty)."""
        values = self.__dict__
        return tuple(name for name in _ATTRIBUTE_MEMBERS if _member_is_set(values[name]))

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
        result: AttributeValue = self.__dict__[members[0]]
        return result


_ATTRIBUTE_MEMBERS = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
_EMPTY_ATTRIBUTE_FIELDS: dict[str, Any] = {
    "int": None,
    "bool": None,
    "string": None,
    "version": None,
    "ints": (),
    "bools": (),
    "strings": (),
    "versions": (),
}


def _member_is_set(value: object) -> builtins.bool:
    if isinstance(value, tuple):
        return bool(value)
    return value is not None


def attribute_from_checked_wire(raw: dict[str, Any] | None) -> DeviceAttribute:
    """A DeviceAttribute from a type-checked wire object (None and unknown keys allowed)."""
    values = dict(_EMPTY_ATTRIBUTE_FIELDS)
    if raw:
        for key, value in raw.items():
            if value is not None and key in values:
                values[key] = tuple(value) if type(value) is list else value
    return construct(DeviceAttribute, values)


class AttributeMap(Mapping[str, DeviceAttribute]):
    """Read-only mapping of qualified attribute name to DeviceAttribute, in file order.

    Decoded maps keep the checked wire objects and build each DeviceAttribute on first access,
    which keeps decoding of attribute-heavy files cheap.
    """

    __slots__ = ("_entries",)
    __hash__ = None  # type: ignore[assignment]
    __module__ = "dra_metadata"

    def __init__(self, entries: Mapping[str, DeviceAttribute] | None = None) -> None:
        checked: dict[str, Any] = {}
        for key, value in (entries or {}).items():
            if not isinstance(key, str) or not isinstance(value, DeviceAttribute):
                raise TypeError("AttributeMap maps str to DeviceAttribute")
            checked[key] = value
        self._entries = checked

    @staticmethod
    def from_checked_wire(raw: dict[str, Any]) -> AttributeMap:
        """Wrap a type-checked wire ``attributes`` object without building its values yet."""
        instance = _new_object(AttributeMap)
        _set_entries(instance, raw)
        return instance

    def __getitem__(self, key: str) -> DeviceAttribute:
        value = self._entries[key]
        if type(value) is not DeviceAttribute:
            value = attribute_from_checked_wire(value)
            self._entries[key] = value
        return value

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

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
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


_set_entries = AttributeMap.__dict__["_entries"].__set__


class NetworkDeviceData(_Model):
    """Network data of a device, often published later than the device itself."""

    interface_name: StrictStr = ""
    ips: tuple[StrictStr, ...] = ()
    hardware_address: StrictStr = ""


class Device(_Model):
    """One allocated device: who serves it, where it comes from, and what it looks like."""

    driver: StrictStr = ""
    pool: StrictStr = ""
    name: StrictStr = ""
    attributes: AttributeMap = Field(default_factory=AttributeMap)
    network_data: NetworkDeviceData | None = None

    def get_attribute(self, name: str) -> DeviceAttribute | None:
        """The attribute called ``name``; an unqualified name also finds ``<driver>/<name>``.

        Drivers may publish keys with or without their own domain, so ``model`` and
        ``gpu.example.com/model`` find the same attribute of a ``gpu.example.com`` device.
        """
        entries = self.attributes
        if name in entries:
            return entries[name]
        domain, separator, identifier = name.rpartition("/")
        if separator:
            if domain == self.driver and identifier in entries:
                return entries[identifier]
            return None
        qualified = f"{self.driver}/{name}"
        return entries.get(qualified, None)

    def attribute(self, name: str, default: _T | None = None) -> AttributeValue | _T | None:
        """The plain value of attribute ``name`` (see get_attribute), or ``default``."""
        found = self.get_attribute(name)
        if found is None:
            return default
        value = found.value
        return default if value is None else value


class DeviceMetadataRequest(_Model):
    """The devices allocated for one request (``<request>`` or ``<request>/<subrequest>``)."""

    name: StrictStr = ""
    devices: tuple[Device, ...] = ()

    @property
    def base_name(self) -> str:
        """The top-level request name (the part before '/')."""
        return self.name.partition("/")[0]

    @property
    def subrequest_name(self) -> str | None:
        """The subrequest chosen from a prioritized list, or None."""
        _, separator, subrequest = self.name.partition("/")
        return subrequest if separator else None


class OwnerReference(_Model):
    """An entry of ``metadata.ownerReferences`` (kept so that nothing in a file is lost)."""

    api_version: StrictStr = ""
    kind: StrictStr = ""
    name: StrictStr = ""
    uid: StrictStr = ""
    controller: StrictBool | None = None
    block_owner_deletion: StrictBool | None = None


class ManagedFieldsEntry(_Model):
    """An entry of ``metadata.managedFields`` (kept so that nothing in a file is lost)."""

    manager: StrictStr = ""
    operation: StrictStr = ""
    api_version: StrictStr = ""
    time: datetime | None = None
    fields_type: StrictStr = ""
    fields_v1: JsonValue | None = None
    subresource: StrictStr = ""


class ObjectMeta(_Model):
    """Kubernetes object metadata of the claim; drivers fill name, namespace, uid, generation."""

    name: StrictStr = ""
    generate_name: StrictStr = ""
    namespace: StrictStr = ""
    self_link: StrictStr = ""
    uid: StrictStr = ""
    resource_version: StrictStr = ""
    generation: Int64 = 0
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    deletion_grace_period_seconds: Int64 | None = None
    labels: Mapping[StrictStr, StrictStr] = Field(default_factory=dict)
    annotations: Mapping[StrictStr, StrictStr] = Field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    finalizers: tuple[StrictStr, ...] = ()
    managed_fields: tuple[ManagedFieldsEntry, ...] = ()


class DeviceMetadata(_Model):
    """What the drivers published for one request of a claim.

    `api_version` is the version the object was decoded from ("" for a merge of files in
    different versions or an object built by hand). `sources` lists the files it came from.
    """

    api_version: StrictStr = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    pod_claim_name: StrictStr | None = None
    requests: tuple[DeviceMetadataRequest, ...] = ()
    sources: SkipJsonSchema[tuple[MetadataSource, ...]] = Field(default=(), exclude=True)

    @property
    def name(self) -> str:
        """The claim's name (for a template claim: the generated name)."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The claim's namespace."""
        return self.metadata.namespace

    @property
    def uid(self) -> str:
        """The claim's UID."""
        return self.metadata.uid

    @property
    def generation(self) -> builtins.int:
        """Starts at 1 and grows with every update of a file (0 for a merge of several files)."""
        return self.metadata.generation

    @property
    def devices(self) -> tuple[Device, ...]:
        """Every device of every request, in order."""
        return tuple(device for request in self.requests for device in request.devices)

    def request(self, name: str) -> DeviceMetadataRequest | None:
        """The request called ``name`` (exact match, e.g. ``gpu/high-memory``), or None."""
        for request in self.requests:
            if request.name == name:
                return request
        return None


class MetadataSource(_Model):
    """One file that contributed to a DeviceMetadata: where it is, which driver, what it held."""

    path: Path | None = None
    driver: StrictStr | None = None
    metadata: DeviceMetadata
    skipped_versions: tuple[StrictStr, ...] = ()

    @property
    def api_version(self) -> str:
        """The version decoded from this file."""
        return self.metadata.api_version

    @property
    def generation(self) -> builtins.int:
        """This file's generation (compare generations per file, never across drivers)."""
        return self.metadata.generation


DeviceMetadata.model_rebuild()

for _public in (
    DeviceAttribute,
    NetworkDeviceData,
    Device,
    DeviceMetadataRequest,
    OwnerReference,
    ManagedFieldsEntry,
    ObjectMeta,
    DeviceMetadata,
    MetadataSource,
):
    _public.__module__ = "dra_metadata"
