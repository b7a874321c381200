"""Write metadata streams byte for byte as the upstream Go writer does (custom drivers, tests).

``encode_stream`` is the inverse of decoding: one object per requested API version, each
pretty-printed with two-space indentation in Go's key order and escaping, followed by a newline.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import orjson

from dra_metadata._models import (
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    ManagedFieldsEntry,
    NetworkDeviceData,
    ObjectMeta,
    OwnerReference,
    wire_attribute,
)
from dra_metadata._paths import StrPath, _check_name, _request_directory_name
from dra_metadata._read import DEFAULT_MAX_SIZE, read_metadata_file
from dra_metadata._versions import KIND, KNOWN_API_VERSIONS

__all__ = [
    "FILE_MODE",
    "HOST_METADATA_DIR_NAME",
    "HOST_METADATA_FILE_NAME",
    "WriteMode",
    "encode_stream",
    "host_metadata_file_path",
    "update_metadata_file",
    "write_metadata_file",
]

FILE_MODE = 0o644
"""Permissions of a metadata file, as the upstream writer sets them."""
HOST_METADATA_DIR_NAME = "dra-device-metadata"
"""Directory below a driver's plugin data directory that holds its metadata files."""
HOST_METADATA_FILE_NAME = "metadata.json"
"""On the host every request's file is called metadata.json (the driver is in the directory)."""

WriteMode = Literal["atomic", "in-place"]

# Go's encoder escapes these inside strings; in JSON text they can only occur inside strings.
_GO_ESCAPES = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def _check_versions(versions: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(versions)
    if not chosen:
        raise ValueError("metadata versions must be chosen explicitly: none given")
    for version in chosen:
        if version not in KNOWN_API_VERSIONS:
            raise ValueError(
                f"metadata version {version!r} is not supported; "
                f"known versions: {', '.join(KNOWN_API_VERSIONS)}"
            )
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"metadata versions must not repeat: {', '.join(chosen)}")
    return chosen


def _time(value: datetime) -> str:
    moment = (value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value).astimezone(
        timezone.utc
    )
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


def _sorted_map(values: Any) -> dict[str, Any]:
    return {key: values[key] for key in sorted(values)}


def _owner_reference(reference: OwnerReference) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "apiVersion": reference.api_version,
        "kind": reference.kind,
        "name": reference.name,
        "uid": reference.uid,
    }
    if reference.controller is not None:
        wire["controller"] = reference.controller
    if reference.block_owner_deletion is not None:
        wire["blockOwnerDeletion"] = reference.block_owner_deletion
    return wire


def _non_empty(*pairs: tuple[str, Any]) -> dict[str, Any]:
    """Go's ``omitempty`` for strings and integers: keep the pairs whose value is set."""
    return {key: value for key, value in pairs if value}


def _managed_fields_entry(entry: ManagedFieldsEntry) -> dict[str, Any]:
    wire = _non_empty(
        ("manager", entry.manager),
        ("operation", entry.operation),
        ("apiVersion", entry.api_version),
        ("time", None if entry.time is None else _time(entry.time)),
        ("fieldsType", entry.fields_type),
    )
    if entry.fields_v1 is not None:
        wire["fieldsV1"] = entry.fields_v1
    if entry.subresource:
        wire["subresource"] = entry.subresource
    return wire


def _object_meta(meta: ObjectMeta) -> dict[str, Any]:
    wire = _non_empty(
        ("name", meta.name),
        ("generateName", meta.generate_name),
        ("namespace", meta.namespace),
        ("selfLink", meta.self_link),
        ("uid", meta.uid),
        ("resourceVersion", meta.resource_version),
        ("generation", meta.generation),
    )
    optional: tuple[tuple[str, Any], ...] = (
        ("creationTimestamp", meta.creation_timestamp and _time(meta.creation_timestamp)),
        ("deletionTimestamp", meta.deletion_timestamp and _time(meta.deletion_timestamp)),
        ("deletionGracePeriodSeconds", meta.deletion_grace_period_seconds),
    )
    wire.update((key, value) for key, value in optional if value is not None)
    wire.update(
        _non_empty(
            ("labels", meta.labels and _sorted_map(meta.labels)),
            ("annotations", meta.annotations and _sorted_map(meta.annotations)),
            ("ownerReferences", [_owner_reference(item) for item in meta.owner_references]),
            ("finalizers", list(meta.finalizers)),
            ("managedFields", [_managed_fields_entry(item) for item in meta.managed_fields]),
        )
    )
    return wire


def _attributes(attributes: Mapping[str, DeviceAttribute]) -> dict[str, Any] | None:
    """The wire ``attributes`` object (None when empty): Go's map encoding sorts the keys.

    A decoded map whose every attribute the decoder found to hold one scalar member still
    holds the wire objects, which are already exactly what Go writes for them.
    """
    wire: dict[str, Any]
    if getattr(attributes, "one_scalar_member_each", False):
        wire = attributes._entries  # type: ignore[attr-defined]  # noqa: SLF001
    elif attributes:
        wire = {key: wire_attribute(attributes[key]) for key in attributes}
    else:
        return None
    keys = list(wire)
    ordered = sorted(keys)  # Timsort: one pass over keys a Go writer left sorted
    return wire if keys == ordered else {key: wire[key] for key in ordered}


def _network_data(data: NetworkDeviceData) -> dict[str, Any]:
    wire: dict[str, Any] = {}
    if data.interface_name:
        wire["interfaceName"] = data.interface_name
    if data.ips:
        wire["ips"] = list(data.ips)
    if data.hardware_address:
        wire["hardwareAddress"] = data.hardware_address
    return wire


def _device(device: Device) -> dict[str, Any]:
    wire: dict[str, Any] = {"driver": device.driver, "pool": device.pool, "name": device.name}
    attributes = _attributes(device.attributes)
    if attributes is not None:
        wire["attributes"] = attributes
    network_data = device.network_data
    if network_data is not None:
        wire["networkData"] = _network_data(network_data)
    return wire


def _request(request: DeviceMetadataRequest) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": request.name}
    if request.devices:
        wire["devices"] = [_device(device) for device in request.devices]
    return wire


def _body(metadata: DeviceMetadata) -> dict[str, Any]:
    body: dict[str, Any] = {"metadata": _object_meta(metadata.metadata)}
    if metadata.pod_claim_name is not None:
        body["podClaimName"] = metadata.pod_claim_name
    if metadata.requests:
        body["requests"] = [_request(request) for request in metadata.requests]
    return body


_HEAD = f'{{\n  "kind": "{KIND}",\n  "apiVersion": "'.encode()


def encode_stream(
    metadata: DeviceMetadata, *, versions: Iterable[str] = KNOWN_API_VERSIONS
) -> bytes:
    """The metadata stream the upstream writer produces: one object per version, in order.

    ``versions`` must be known API versions, each at most once; the newest should come first.
    The ``api_version`` and ``sources`` of ``metadata`` are ignored. No validation is done (as
    upstream): call dra_metadata.validate first if the data comes from elsewhere.
    """
    chosen = _check_versions(versions)
    encoded = orjson.dumps(
        {"kind": KIND, "apiVersion": "", **_body(metadata)}, option=orjson.OPT_INDENT_2
    )
    # Single-byte searches are memchr-fast; U+2028 and U+2029 both start with byte 0xe2.
    if b"<" in encoded or b">" in encoded or b"&" in encoded or b"\xe2" in encoded:
        for raw, escaped in _GO_ESCAPES:
            encoded = encoded.replace(raw, escaped)
    # The objects differ only in their apiVersion, the second key: encode once, splice.
    tail = memoryview(encoded)[len(_HEAD) :]
    parts: list[bytes | memoryview] = []
    for version in chosen:
        parts += (_HEAD, version.encode(), tail, b"\n")
    return b"".join(parts)


def host_metadata_file_path(
    plugin_data_dir: StrPath, namespace: str, claim_name: str, request_name: str
) -> Path:
    """Where a driver keeps a request's file on the node (what CDI mounts into containers).

    ``<plugin_data_dir>/dra-device-metadata/<namespace>_<claim_name>/<request>/metadata.json``,
    with the top-level request name (``gpu/high-memory`` -> ``gpu``).
    """
    claim_dir = f"{_check_name('namespace', namespace)}_{_check_name('claim_name', claim_name)}"
    request = _request_directory_name(request_name)
    return (
        Path(plugin_data_dir)
        / HOST_METADATA_DIR_NAME
        / claim_dir
        / request
        / HOST_METADATA_FILE_NAME
    )


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        try:
            _write_all(descriptor, data)
            os.fchmod(descriptor, FILE_MODE)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        temporary.replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
    _fsync_directory(path.parent)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


def _write_in_place(path: Path, data: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
    try:
        _write_all(descriptor, data)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_metadata_file(
    path: StrPath,
    metadata: DeviceMetadata,
    *,
    versions: Iterable[str] = KNOWN_API_VERSIONS,
    mode: WriteMode = "atomic",
) -> Path:
    """Write ``metadata`` as a stream to ``path``, creating parent directories (mode 0755).

    ``mode="atomic"`` (the beta writer): a temporary file in the same directory, fsync, mode
    0644, rename over the target, fsync the directory. Readers see the old or the new file,
    never a partial one, but a container's single-file bind mount keeps the old inode.
    ``mode="in-place"`` (the alpha writer): truncate and rewrite the same inode, which bind
    mounts follow, at the price of readers possibly seeing a partial file.
    """
    target = Path(path)
    data = encode_stream(metadata, versions=versions)
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    if mode == "atomic":
        _write_atomically(target, data)
    elif mode == "in-place":
        _write_in_place(target, data)
    else:
        raise ValueError(f"mode must be 'atomic' or 'in-place', not {mode!r}")
    return target


MetadataChange = Callable[[DeviceMetadata], DeviceMetadata] | Sequence[Device]


def update_metadata_file(
    path: StrPath,
    change: MetadataChange,
    *,
    versions: Iterable[str] | None = None,
    mode: WriteMode = "atomic",
    max_size: int = DEFAULT_MAX_SIZE,
) -> DeviceMetadata:
    """Apply ``change`` to the file's current object and write it back with generation + 1.

    ``change`` is either a function from the current DeviceMetadata to the new one, or a
    sequence of Devices that replaces the devices of the file's single request (what the
    upstream ``UpdateRequestMetadata`` does, e.g. once network data is known). ``versions``
    defaults to the known versions. Returns the object written.
    """
    current = read_metadata_file(path, max_size=max_size)
    if callable(change):
        updated = change(current)
        if not isinstance(updated, DeviceMetadata):
            raise TypeError(
                f"the change must return a DeviceMetadata, not {type(updated).__name__}"
            )
    else:
        if len(current.requests) != 1:
            raise ValueError(
                f"{path}: replacing devices needs a file with exactly one request, "
                f"found {len(current.requests)}; pass a function instead"
            )
        request = DeviceMetadataRequest(name=current.requests[0].name, devices=tuple(change))
        updated = replace(current, requests=(request,))
    meta = replace(updated.metadata, generation=current.generation + 1)
    result = replace(updated, metadata=meta, sources=())
    write_metadata_file(
        path, result, versions=KNOWN_API_VERSIONS if versions is None else versions, mode=mode
    )
    return result
