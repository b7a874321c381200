"""What is mounted under the root: every request directory of every claim, and their devices.

For code that does not know its claims' names in advance (a pod with a training claim and an
inference claim) and for ``dra-metadata ls``. Applications that know their claims should name
them: a listing cannot tell a claim that is not mounted yet from one that does not exist.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from dra_metadata._decoding._decode import resolve_profile
from dra_metadata._model._errors import (
    DeviceMetadataError,
    MetadataNotFoundError,
    MetadataReadError,
)
from dra_metadata._model._frozen import frozen_model
from dra_metadata._model._metadata import DeviceMetadata, MetadataSource
from dra_metadata._model._models import Device
from dra_metadata._reading._missing import describe_missing_root
from dra_metadata._reading._paths import (
    RESOURCE_CLAIM_TEMPLATES_SUBDIR,
    RESOURCE_CLAIMS_SUBDIR,
    StrPath,
    _resolve_root,
    driver_of_file_name,
)
from dra_metadata._reading._read import (
    DEFAULT_MAX_SIZE,
    identity_conflict,
    list_metadata_files,
    merge_sources,
    read_metadata,
    read_metadata_file,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Literal

    from dra_metadata._validation._profiles import Profile

    ClaimKind = Literal["claim", "template"]

_store = object.__setattr__
_SUBDIRECTORIES: tuple[tuple[ClaimKind, str], ...] = (
    ("claim", RESOURCE_CLAIMS_SUBDIR),
    ("template", RESOURCE_CLAIM_TEMPLATES_SUBDIR),
)


@frozen_model
class MountedClaim:
    """One request directory of a claim mounted in this container, and the files it holds.

    ``kind`` is ``"claim"`` for a claim referenced by name (``claim_name`` is the claim's
    name) and ``"template"`` for a claim made from a ResourceClaimTemplate (``claim_name`` is
    the pod claim name). ``request_name`` is the directory's name: the top-level request (a
    subrequest, ``gpu/high-memory``, shares the directory of ``gpu``). ``drivers`` and
    ``paths`` list the ``<driver>-metadata.json`` files, in the same (byte-wise sorted) order.
    `read` reads them as read_claim_metadata or read_template_metadata would.
    """

    kind: ClaimKind
    claim_name: str
    request_name: str
    drivers: tuple[str, ...]
    paths: tuple[Path, ...]
    root: Path
    """The root it was found under (what the readers get as ``root=``)."""

    def __init__(
        self,
        kind: ClaimKind,
        claim_name: str,
        request_name: str,
        drivers: tuple[str, ...],
        paths: tuple[Path, ...],
        root: Path,
    ) -> None:
        _store(self, "kind", kind)
        _store(self, "claim_name", claim_name)
        _store(self, "request_name", request_name)
        _store(self, "drivers", drivers)
        _store(self, "paths", paths)
        _store(self, "root", root)

    @property
    def template(self) -> bool:
        """True for a claim made from a ResourceClaimTemplate (``kind == "template"``)."""
        return self.kind == "template"

    @property
    def directory(self) -> Path:
        """The request directory."""
        return self.root / dict(_SUBDIRECTORIES)[self.kind] / self.claim_name / self.request_name

    def read(
        self,
        *,
        driver: str | None = None,
        validate: bool | Profile = False,
        max_size: int = DEFAULT_MAX_SIZE,
    ) -> DeviceMetadata:
        """The metadata of this request: every driver's file merged, or ``driver``'s file.

        Exactly what read_claim_metadata (read_template_metadata for a template claim) returns
        for these names and this root, with the same errors.
        """
        return read_metadata(
            self.claim_name,
            self.request_name,
            template=self.template,
            driver=driver,
            root=self.root,
            validate=validate,
            max_size=max_size,
        )


@frozen_model
class MountedDevice:
    """A device mounted in this container, with the claim, request and file it comes from.

    What list_devices returns: ``claim`` (its MountedClaim), ``request_name`` (the file's
    request, e.g. ``gpu/high-memory``), ``device`` and ``source`` (the file's MetadataSource).
    """

    claim: MountedClaim
    """The claim's request directory."""
    request_name: str
    """The request of the file that lists the device (``gpu`` or ``gpu/high-memory``)."""
    device: Device
    source: MetadataSource
    """The file that lists the device: path, driver, generation and the whole object (with
    the claim's name, namespace and uid)."""

    def __init__(
        self, claim: MountedClaim, request_name: str, device: Device, source: MetadataSource
    ) -> None:
        _store(self, "claim", claim)
        _store(self, "request_name", request_name)
        _store(self, "device", device)
        _store(self, "source", source)


OnError = Callable[[MetadataReadError], object]
"""What list_claims calls with a directory below the root that it cannot list, or a
``*-metadata.json`` entry that is no regular file it can open."""
OnReadError = Callable[[DeviceMetadataError], object]
"""What list_devices calls with each file or directory it cannot list, read or decode."""


def unreadable_entry(path: Path) -> MetadataReadError | None:
    """Why a ``*-metadata.json`` entry of a request directory is no file to read, or None.

    A FIFO, a socket, a directory, a symlink loop or a dangling symlink under that name
    would otherwise be listed as a file and fail (or block) only when read.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return MetadataReadError(
            "open metadata file: it is a symlink to nothing (dangling)",
            path=path,
            os_errno=errno.ENOENT,
        )
    except OSError as error:
        return MetadataReadError(
            f"open metadata file: {error.strerror}", path=path, os_errno=error.errno
        )
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return MetadataReadError(
            "open metadata file: it is a directory", path=path, os_errno=errno.EISDIR
        )
    return MetadataReadError("open metadata file: it is not a regular file", path=path)


def _subdirectories(directory: Path) -> list[str]:
    """Names of the subdirectories of ``directory``, byte-wise sorted; files are not claims.

    Raises FileNotFoundError when it is not there, MetadataReadError when it cannot be listed.
    """
    try:
        with os.scandir(directory) as entries:
            names = [entry.name for entry in entries if entry.is_dir()]
    except FileNotFoundError:
        raise
    except NotADirectoryError:
        raise MetadataReadError(
            "list claims: not a directory", path=directory, os_errno=errno.ENOTDIR
        ) from None
    except OSError as error:
        raise MetadataReadError(
            f"list claims: {error.strerror}", path=directory, os_errno=error.errno
        ) from None
    return sorted(names, key=os.fsencode)


def _check_root(base: Path, root: StrPath | None) -> None:
    """A root that does not exist or is no directory says so, as the readers say it."""
    try:
        _subdirectories(base)
    except FileNotFoundError:
        reason = describe_missing_root(root) or "the metadata root does not exist"
        raise MetadataNotFoundError(reason, path=base) from None
    except MetadataReadError as error:
        if error.errno != errno.ENOTDIR:
            raise
        reason = describe_missing_root(root) or "the metadata root is not a directory"
        raise MetadataReadError(reason, path=base, os_errno=errno.ENOTDIR) from None


class _Walk:
    """The directories below the root, with unlistable ones raised or handed to on_error."""

    def __init__(self, on_error: OnError | None) -> None:
        self.on_error = on_error

    def subdirectories(self, directory: Path) -> list[str]:
        try:
            return _subdirectories(directory)
        except FileNotFoundError:
            return []  # removed meanwhile, or no claim of that kind
        except MetadataReadError as error:
            self._skip(error)
            return []

    def files(self, directory: Path) -> list[Path]:
        try:
            listed = list_metadata_files(directory)
        except MetadataReadError as error:
            self._skip(error)
            return []
        files = []
        for path in listed:
            problem = unreadable_entry(path)
            if problem is None:
                files.append(path)
            else:
                self._skip(problem)
        return files

    def _skip(self, error: MetadataReadError) -> None:
        if self.on_error is None:
            raise error
        self.on_error(error)


def list_claims(
    *, root: StrPath | None = None, on_error: OnError | None = None
) -> list[MountedClaim]:
    """Every request directory under the root that holds metadata files (``dra-metadata ls``).

    Claims referenced by name first, then claims made from templates; each sorted by claim
    name, then request name. A request directory without any ``*-metadata.json`` file is left
    out. Nothing is read: `MountedClaim.read` reads. Raises MetadataNotFoundError when the
    root does not exist (nothing is mounted; the message is the readers'), MetadataReadError
    when the root cannot be listed. A directory below the root that cannot be listed
    (permission denied, ...), and a ``*-metadata.json`` entry that is no regular file (a
    FIFO, a directory, a symlink loop or a dangling symlink), raises MetadataReadError naming
    it, unless ``on_error`` is given: then ``on_error(error)`` is called for each and the
    listing goes on without them.

    Examples:
        >>> for claim in dra_metadata.list_claims():
        ...     print(claim.kind, claim.claim_name, claim.request_name, claim.drivers)
        claim fast-net vf ('sriov.example.com',)
        claim training-gpus gpu ('gpu.example.com', 'rdma.example.com')
        template accelerator gpu ('gpu.example.com',)
    """
    base = _resolve_root(root)
    _check_root(base, root)  # the root must exist: a typo is not "no claims"
    walk = _Walk(on_error)
    claims = []
    for kind, subdirectory in _SUBDIRECTORIES:
        kind_dir = base / subdirectory
        for claim_name in walk.subdirectories(kind_dir):
            for request_name in walk.subdirectories(kind_dir / claim_name):
                paths = tuple(walk.files(kind_dir / claim_name / request_name))
                if paths:
                    drivers = tuple(driver_of_file_name(path.name) for path in paths)
                    claims.append(
                        MountedClaim(kind, claim_name, request_name, drivers, paths, base)
                    )
    return claims


def _devices_of(claim: MountedClaim, metadata: DeviceMetadata) -> Iterator[MountedDevice]:
    for source in metadata.sources:
        for request in source.metadata.requests:
            for device in request.devices:
                yield MountedDevice(claim, request.name, device, source)


def list_devices(
    *,
    root: StrPath | None = None,
    validate: bool | Profile = False,
    max_size: int = DEFAULT_MAX_SIZE,
    on_error: OnReadError | None = None,
) -> list[MountedDevice]:
    """Every device mounted in this container, with its claim, request and file.

    In the order of list_claims, then of each request directory's files (one per driver) and
    their requests. Each file is read as `MountedClaim.read` reads it (with ``validate``, the
    files of a request must also agree on the claim's identity). Without ``on_error``, the
    first directory or file that cannot be listed, read, decoded or validated raises its error
    (which names it). With ``on_error``, ``on_error(error)`` is called for each of them and
    the devices of every other file are listed: nothing is left out unsaid.

    Examples:
        >>> [mounted.device.name for mounted in dra_metadata.list_devices()][:3]
        ['vf-3', 'gpu-0', 'gpu-1']
    """

    def report(error: DeviceMetadataError) -> None:
        if on_error is None:
            raise error
        on_error(error)

    mounted: list[MountedDevice] = []
    for claim in list_claims(root=root, on_error=None if on_error is None else report):
        sources = []
        for path in claim.paths:
            try:
                sources.append(read_metadata_file(path, validate=validate, max_size=max_size))
            except DeviceMetadataError as error:  # noqa: PERF203 - each file on its own
                report(error)
        if not sources:
            continue
        merged = merge_sources(tuple(source.sources[0] for source in sources))
        conflict = identity_conflict(merged, claim.directory) if resolve_profile(validate) else None
        if conflict is not None:
            report(conflict)
            continue
        mounted.extend(_devices_of(claim, merged))
    return mounted


for _public in (MountedClaim, MountedDevice):
    _public.__module__ = "dra_metadata"
