"""The top of the models: DeviceMetadata, its requests, and the files it came from.

Built on ``_models`` (devices and attributes, and the checks every model shares) and
``_object_meta`` (the claim's Kubernetes object metadata, re-exported here). The wire form and
the document of a DeviceMetadata are ``_export``'s, loaded on first use.
"""

# No `from __future__ import annotations`: the annotations are evaluated here, at class
# creation, so that pydantic need not resolve names in the public module these classes report.

from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from dra_metadata._model._building import _PYDANTIC_CONFIG, twin_of
from dra_metadata._model._checks import (
    _check,
    _check_optional,
    _coerce_tuple,
    _instance_of,
)
from dra_metadata._model._frozen import FACTORY, frozen_model
from dra_metadata._model._models import Device
from dra_metadata._model._object_meta import ManagedFieldsEntry, ObjectMeta, OwnerReference
from dra_metadata._model._repr import set_fields_repr

__all__ = [  # with the models of _object_meta, which the layers above import from here
    "DeviceMetadata",
    "DeviceMetadataRequest",
    "ManagedFieldsEntry",
    "MetadataSource",
    "ObjectMeta",
    "OwnerReference",
    "build_metadata",
    "build_request",
]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

_store = object.__setattr__


@frozen_model
class DeviceMetadataRequest:
    """The devices allocated for one request (``<request>`` or ``<request>/<subrequest>``)."""

    name: str = ""
    """``gpu``, or ``gpu/high-memory`` for the subrequest chosen from a prioritized list."""
    devices: Sequence[Device] = ()
    """The request's devices, in the file's order; a tuple."""

    __pydantic_config__ = _PYDANTIC_CONFIG

    def __eq__(self, other: "Any") -> bool:  # noqa: PYI032 - checked just below
        # Written out, as __hash__: faster than what frozen_model makes (a test ties them).
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.name, self.devices) == (other.name, other.devices)

    def __hash__(self) -> int:
        return hash((self.name, self.devices))

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

    def __eq__(self, other: "Any") -> bool:  # noqa: PYI032 - checked just below
        # Written out, as __hash__: faster than what frozen_model makes (a test ties them).
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.api_version, self.metadata, self.pod_claim_name, self.requests) == (
            other.api_version,
            other.metadata,
            other.pod_claim_name,
            other.requests,
        )

    def __hash__(self) -> int:
        return hash((self.api_version, self.metadata, self.pod_claim_name, self.requests))

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

    def to_wire(self, api_version: str | None = None) -> "dict[str, Any]":
        """The wire object ``encode_stream`` writes, as a new dict for ``json.dumps``.

        In ``api_version`` (a known version), by default the version this object was decoded
        from, else the newest. Go's rules apply: empty fields are left out, attributes sorted.
        Raises MetadataEncodeError for a value JSON cannot hold (a lone surrogate, ...).
        """
        from dra_metadata._model._export import wire  # noqa: PLC0415 - loaded on first use

        return wire(self, api_version)

    def to_document(self) -> "dict[str, Any]":
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


_DeviceMetadataRequestTwin = twin_of(DeviceMetadataRequest)


def build_request(name: str, devices: Sequence[Device]) -> DeviceMetadataRequest:
    """A DeviceMetadataRequest of values the decoder has checked: each field, unchecked."""
    instance = _DeviceMetadataRequestTwin()
    instance.name = name
    instance.devices = devices
    instance.__class__ = DeviceMetadataRequest
    return instance  # type: ignore[no-any-return]


_DeviceMetadataTwin = twin_of(DeviceMetadata)


def build_metadata(
    api_version: str,
    metadata: ObjectMeta,
    pod_claim_name: str | None,
    requests: Sequence[DeviceMetadataRequest],
    sources: Sequence["MetadataSource"],
) -> DeviceMetadata:
    """A DeviceMetadata of values the decoder has checked: each field, in order, unchecked."""
    instance = _DeviceMetadataTwin()
    instance.api_version = api_version
    instance.metadata = metadata
    instance.pod_claim_name = pod_claim_name
    instance.requests = requests
    instance.sources = sources
    instance.__class__ = DeviceMetadata
    return instance  # type: ignore[no-any-return]


for _public in (DeviceMetadataRequest, DeviceMetadata, MetadataSource):
    _public.__module__ = "dra_metadata"
