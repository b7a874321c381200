"""Write metadata streams byte for byte as the upstream Go writer does (custom drivers, tests).

``encode_stream`` is the inverse of decoding: one object per requested API version, each
pretty-printed with two-space indentation in Go's key order and escaping, followed by a newline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import orjson

from dra_metadata._model._errors import MetadataEncodeError
from dra_metadata._model._models import (
    AttributeMap,
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
    wire_attribute,
)
from dra_metadata._model._versions import KIND, KNOWN_API_VERSIONS
from dra_metadata._reading._paths import (
    StrPath,
    _check_name,
    _request_directory_name,
    check_file_name_length,
)
from dra_metadata._reading._read import DEFAULT_MAX_SIZE, read_metadata_file
from dra_metadata._writing._write import FILE_MODE, Directory, WriteMode, check_mode

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

HOST_METADATA_DIR_NAME = "dra-device-metadata"
"""Directory below a driver's plugin data directory that holds its metadata files."""
HOST_METADATA_FILE_NAME = "metadata.json"
"""On the host every request's file is called metadata.json (the driver is in the directory)."""

# Go's encoder escapes these inside strings; in JSON text they can only occur inside strings.
_GO_ESCAPES = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def _check_versions(versions: Iterable[str]) -> tuple[str, ...]:
    if isinstance(versions, str):
        raise TypeError(f"versions must be a sequence of API versions, not a str: [{versions!r}]?")
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


def _managed_fields_entry(entry: ManagedFieldsEntry) -> dict[str, Any]:
    wire = _non_empty(
        {
            "manager": entry.manager,
            "operation": entry.operation,
            "apiVersion": entry.api_version,
            "time": None if entry.time is None else _time(entry.time),
            "fieldsType": entry.fields_type,
        }
    )
    if entry.fields_v1 is not None:
        wire["fieldsV1"] = entry.fields_v1
    if entry.subresource:
        wire["subresource"] = entry.subresource
    return wire


def _non_empty(wire: dict[str, Any]) -> dict[str, Any]:
    """Go's ``omitempty`` for strings, integers and collections: drop the empty values."""
    return {key: value for key, value in wire.items() if value}


def _object_meta(meta: ObjectMeta) -> dict[str, Any]:  # noqa: C901
    """Go's ObjectMeta: empty strings, integers and collections are omitted, and so are the
    timestamps and the grace period when unset."""
    # One test per field: less than half the time of filtering a dict of all of them.
    wire: dict[str, Any] = {}
    if meta.name:
        wire["name"] = meta.name
    if meta.generate_name:
        wire["generateName"] = meta.generate_name
    if meta.namespace:
        wire["namespace"] = meta.namespace
    if meta.self_link:
        wire["selfLink"] = meta.self_link
    if meta.uid:
        wire["uid"] = meta.uid
    if meta.resource_version:
        wire["resourceVersion"] = meta.resource_version
    if meta.generation:
        wire["generation"] = meta.generation
    if meta.creation_timestamp is not None:
        wire["creationTimestamp"] = _time(meta.creation_timestamp)
    if meta.deletion_timestamp is not None:
        wire["deletionTimestamp"] = _time(meta.deletion_timestamp)
    if meta.deletion_grace_period_seconds is not None:
        wire["deletionGracePeriodSeconds"] = meta.deletion_grace_period_seconds
    if (
        meta.labels
        or meta.annotations
        or meta.owner_references
        or meta.finalizers
        or meta.managed_fields
    ):
        wire.update(_object_meta_collections(meta))
    return wire


def _object_meta_collections(meta: ObjectMeta) -> dict[str, Any]:
    return _non_empty(
        {
            "labels": _sorted_map(meta.labels),
            "annotations": _sorted_map(meta.annotations),
            "ownerReferences": [_owner_reference(item) for item in meta.owner_references],
            "finalizers": list(meta.finalizers),
            "managedFields": [_managed_fields_entry(item) for item in meta.managed_fields],
        }
    )


def _wire_attributes(attributes: AttributeMap) -> dict[str, Any]:
    """Go's wire objects of a map built by hand (or decoded with lists or nulls), sorted."""
    entries = attributes._entries  # noqa: SLF001
    names = sorted(entries)
    if entries and isinstance(entries[names[0]], DeviceAttribute):  # built by hand: all are
        return {name: wire_attribute(entries[name]) for name in names}
    return {name: wire_attribute(attributes[name]) for name in names}


def _devices(devices: Sequence[Device]) -> list[dict[str, Any]]:
    wires = []
    # The devices of one driver usually share their attribute names, which a Go writer left
    # sorted: once one device's names were found sorted, a list comparison checks the next.
    sorted_names: list[str] | None = None
    for device in devices:
        wire: dict[str, Any] = {"driver": device.driver, "pool": device.pool, "name": device.name}
        attributes: AttributeMap = device.attributes  # type: ignore[assignment]
        try:
            wire_objects_as_go_writes = attributes.one_scalar_member_each
        except AttributeError:
            wire_objects_as_go_writes = False
        # A decoded map whose every attribute the decoder found to hold one scalar member
        # still holds the wire objects, which are already exactly what Go writes for them.
        entries = (
            attributes._entries  # noqa: SLF001
            if wire_objects_as_go_writes
            else _wire_attributes(attributes)
        )
        if entries:
            names = list(entries)
            if names != sorted_names:
                ordered = sorted(names)  # Timsort: a single pass over sorted names
                if names == ordered:
                    sorted_names = names
                else:
                    entries = {name: entries[name] for name in ordered}
            wire["attributes"] = entries
        network_data = device.network_data
        if network_data is not None:
            network: dict[str, Any] = {}  # Go omits each member when empty
            if network_data.interface_name:
                network["interfaceName"] = network_data.interface_name
            if network_data.ips:
                network["ips"] = network_data.ips  # a tuple, which orjson writes as an array
            if network_data.hardware_address:
                network["hardwareAddress"] = network_data.hardware_address
            wire["networkData"] = network
        wires.append(wire)
    return wires


def _request(request: DeviceMetadataRequest) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": request.name}
    if request.devices:
        wire["devices"] = _devices(request.devices)
    return wire


def _wire_object(metadata: DeviceMetadata, api_version: str) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "kind": KIND,
        "apiVersion": api_version,
        "metadata": _object_meta(metadata.metadata),
    }
    if metadata.pod_claim_name is not None:
        wire["podClaimName"] = metadata.pod_claim_name
    if metadata.requests:
        wire["requests"] = [_request(request) for request in metadata.requests]
    return wire


def _wire_dict(metadata: DeviceMetadata, api_version: str) -> dict[str, Any]:
    """The object ``encode_stream`` writes for ``api_version``, as new dicts, lists and scalars.

    For DeviceMetadata.to_wire: a copy (nothing of it is shared with ``metadata``) that the
    standard library's json module can write; raises what encode_stream raises.
    """
    (version,) = _check_versions((api_version,))
    wire = _wire_object(metadata, version)
    try:
        copy: dict[str, Any] = orjson.loads(orjson.dumps(wire))
    except orjson.JSONEncodeError:
        raise MetadataEncodeError(*_locate_unencodable(wire, "", "struct")) from None
    return copy


# How each object starts, up to the end of its apiVersion value (Go's key order: kind first).
_HEADS = {
    version: f'{{\n  "kind": "{KIND}",\n  "apiVersion": "{version}'.encode()
    for version in KNOWN_API_VERSIONS
}
_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def encode_stream(
    metadata: DeviceMetadata, *, versions: Iterable[str] = KNOWN_API_VERSIONS
) -> bytes:
    """The metadata stream the upstream writer produces: one object per version, in order.

    ``versions`` must be known API versions, each at most once; the newest should come first.
    The ``api_version`` and ``sources`` of ``metadata`` are ignored. No validation is done (as
    upstream): call dra_metadata.validate first if the data comes from elsewhere.
    """
    if not isinstance(metadata, DeviceMetadata):
        raise TypeError(f"metadata must be a DeviceMetadata, not {type(metadata).__name__}")
    chosen = KNOWN_API_VERSIONS if versions is KNOWN_API_VERSIONS else _check_versions(versions)
    first = chosen[0]
    wire = _wire_object(metadata, first)
    try:
        encoded = orjson.dumps(wire, option=_OPTIONS)
    except orjson.JSONEncodeError:
        raise MetadataEncodeError(*_locate_unencodable(wire, "", "struct")) from None
    # Single-byte searches are memchr-fast; U+2028 and U+2029 both start with byte 0xe2.
    find = encoded.find
    if find(b"<") >= 0 or find(b">") >= 0 or find(b"&") >= 0 or find(b"\xe2") >= 0:
        for raw, escaped in _GO_ESCAPES:
            encoded = encoded.replace(raw, escaped)
    if len(chosen) == 1:
        return encoded
    # The objects differ only in their apiVersion, the second key: encode once, splice.
    tail = memoryview(encoded)[len(_HEADS[first]) :]
    parts: list[bytes | memoryview] = [encoded]
    for version in chosen[1:]:
        parts += (_HEADS[version], tail)
    return b"".join(parts)


# Under these keys of a Go struct are maps, whose keys are data, and (fieldsV1) raw JSON.
_MAP_FIELDS = frozenset({"labels", "annotations", "attributes"})
_RAW_JSON_FIELDS = frozenset({"fieldsV1"})
_Layout = Literal["struct", "map", "json"]


def _why_unencodable(value: Any) -> str:
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError as error:
        return str(error)
    return ""


def _locate_unencodable(value: Any, path: str, layout: _Layout) -> tuple[str, str]:
    """The wire path of the innermost part of ``value`` that orjson cannot write, and why.

    Only called after a failure, so walking the object part by part costs nothing otherwise.
    """
    if isinstance(value, dict):
        for key, item in value.items():
            shown = _printable(key)
            item_path = (
                (f"{path}.{shown}" if path else shown) if layout == "struct" else f"{path}[{shown}]"
            )
            key_problem = _why_unencodable({key: None})
            if key_problem:
                return item_path, f"its key: {key_problem}"
            if _why_unencodable(item):
                return _locate_unencodable(item, item_path, _inner_layout(layout, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if _why_unencodable(item):
                return _locate_unencodable(item, f"{path}[{index}]", layout)
    return path or "the object", _why_unencodable(value)


def _inner_layout(layout: _Layout, key: object) -> _Layout:
    if layout == "struct":
        if key in _RAW_JSON_FIELDS:
            return "json"
        return "map" if key in _MAP_FIELDS else "struct"
    return "struct" if layout == "map" else "json"  # a map's values are structs (attributes)


def _printable(key: object) -> str:
    """A key as it can be shown in a message (lone surrogates escaped, not printed)."""
    if isinstance(key, str):
        return key.encode("utf-8", "backslashreplace").decode("utf-8")
    return repr(key)


def host_metadata_file_path(
    plugin_data_dir: StrPath, namespace: str, claim_name: str, request_name: str
) -> Path:
    """Where a driver keeps a request's file on the node (what CDI mounts into containers).

    ``<plugin_data_dir>/dra-device-metadata/<namespace>_<claim_name>/<request>/metadata.json``,
    with the top-level request name (``gpu/high-memory`` -> ``gpu``).
    """
    claim_dir = check_file_name_length(
        "claim_name",
        claim_name,
        f"{_check_name('namespace', namespace)}_{_check_name('claim_name', claim_name)}",
        "the directory name <namespace>_<claim_name>",
    )
    request = _request_directory_name(request_name)
    return (
        Path(plugin_data_dir)
        / HOST_METADATA_DIR_NAME
        / claim_dir
        / request
        / HOST_METADATA_FILE_NAME
    )


def _encoded(target: Path, metadata: DeviceMetadata, versions: Iterable[str]) -> bytes:
    try:
        return encode_stream(metadata, versions=versions)
    except MetadataEncodeError as error:
        raise MetadataEncodeError(error.field, error.reason, path=target) from None


def write_metadata_file(
    path: StrPath,
    metadata: DeviceMetadata,
    *,
    versions: Iterable[str] = KNOWN_API_VERSIONS,
    mode: WriteMode = "atomic",
    root: StrPath | None = None,
) -> Path:
    """Write ``metadata`` as a stream to ``path``, creating parent directories (mode 0755).

    ``mode="atomic"`` (the beta writer): a temporary file in the same directory, fsync, mode
    0644, rename over the target, fsync the directory. Readers see the old or the new file,
    never a partial one, but a container's single-file bind mount keeps the old inode.
    ``mode="in-place"`` (the alpha writer): truncate and rewrite the same inode, which bind
    mounts follow, at the price of readers possibly seeing a partial file; the space is
    reserved first and the old content put back if writing fails all the same.

    With ``root``, ``path`` must lie below it and nothing below it may be a symlink (the
    directories are walked without following any); without, the directories are taken as
    given. A symlink as the file itself is always refused. Arguments are checked before
    anything on disk changes; every I/O failure is a MetadataWriteError (an OSError with
    ``errno``) naming the file and the step. Writers take an advisory lock (flock) on the
    file's directory while they write.
    """
    target = Path(path)
    chosen_mode = check_mode(mode)
    data = _encoded(target, metadata, versions)
    with Directory.open(target, root=root, create=True) as directory:
        directory.write(data, chosen_mode)
    return target


MetadataChange = Callable[[DeviceMetadata], DeviceMetadata] | Sequence[Device]


def update_metadata_file(
    path: StrPath,
    change: MetadataChange,
    *,
    versions: Iterable[str] | None = None,
    mode: WriteMode = "atomic",
    max_size: int = DEFAULT_MAX_SIZE,
    root: StrPath | None = None,
) -> DeviceMetadata:
    """Apply ``change`` to the file's current object and write it back with generation + 1.

    ``change`` is either a function from the current DeviceMetadata to the new one, or a
    sequence of Devices that replaces the devices of the file's single request (what the
    upstream ``UpdateRequestMetadata`` does, e.g. once network data is known). ``versions``
    defaults to the known versions. Returns the object written.

    Read, change and write happen under an advisory lock (flock) on the file's directory, so
    that several processes updating one file at once lose no update. ``mode``, ``root`` and
    the errors are those of write_metadata_file; the file must exist.
    """
    target = Path(path)
    chosen_mode = check_mode(mode)
    chosen_versions = KNOWN_API_VERSIONS if versions is None else _check_versions(versions)
    if not max_size >= 0:
        raise ValueError(f"max_size must be a number of bytes >= 0, not {max_size!r}")
    if not callable(change):
        change = _checked_devices(change)
    with Directory.open(target, root=root, create=False) as directory:
        current = read_metadata_file(target, max_size=max_size)
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
            request = DeviceMetadataRequest(name=current.requests[0].name, devices=change)
            updated = replace(current, requests=(request,))
        meta = replace(updated.metadata, generation=current.generation + 1)
        result = replace(updated, metadata=meta, sources=())
        directory.write(_encoded(target, result, chosen_versions), chosen_mode)
    return result


def _checked_devices(devices: object) -> tuple[Device, ...]:
    if isinstance(devices, (str, bytes)) or not isinstance(devices, Iterable):
        raise TypeError(
            f"change must be a function or a sequence of Devices, not {type(devices).__name__}"
        )
    checked = tuple(devices)
    for device in checked:
        if not isinstance(device, Device):
            raise TypeError(f"each device must be a Device, not {type(device).__name__}")
    return checked
