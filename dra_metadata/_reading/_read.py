"""Reading metadata files and request directories, and merging the files of several drivers."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Collection
from dataclasses import fields, replace
from pathlib import Path

from dra_metadata._decoding._decode import decode_bytes, resolve_profile
from dra_metadata._model._errors import (
    MetadataConflictError,
    MetadataNotFoundError,
    MetadataReadError,
    MetadataTooLargeError,
    MetadataValidationError,
    NoMetadataError,
    shown_names,
)
from dra_metadata._model._metadata import (
    DeviceMetadata,
    DeviceMetadataRequest,
    MetadataSource,
    ObjectMeta,
)
from dra_metadata._reading._missing import _option, describe_missing, listing
from dra_metadata._reading._paths import (
    METADATA_FILE_SUFFIX,
    StrPath,
    driver_of_file_name,
    metadata_file_name,
    not_a_directory,
    request_dir,
)
from dra_metadata._reading._pinned import LOOKS, WARN_STALE, pinned
from dra_metadata._reading._select import select_request

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from dra_metadata._validation._profiles import Profile

DEFAULT_MAX_SIZE = 4 * 1024 * 1024
"""Files larger than this (4 MiB) are refused without being read whole."""

_stale_warned: set[tuple[str, int, int]] = set()  # (path, st_dev, st_ino) warned about


def _describe_missing(path: Path) -> str:
    parent = path.parent
    if not parent.is_dir():
        return f"{path.name} does not exist, and neither does its directory {parent}"
    present = listing(parent)
    if present is None:
        return f"{path.name} does not exist in {parent}"
    names = shown_names(present) or "nothing"
    return f"{path.name} does not exist; its directory {parent} holds: {names}"


def read_file(path: Path, *, max_size: int = DEFAULT_MAX_SIZE) -> tuple[bytes, os.stat_result]:
    """The whole content of a regular file (at most ``max_size`` bytes), read with one open,
    and the status of the open descriptor (``st_nlink`` 0: a stale view); typed errors for
    every failure."""
    if not max_size >= 0:
        raise ValueError(f"max_size must be a number of bytes >= 0, not {max_size!r}")
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise MetadataNotFoundError(
            f"open metadata file: {_describe_missing(path)}", path=path
        ) from None
    except NotADirectoryError:
        raise MetadataReadError(
            f"open metadata file: {not_a_directory(path)} is not a directory",
            path=path,
            os_errno=errno.ENOTDIR,
        ) from None
    except OSError as error:
        raise MetadataReadError(
            f"open metadata file: {error.strerror}", path=path, os_errno=error.errno
        ) from None
    try:
        status = os.fstat(descriptor)
        if stat.S_ISREG(status.st_mode):
            return _content(descriptor, path, status.st_size, max_size), status
    except OSError as error:
        raise MetadataReadError(
            f"read metadata file: {error.strerror}", path=path, os_errno=error.errno
        ) from None
    finally:
        os.close(descriptor)
    directory = stat.S_ISDIR(status.st_mode)
    raise MetadataReadError(
        f"open metadata file: it is {'a directory' if directory else 'not a regular file'}",
        path=path,
        os_errno=errno.EISDIR if directory else None,
    )


def _content(descriptor: int, path: Path, size: int, max_size: int) -> bytes:
    """The bytes of an open regular file whose status says ``size``, at most ``max_size``."""
    if size > max_size:
        raise _too_large(path, max_size, size)
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(descriptor, max(size, 65536) if not chunks else 65536)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > max_size:
            raise _too_large(path, max_size, total)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(path: Path, limit: int, size: int) -> MetadataTooLargeError:
    return MetadataTooLargeError(
        f"file is larger than the limit of {limit} bytes (at least {size} bytes); "
        f"{_option('pass max_size=', 'give --max-size SIZE (e.g. --max-size 16MiB)')} to raise "
        "the limit",
        path=path,
        limit=limit,
    )


def _read_source(path: Path, driver: str | None, max_size: int) -> MetadataSource:
    for _ in range(LOOKS):
        data, status = read_file(path, max_size=max_size)
        # The open file has no name left: a bind mount pinning a file the driver replaced, or a
        # file replaced while it was opened, which the path no longer names: read the new one.
        stale = status.st_nlink == 0 and pinned(path, status)
        if stale or status.st_nlink != 0:
            break
    if not data:
        raise NoMetadataError(
            "the metadata file is empty: the driver may be in the middle of writing it; "
            "read it again shortly",
            path=path,
        )
    result = decode_bytes(data, path)
    if stale:
        _warn_stale(path, status, result.metadata.generation)
    return MetadataSource(
        path=path,
        driver=driver,
        metadata=result.metadata,
        skipped_versions=result.skipped_versions,
        stale=stale,
    )


def _warn_stale(path: Path, status: os.stat_result, generation: int) -> None:
    """Log once per file (per pinned inode) that this process sees a frozen view of it."""
    key = (os.fspath(path), status.st_dev, status.st_ino)
    if key in _stale_warned or not WARN_STALE.get():
        return
    _stale_warned.add(key)
    from dra_metadata._model._notices import warn  # noqa: PLC0415 - only with a warning to give

    warn(
        "%s: stale view: the driver replaced this file on the host and this container still "
        "sees the old one (generation %d); restart the container to see the new one",
        path,
        generation,
    )


def _with_sources(metadata: DeviceMetadata, sources: tuple[MetadataSource, ...]) -> DeviceMetadata:
    return replace(metadata, sources=sources)


def _checked(
    metadata: DeviceMetadata,
    validate: bool | Profile,
    path: Path,
) -> DeviceMetadata:
    profile = resolve_profile(validate)
    if profile is not None:
        conflict = identity_conflict(metadata, path)
        if conflict is not None:
            raise conflict
        from dra_metadata._validation._validate import iter_source_errors  # noqa: PLC0415 - only when asked

        errors = tuple(iter_source_errors(metadata, profile))
        if errors:
            raise MetadataValidationError(errors, metadata, path=path)
    return metadata


def read_metadata_file(
    path: StrPath, *, validate: bool | Profile = False, max_size: int = DEFAULT_MAX_SIZE
) -> DeviceMetadata:
    """Read and decode one metadata file (any path).

    The driver in `sources` comes from the file name when it ends in ``-metadata.json``. With
    ``validate`` (True or "strict") an invalid file raises MetadataValidationError, which
    carries the decoded object and the findings. A stale view is marked and warned about as
    read_claim_metadata does. Raises MetadataNotFoundError, MetadataReadError,
    MetadataDecodeError (MetadataTooLargeError over ``max_size``) naming the file.

    Examples:
        >>> path = dra_metadata.resource_claim_file_path("sriov.example.com", "fast-net", "vf")
        >>> dra_metadata.read_metadata_file(path).generation
        2
    """
    file_path = Path(path)
    name = file_path.name
    driver = driver_of_file_name(name) if name.endswith(METADATA_FILE_SUFFIX) else None
    source = _read_source(file_path, driver, max_size)
    return _checked(_with_sources(source.metadata, (source,)), validate, file_path)


def list_metadata_files(directory: Path) -> list[Path]:
    """The ``*-metadata.json`` entries of a request directory, byte-wise sorted (as Go's Glob)."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        raise MetadataReadError(
            f"list metadata files: {not_a_directory(directory)} is not a directory",
            path=directory,
            os_errno=errno.ENOTDIR,
        ) from None
    except OSError as error:
        raise MetadataReadError(
            f"list metadata files: {error.strerror}", path=directory, os_errno=error.errno
        ) from None
    matching = [name for name in names if name.endswith(METADATA_FILE_SUFFIX)]
    return [directory / name for name in sorted(matching, key=os.fsencode)]


def request_view(
    sources: tuple[MetadataSource, ...],
    directory: Path,
    request_name: str | None,
    *,
    stale: Collection[Path] = (),
) -> DeviceMetadata:
    """What readers, watches and waits return for a request: its files merged, the request
    selected (every subrequest for a top-level name; None selects nothing), and the sources
    whose ``path`` is in ``stale`` marked stale (a watcher knows it from the path's status)."""
    if stale:
        sources = tuple(
            replace(source, stale=True) if source.path in stale else source for source in sources
        )
    metadata = merge_sources(sources)
    if request_name is None:
        return metadata
    return select_request(metadata, request_name, path=directory)


_IDENTITY_FIELDS = ("name", "namespace", "uid")
_PER_FILE_FIELDS = frozenset({"generation", "managed_fields"})
"""ObjectMeta fields that describe one file, not the claim: only in `sources`."""


def merge_sources(sources: tuple[MetadataSource, ...]) -> DeviceMetadata:
    """Merge per-driver objects of one request directory, in the given (sorted) order.

    As upstream: ``pod_claim_name`` is the first one set; requests are matched by exact name and
    their devices appended in file order; the merge succeeds whatever the files' metadata say.
    Beyond upstream (whose merged metadata is empty): each field of the object metadata that
    the files set is kept when they agree on it, and left empty when they do not (a file that
    does not set it never disagrees); generation and managed fields belong to each file alone.
    `sources` keeps each file whole. `identity_conflict` tells whether the files disagree on
    the claim's name, namespace or uid.
    """
    if len(sources) == 1:
        return _with_sources(sources[0].metadata, sources)
    objects = [source.metadata for source in sources]
    merged_requests: dict[str, list[Any]] = {}
    for item in objects:
        for request in item.requests:
            merged_requests.setdefault(request.name, []).extend(request.devices)
    versions = {item.api_version for item in objects}
    pod_claim_name = next(
        (item.pod_claim_name for item in objects if item.pod_claim_name is not None), None
    )
    return DeviceMetadata(
        api_version=versions.pop() if len(versions) == 1 else "",
        metadata=_merged_object_meta([item.metadata for item in objects]),
        pod_claim_name=pod_claim_name,
        requests=tuple(
            DeviceMetadataRequest(name=name, devices=tuple(devices))
            for name, devices in merged_requests.items()
        ),
        sources=sources,
    )


def _merged_object_meta(metas: list[ObjectMeta]) -> ObjectMeta:
    unset = ObjectMeta()
    common: dict[str, Any] = {}
    for field in fields(ObjectMeta):
        if field.name in _PER_FILE_FIELDS:
            continue
        default = getattr(unset, field.name)
        values = [value for meta in metas if (value := getattr(meta, field.name)) != default]
        if values and all(value == values[0] for value in values[1:]):
            common[field.name] = values[0]
    return ObjectMeta(**common)


def identity_conflict(metadata: DeviceMetadata, directory: Path) -> MetadataConflictError | None:
    """The error for files of a merged read that disagree on the claim's name, namespace or
    uid (files that leave one empty do not count), or None."""
    sources = metadata.sources
    for field in _IDENTITY_FIELDS:
        values = tuple(
            dict.fromkeys(
                value for source in sources if (value := getattr(source.metadata.metadata, field))
            )
        )
        if len(values) > 1:
            listed = shown_names(
                [
                    f"{source.path.name if source.path else '?'}: "
                    f"{getattr(source.metadata.metadata, field)!r}"
                    for source in sources
                ]
            )
            return MetadataConflictError(
                f"the metadata files disagree about the claim's {field} ({listed}); the merged "
                f"{field} is empty and each file's own is in .sources",
                path=directory,
                field=field,
                values=values,
            )
    return None


def read_metadata(
    claim_name: str,
    request_name: str,
    *,
    template: bool,
    driver: str | None,
    root: StrPath | None,
    validate: bool | Profile,
    max_size: int,
) -> DeviceMetadata:
    """One driver's file, or the merge of all files of the request directory; the requests
    that ``request_name`` names (see select_request)."""
    directory = request_dir(claim_name, request_name, template=template, root=root)

    def not_found() -> MetadataNotFoundError:
        reason = describe_missing(
            claim_name, request_name, template=template, driver=driver, root=root
        )
        return MetadataNotFoundError(
            reason or "the metadata file was removed while it was being read; read it again",
            path=where,
        )

    if driver is None:
        where, files = directory, list_metadata_files(directory)
        if not files:
            raise not_found()
    else:
        where = directory / metadata_file_name(driver)
        files = [where]
    try:
        sources = tuple(
            _read_source(path, driver_of_file_name(path.name), max_size) for path in files
        )
    except MetadataNotFoundError:
        if driver is None:
            raise  # listed, then gone: the file's own error says so
        raise not_found() from None
    metadata = _checked(merge_sources(sources), validate, where)
    return select_request(metadata, request_name, path=directory)


def read_claim_metadata(
    claim_name: str,
    request_name: str,
    *,
    driver: str | None = None,
    root: StrPath | None = None,
    validate: bool | Profile = False,
    max_size: int = DEFAULT_MAX_SIZE,
) -> DeviceMetadata:
    """Metadata of one request of a claim referenced by name (``resourceClaimName``).

    With ``driver``: that driver's file. Without: every driver's file of the request, merged.
    ``request_name`` ``gpu`` gives the request and every subrequest of it, ``gpu/high-memory``
    that subrequest only (MetadataNotFoundError, saying which one was allocated, if another
    was). With ``validate`` (True or "strict") each file is validated in its own API version
    and an invalid one raises MetadataValidationError, which carries the metadata and the
    findings. A file the driver replaced on the host after this container started is read as
    this container sees it, marked ``stale`` in `sources` and warned about once (logger
    ``dra_metadata``). MetadataNotFoundError says what exists instead.

    Args:
        claim_name: The claim's name (``spec.resourceClaims[].resourceClaimName``).
        request_name: The request (``gpu``), or one subrequest of it (``gpu/high-memory``).
        driver: Read only this driver's file.
        root: The metadata root; by default ``$DRA_METADATA_ROOT``, else CONTAINER_DIR.
        validate: False, True (the "metadata" profile) or "strict".
        max_size: Files larger than this many bytes raise MetadataTooLargeError unread.

    Raises:
        MetadataNotFoundError: No such root, claim, request, subrequest or driver's file.
        MetadataReadError: A file or directory that exists but cannot be read.
        MetadataDecodeError: A file that cannot be decoded (NoMetadataError when empty).
        MetadataValidationError: With ``validate``, a file that breaks the rules.
        MetadataConflictError: With ``validate``, files that disagree on the claim.
        InvalidNameError: A name that is not a single path segment.

    Examples:
        >>> metadata = dra_metadata.read_claim_metadata("training-gpus", "gpu")
        >>> [device.attribute("uuid") for device in metadata.devices][:1]
        ['GPU-5b3c1d2e-8f41-4c55-9a1e-0c6f2b7d9e10']
        >>> sorted(source.driver for source in metadata.sources)
        ['gpu.example.com', 'rdma.example.com']
    """
    return read_metadata(
        claim_name,
        request_name,
        template=False,
        driver=driver,
        root=root,
        validate=validate,
        max_size=max_size,
    )


def read_template_metadata(
    pod_claim_name: str,
    request_name: str,
    *,
    driver: str | None = None,
    root: StrPath | None = None,
    validate: bool | Profile = False,
    max_size: int = DEFAULT_MAX_SIZE,
) -> DeviceMetadata:
    """Metadata of one request of a claim made from a ResourceClaimTemplate.

    ``pod_claim_name`` is the pod-local name (``pod.spec.resourceClaims[].name``): a claim made
    from a template has a generated name, so its files are keyed by the pod's name for it.
    Arguments, merging, stale views and errors otherwise as read_claim_metadata.

    Examples:
        >>> metadata = dra_metadata.read_template_metadata("accelerator", "gpu/high-memory")
        >>> metadata.pod_claim_name, metadata.requests[0].subrequest_name
        ('accelerator', 'high-memory')
    """
    return read_metadata(
        pod_claim_name,
        request_name,
        template=True,
        driver=driver,
        root=root,
        validate=validate,
        max_size=max_size,
    )
