"""The Kubernetes object metadata of a claim (ObjectMeta) and its entries, kept whole.

Split from ``_metadata`` (DeviceMetadata and its requests), which builds on it: drivers fill only
name, namespace, uid and generation, but nothing a file holds is lost.
"""

# No `from __future__ import annotations`: the annotations are evaluated here, at class
# creation, so that pydantic need not resolve names in the public module these classes report.

from collections.abc import Mapping, Sequence
from dataclasses import field, fields
from datetime import datetime

from dra_metadata._model._building import _PYDANTIC_CONFIG, twin_of
from dra_metadata._model._checks import (
    _check,
    _check_int64,
    _check_optional,
    _coerce_str_map,
    _coerce_tuple,
    _instance_of,
    _is_str,
)
from dra_metadata._model._frozen import FACTORY, frozen_model
from dra_metadata._model._raw_json import json_equal, json_repr
from dra_metadata._model._repr import set_fields_repr

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

_store = object.__setattr__


@frozen_model
class OwnerReference:
    """An entry of ``metadata.ownerReferences`` (kept so that nothing in a file is lost)."""

    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None

    __pydantic_config__ = _PYDANTIC_CONFIG
    __repr__ = set_fields_repr

    def __init__(
        self,
        api_version: str = "",
        kind: str = "",
        name: str = "",
        uid: str = "",
        controller: bool | None = None,
        block_owner_deletion: bool | None = None,
    ) -> None:
        _store(self, "api_version", api_version)
        _store(self, "kind", kind)
        _store(self, "name", name)
        _store(self, "uid", uid)
        _store(self, "controller", controller)
        _store(self, "block_owner_deletion", block_owner_deletion)
        self.__post_init__()

    def __post_init__(self) -> None:
        for name in ("api_version", "kind", "name", "uid"):
            _check(self, name, str, "a str")
        _check_optional(self, "controller", bool, "a bool")
        _check_optional(self, "block_owner_deletion", bool, "a bool")


@frozen_model
class ManagedFieldsEntry:
    """An entry of ``metadata.managedFields`` (kept so that nothing in a file is lost)."""

    manager: str = ""
    operation: str = ""
    api_version: str = ""
    time: datetime | None = None
    fields_type: str = ""
    fields_v1: object = field(default=None, hash=False)
    """The raw JSON value (usually an object), or None when absent. It takes part in
    comparisons (at any depth) but not in the hash, since dicts and lists have none."""
    subresource: str = ""

    __pydantic_config__ = _PYDANTIC_CONFIG

    def __init__(
        self,
        manager: str = "",
        operation: str = "",
        api_version: str = "",
        time: datetime | None = None,
        fields_type: str = "",
        fields_v1: object = None,
        subresource: str = "",
    ) -> None:
        _store(self, "manager", manager)
        _store(self, "operation", operation)
        _store(self, "api_version", api_version)
        _store(self, "time", time)
        _store(self, "fields_type", fields_type)
        _store(self, "fields_v1", fields_v1)
        _store(self, "subresource", subresource)
        self.__post_init__()

    def __repr__(self) -> str:
        # fieldsV1 may nest deeper than ``repr`` of dicts can recurse: shown without recursion.
        return set_fields_repr(self, {"fields_v1": json_repr})

    def __post_init__(self) -> None:
        for name in ("manager", "operation", "api_version", "fields_type", "subresource"):
            _check(self, name, str, "a str")
        _check_optional(self, "time", datetime, "a datetime")

    def __hash__(self) -> int:
        return hash(
            tuple(
                getattr(self, name) for name in _MANAGED_FIELDS_ENTRY_FIELDS if name != "fields_v1"
            )
        )

    def __eq__(self, other: object) -> bool:
        # fieldsV1 may nest deeper than ``==`` on dicts can recurse: compared without recursion.
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(
            json_equal(getattr(self, name), getattr(other, name))
            if name == "fields_v1"
            else getattr(self, name) == getattr(other, name)
            for name in _MANAGED_FIELDS_ENTRY_FIELDS
        )


@frozen_model
class ObjectMeta:
    """Kubernetes object metadata of the claim; drivers fill name, namespace, uid, generation."""

    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    self_link: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    deletion_grace_period_seconds: int | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    owner_references: Sequence[OwnerReference] = ()
    finalizers: Sequence[str] = ()
    managed_fields: Sequence[ManagedFieldsEntry] = ()

    __pydantic_config__ = _PYDANTIC_CONFIG
    __repr__ = set_fields_repr

    def __eq__(self, other: "Any") -> bool:  # noqa: PYI032 - checked just below
        # Written out, as __hash__: faster than what frozen_model makes (a test ties them).
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (
            self.name,
            self.generate_name,
            self.namespace,
            self.self_link,
            self.uid,
            self.resource_version,
            self.generation,
            self.creation_timestamp,
            self.deletion_timestamp,
            self.deletion_grace_period_seconds,
            self.labels,
            self.annotations,
            self.owner_references,
            self.finalizers,
            self.managed_fields,
        ) == (
            other.name,
            other.generate_name,
            other.namespace,
            other.self_link,
            other.uid,
            other.resource_version,
            other.generation,
            other.creation_timestamp,
            other.deletion_timestamp,
            other.deletion_grace_period_seconds,
            other.labels,
            other.annotations,
            other.owner_references,
            other.finalizers,
            other.managed_fields,
        )

    def __init__(  # noqa: PLR0913, PLR0917 - one argument per field, as dataclass writes it
        self,
        name: str = "",
        generate_name: str = "",
        namespace: str = "",
        self_link: str = "",
        uid: str = "",
        resource_version: str = "",
        generation: int = 0,
        creation_timestamp: datetime | None = None,
        deletion_timestamp: datetime | None = None,
        deletion_grace_period_seconds: int | None = None,
        labels: Mapping[str, str] = FACTORY,
        annotations: Mapping[str, str] = FACTORY,
        owner_references: Sequence[OwnerReference] = (),
        finalizers: Sequence[str] = (),
        managed_fields: Sequence[ManagedFieldsEntry] = (),
    ) -> None:
        _store(self, "name", name)
        _store(self, "generate_name", generate_name)
        _store(self, "namespace", namespace)
        _store(self, "self_link", self_link)
        _store(self, "uid", uid)
        _store(self, "resource_version", resource_version)
        _store(self, "generation", generation)
        _store(self, "creation_timestamp", creation_timestamp)
        _store(self, "deletion_timestamp", deletion_timestamp)
        _store(self, "deletion_grace_period_seconds", deletion_grace_period_seconds)
        _store(self, "labels", {} if labels is FACTORY else labels)
        _store(self, "annotations", {} if annotations is FACTORY else annotations)
        _store(self, "owner_references", owner_references)
        _store(self, "finalizers", finalizers)
        _store(self, "managed_fields", managed_fields)
        self.__post_init__()

    def __hash__(self) -> int:
        # Labels and annotations are dicts, which have no hash: hashed as sets of their items.
        return hash(
            tuple(
                frozenset(value.items()) if isinstance(value, Mapping) else value
                for value in map(self.__getattribute__, _OBJECT_META_FIELDS)
            )
        )

    def __post_init__(self) -> None:
        for name in ("name", "generate_name", "namespace", "self_link", "uid", "resource_version"):
            _check(self, name, str, "a str")
        _check_int64(self, "generation")
        _check_optional(self, "creation_timestamp", datetime, "a datetime")
        _check_optional(self, "deletion_timestamp", datetime, "a datetime")
        _check_int64(self, "deletion_grace_period_seconds", optional=True)
        _coerce_str_map(self, "labels")
        _coerce_str_map(self, "annotations")
        _coerce_tuple(self, "owner_references", _instance_of(OwnerReference), "OwnerReferences")
        _coerce_tuple(self, "finalizers", _is_str, "strs")
        _coerce_tuple(
            self, "managed_fields", _instance_of(ManagedFieldsEntry), "ManagedFieldsEntries"
        )


_MANAGED_FIELDS_ENTRY_FIELDS = tuple(item.name for item in fields(ManagedFieldsEntry))
_OBJECT_META_FIELDS = tuple(item.name for item in fields(ObjectMeta))


_OwnerReferenceTwin = twin_of(OwnerReference)


def build_owner_reference(
    api_version: str,
    kind: str,
    name: str,
    uid: str,
    controller: bool | None,
    block_owner_deletion: bool | None,
) -> OwnerReference:
    """An OwnerReference of values the decoder has checked: each field, in order, unchecked."""
    instance = _OwnerReferenceTwin()
    instance.api_version = api_version
    instance.kind = kind
    instance.name = name
    instance.uid = uid
    instance.controller = controller
    instance.block_owner_deletion = block_owner_deletion
    instance.__class__ = OwnerReference
    return instance  # type: ignore[no-any-return]


_ManagedFieldsEntryTwin = twin_of(ManagedFieldsEntry)


def build_managed_fields_entry(
    manager: str,
    operation: str,
    api_version: str,
    time: datetime | None,
    fields_type: str,
    fields_v1: object,
    subresource: str,
) -> ManagedFieldsEntry:
    """A ManagedFieldsEntry of values the decoder has checked: each field, in order, unchecked."""
    instance = _ManagedFieldsEntryTwin()
    instance.manager = manager
    instance.operation = operation
    instance.api_version = api_version
    instance.time = time
    instance.fields_type = fields_type
    instance.fields_v1 = fields_v1
    instance.subresource = subresource
    instance.__class__ = ManagedFieldsEntry
    return instance  # type: ignore[no-any-return]


_ObjectMetaTwin = twin_of(ObjectMeta)


def build_object_meta(  # noqa: PLR0913, PLR0917 - one argument per field
    name: str,
    generate_name: str,
    namespace: str,
    self_link: str,
    uid: str,
    resource_version: str,
    generation: int,
    creation_timestamp: datetime | None,
    deletion_timestamp: datetime | None,
    deletion_grace_period_seconds: int | None,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    owner_references: Sequence[OwnerReference],
    finalizers: Sequence[str],
    managed_fields: Sequence[ManagedFieldsEntry],
) -> ObjectMeta:
    """An ObjectMeta of values the decoder has checked: each field, in order, unchecked."""
    instance = _ObjectMetaTwin()
    instance.name = name
    instance.generate_name = generate_name
    instance.namespace = namespace
    instance.self_link = self_link
    instance.uid = uid
    instance.resource_version = resource_version
    instance.generation = generation
    instance.creation_timestamp = creation_timestamp
    instance.deletion_timestamp = deletion_timestamp
    instance.deletion_grace_period_seconds = deletion_grace_period_seconds
    instance.labels = labels
    instance.annotations = annotations
    instance.owner_references = owner_references
    instance.finalizers = finalizers
    instance.managed_fields = managed_fields
    instance.__class__ = ObjectMeta
    return instance  # type: ignore[no-any-return]


for _public in (OwnerReference, ManagedFieldsEntry, ObjectMeta):
    _public.__module__ = "dra_metadata"
