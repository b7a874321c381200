"""The top of the models: DeviceMetadata, its requests, its Kubernetes object metadata, and
the files it came from.

Split from ``_models`` (devices and attributes, and the checks every model shares), which this
module builds on. The wire form and the document of a DeviceMetadata are ``_export``'s, loaded
on first use.
"""

# No `from __future__ import annotations`: the annotations are evaluated here, at class
# creation, so that pydantic need not resolve names in the public module these classes report.

from collections.abc import Mapping, Sequence
from dataclasses import field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from dra_metadata._model._building import _PYDANTIC_CONFIG
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
from dra_metadata._model._models import Device
from dra_metadata._model._raw_json import json_equal, json_repr
from dra_metadata._model._repr import set_fields_repr

_store = object.__setattr__


@frozen_model
class DeviceMetadataRequest:
    """The devices allocated for one request (``<request>`` or ``<request>/<subrequest>``)."""

    name: str = ""
    """``gpu``, or ``gpu/high-memory`` for the subrequest chosen from a prioritized list."""
    devices: Sequence[Device] = ()
    """The request's devices, in the file's order; a tuple."""

    __pydantic_config__ = _PYDANTIC_CONFIG

    def __init__(self, name: str = "", devices: Sequence[Device] = ()) -> None:
        _store(self, "name", name)
        _store(self, "devices", devices)
        self.__post_init__()

    def __post_init__(self) -> None:
        _check(self, "name", str, "a str")
        _coerce_tuple(self, "devices", _instance_of(Device), "Devices")

    @property
    def base_name(self) -> str:
        """The top-level request name (the part before '/')."""
        return self.name.partition("/")[0]

    @property
    def subrequest_name(self) -> str | None:
        """The subrequest chosen from a prioritized list, or None."""
        _, separator, subrequest = self.name.partition("/")
        return subrequest if separator else None


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
    fields_v1: Any = field(default=None, hash=False)
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
        fields_v1: Any = None,
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


@frozen_model
class DeviceMetadata:
    """What the drivers published for one request of a claim.

    `api_version` is the version the object was decoded from ("" for a merge of files in
    different versions or an object built by hand). `sources` lists the files it came from; it
    takes no part in comparisons.
    """

    api_version: str = ""
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    pod_claim_name: str | None = None
    requests: Sequence[DeviceMetadataRequest] = ()
    sources: Sequence["MetadataSource"] = field(default=(), compare=False, repr=False)

    __pydantic_config__ = _PYDANTIC_CONFIG
    __repr__ = set_fields_repr

    def __init__(
        self,
        api_version: str = "",
        metadata: ObjectMeta = FACTORY,
        pod_claim_name: str | None = None,
        requests: Sequence[DeviceMetadataRequest] = (),
        sources: Sequence["MetadataSource"] = (),
    ) -> None:
        _store(self, "api_version", api_version)
        _store(self, "metadata", ObjectMeta() if metadata is FACTORY else metadata)
        _store(self, "pod_claim_name", pod_claim_name)
        _store(self, "requests", requests)
        _store(self, "sources", sources)
        self.__post_init__()

    def __post_init__(self) -> None:
        _check(self, "api_version", str, "a str")
        _check(self, "metadata", ObjectMeta, "an ObjectMeta")
        _check_optional(self, "pod_claim_name", str, "a str")
        _coerce_tuple(
            self, "requests", _instance_of(DeviceMetadataRequest), "DeviceMetadataRequests"
        )
        _coerce_tuple(self, "sources", _instance_of(MetadataSource), "MetadataSources")

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
    def generation(self) -> int:
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

    def to_wire(self, api_version: str | None = None) -> dict[str, Any]:
        """The wire object ``encode_stream`` writes, as a new dict for ``json.dumps``.

        In ``api_version`` (a known version), by default the version this object was decoded
        from, else the newest. Go's rules apply: empty fields are left out, attributes sorted.
        Raises MetadataEncodeError for a value JSON cannot hold (a lone surrogate, ...).
        """
        from dra_metadata._model._export import wire  # noqa: PLC0415 - loaded on first use

        return wire(self, api_version)

    def to_document(self) -> dict[str, Any]:
        """The stable document of ``dra-metadata show -o json``, as a new dict for ``json.dumps``.

        The claim's name, namespace, uid and pod claim name, every file behind this object
        (``files``: path, driver, apiVersion, generation, skippedVersions) and the requests with
        their devices in wire form, every key present (docs/reference/cli.md, "JSON documents").
        """
        from dra_metadata._model._export import document  # noqa: PLC0415 - loaded on first use

        return document(self)


@frozen_model
class MetadataSource:
    """One file that contributed to a DeviceMetadata: where it is, which driver, what it held.

    A merged read has no generation of its own (drivers number their files' updates
    independently); each source keeps its file's generation and whole object.
    """

    path: Path | None
    """The file; None for metadata that came from the Kubernetes API or from bytes."""
    driver: str | None
    """The driver, from the file name ``<driver>-metadata.json``; None if it does not say."""
    metadata: DeviceMetadata
    """The whole object decoded from this file."""
    skipped_versions: Sequence[str] = ()
    """Unknown API versions that preceded the decoded object, in stream order."""
    stale: bool = False
    """True when this view of the file is frozen: the driver replaced the file on the host
    (rename over it) and the container's bind mount still shows the old, unlinked file (its
    link count is 0). Restarting the container shows the new one."""

    __pydantic_config__ = _PYDANTIC_CONFIG

    def __init__(
        self,
        path: Path | None,
        driver: str | None,
        metadata: DeviceMetadata,
        skipped_versions: Sequence[str] = (),
        stale: bool = False,
    ) -> None:
        _store(self, "path", path)
        _store(self, "driver", driver)
        _store(self, "metadata", metadata)
        _store(self, "skipped_versions", skipped_versions)
        _store(self, "stale", stale)

    @property
    def api_version(self) -> str:
        """The version decoded from this file."""
        return self.metadata.api_version

    @property
    def generation(self) -> int:
        """This file's generation (compare generations per file, never across drivers)."""
        return self.metadata.generation


for _public in (
    DeviceMetadataRequest,
    OwnerReference,
    ManagedFieldsEntry,
    ObjectMeta,
    DeviceMetadata,
    MetadataSource,
):
    _public.__module__ = "dra_metadata"
