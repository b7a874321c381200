"""Write metadata streams byte for byte as the upstream Go writer does (custom drivers, tests).

``encode_stream`` is the inverse of decoding: one object per requested API version, each
pretty-printed with two-space indentation in Go's key order and escaping, followed by a newline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import orjson

from dra_metadata._model._errors import MetadataEncodeError
from dra_metadata._model._metadata import (
    DeviceMetadata,
    DeviceMetadataRequest,
)
from dra_metadata._model._models import Device
from dra_metadata._model._versions import KIND, KNOWN_API_VERSIONS
from dra_metadata._model._wire import _check_versions, _locate_unencodable, _wire_object
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
