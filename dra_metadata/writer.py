"""Write metadata streams byte for byte as the upstream Go writer does (custom drivers, tests).

``encode_stream`` is the inverse of decoding: one object per requested API version, each
pretty-printed with two-space indentation in Go's key order and escaping, followed by a newline.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import orjson

from dra_metadata._model._errors import (
    MetadataEncodeError,
    MetadataValidationError,
    MetadataWriteError,
)
from dra_metadata._model._metadata import DeviceMetadata, DeviceMetadataRequest
from dra_metadata._model._models import Device
from dra_metadata._model._versions import KIND, KNOWN_API_VERSIONS
from dra_metadata._model._wire import _check_versions, _locate_unencodable, _wire_object
from dra_metadata._reading._paths import (
    HOST_METADATA_DIR_NAME,
    HOST_METADATA_FILE_NAME,
    StrPath,
    _check_name,
    _request_directory_name,
    check_file_name_length,
)
from dra_metadata._reading._read import DEFAULT_MAX_SIZE, read_metadata_file
from dra_metadata._writing._write import FILE_MODE, Directory, WriteMode, check_mode
from dra_metadata._writing._write_validate import check_before_writing

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from dra_metadata._validation._profiles import Profile

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
    metadata: DeviceMetadata,
    *,
    versions: Iterable[str] = KNOWN_API_VERSIONS,
    validate: bool | Profile = False,
) -> bytes:
    """The metadata stream the upstream writer produces: one object per version, in order.

    ``versions`` must be known API versions, each at most once; the newest should come first.
    The ``api_version`` and ``sources`` of ``metadata`` are ignored. By default nothing is
    validated, as upstream's writer does not; ``validate=True`` (or ``"strict"``, the API
    server's rules too) raises MetadataValidationError, with every finding, when the object
    breaks the rules of any version it is written in.
    Raises MetadataEncodeError naming the field of a value JSON cannot hold.

    Examples:
        >>> from dra_metadata.writer import encode_stream
        >>> metadata = dra_metadata.read_claim_metadata("fast-net", "vf")
        >>> stream = encode_stream(metadata)
        >>> dra_metadata.decode_stream(stream).metadata == metadata
        True
        >>> stream.count(b'"kind": "DeviceMetadata"')  # one object per known version
        2
    """
    if not isinstance(metadata, DeviceMetadata):
        raise TypeError(f"metadata must be a DeviceMetadata, not {type(metadata).__name__}")
    chosen = KNOWN_API_VERSIONS if versions is KNOWN_API_VERSIONS else _check_versions(versions)
    check_before_writing(metadata, validate, chosen, None)
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


def _encoded(
    target: Path, metadata: DeviceMetadata, versions: Iterable[str], validate: bool | Profile
) -> bytes:
    try:
        return encode_stream(metadata, versions=versions, validate=validate)
    except MetadataEncodeError as error:
        raise MetadataEncodeError(error.field, error.reason, path=target) from None
    except MetadataValidationError as error:
        errors = tuple(replace(finding, file=target) for finding in error.errors)
        raise MetadataValidationError(errors, metadata, path=target) from None


def write_metadata_file(
    path: StrPath,
    metadata: DeviceMetadata,
    *,
    versions: Iterable[str] = KNOWN_API_VERSIONS,
    mode: WriteMode = "atomic",
    root: StrPath | None = None,
    validate: bool | Profile = False,
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
    file's directory while they write. ``validate`` as in encode_stream: a finding raises
    MetadataValidationError before anything on disk changes. Returns ``path``.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from dra_metadata.writer import write_metadata_file
        >>> metadata = dra_metadata.read_claim_metadata("fast-net", "vf")
        >>> with tempfile.TemporaryDirectory() as plugin_dir:
        ...     path = Path(plugin_dir, "vf", "sriov.example.com-metadata.json")
        ...     written = write_metadata_file(path, metadata, validate=True)
        ...     [device.name for device in dra_metadata.read_metadata_file(written).devices]
        ['vf-3']
    """
    target = Path(path)
    chosen_mode = check_mode(mode)
    data = _encoded(target, metadata, versions, validate)
    with Directory.open(target, root=root, create=True) as directory:
        _refuse_own_change(directory)
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
    validate: bool | Profile = False,
) -> DeviceMetadata:
    """Apply ``change`` to the file's current object and write it back with generation + 1.

    ``change`` is either a function from the current DeviceMetadata to the new one, or a
    sequence of Devices that replaces the devices of the file's single request (what the
    upstream ``UpdateRequestMetadata`` does, e.g. once network data is known). ``versions``
    defaults to the known versions. Returns the object written.

    Several processes and threads updating one file at once lose no update: the file is read
    and written under an advisory lock (flock) on its directory. A function ``change`` runs
    outside that lock, so that it may call the writers itself (for another file of the same
    directory, from another thread, ...) without a deadlock: the file is written only if it
    still holds what ``change`` was given; if another writer changed it meanwhile, ``change``
    is called again with the new content (so it should only compute the new object), up to
    UPDATE_ATTEMPTS times in a row before a MetadataWriteError (errno EAGAIN). A ``change``
    that writes or updates the very file it is changing gets a ValueError (its result would
    overwrite its own write). ``mode``, ``root`` and the other errors are those of
    write_metadata_file; the file must exist. ``validate`` checks the changed object as
    encode_stream does: a finding leaves the file as it was.

    Examples:
        >>> import dataclasses, tempfile
        >>> from pathlib import Path
        >>> from dra_metadata.writer import update_metadata_file, write_metadata_file
        >>> metadata = dra_metadata.read_claim_metadata("fast-net", "vf")
        >>> with tempfile.TemporaryDirectory() as plugin_dir:
        ...     path = write_metadata_file(Path(plugin_dir, "vf-metadata.json"), metadata)
        ...     vf = dataclasses.replace(metadata.devices[0], network_data=None)
        ...     updated = update_metadata_file(path, [vf])
        ...     updated.generation - metadata.generation, updated.devices[0].network_data
        (1, None)
    """
    target = Path(path)
    chosen_mode = check_mode(mode)
    chosen_versions = KNOWN_API_VERSIONS if versions is None else _check_versions(versions)
    if not max_size >= 0:
        raise ValueError(f"max_size must be a number of bytes >= 0, not {max_size!r}")
    if not callable(change):
        devices = _checked_devices(change)
        with Directory.open(target, root=root, create=False) as directory:
            _refuse_own_change(directory)
            current = read_metadata_file(target, max_size=max_size)
            result = _next_generation(current, _with_devices(current, devices, path))
            directory.write(_encoded(target, result, chosen_versions, validate), chosen_mode)
        return result
    for _ in range(UPDATE_ATTEMPTS):
        with Directory.open(target, root=root, create=False) as directory:
            _refuse_own_change(directory)
            current = read_metadata_file(target, max_size=max_size)
            key = directory.key
        _CHANGING.keys = (*_changing(), key)
        try:
            updated = change(current)  # outside the lock: it may call the writers itself
        finally:
            _CHANGING.keys = _changing()[:-1]
        if not isinstance(updated, DeviceMetadata):
            raise TypeError(
                f"the change must return a DeviceMetadata, not {type(updated).__name__}"
            )
        result = _next_generation(current, updated)
        with Directory.open(target, root=root, create=False) as directory:
            if read_metadata_file(target, max_size=max_size) == current:
                directory.write(_encoded(target, result, chosen_versions, validate), chosen_mode)
                return result
    raise MetadataWriteError(
        f"another writer changed the file each of the {UPDATE_ATTEMPTS} times the change ran; "
        "try again later",
        path=target,
        os_errno=errno.EAGAIN,
    )


UPDATE_ATTEMPTS = 100
"""How many times in a row update_metadata_file calls a function ``change`` while other
writers keep changing the file, before it gives up."""
_CHANGING = threading.local()
"""The files (Directory.key) whose update runs a function ``change`` in this thread."""


def _changing() -> tuple[tuple[int, int, str], ...]:
    keys: tuple[tuple[int, int, str], ...] = getattr(_CHANGING, "keys", ())
    return keys


def _refuse_own_change(directory: Directory) -> None:
    """ValueError when this thread is inside the change of an update of the same file."""
    if directory.key in _changing():
        raise ValueError(
            f"{directory.target}: the change of an update of this file writes it: return the "
            "new object from the change instead"
        )


def _with_devices(
    current: DeviceMetadata, devices: tuple[Device, ...], path: StrPath
) -> DeviceMetadata:
    if len(current.requests) != 1:
        raise ValueError(
            f"{path}: replacing devices needs a file with exactly one request, "
            f"found {len(current.requests)}; pass a function instead"
        )
    request = DeviceMetadataRequest(name=current.requests[0].name, devices=devices)
    return replace(current, requests=(request,))


def _next_generation(current: DeviceMetadata, updated: DeviceMetadata) -> DeviceMetadata:
    meta = replace(updated.metadata, generation=current.generation + 1)
    return replace(updated, metadata=meta, sources=())


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
