"""What is mounted under the root: every request directory of every claim, and their devices.

For code that does not know its claims' names in advance (a pod with a training claim and an
inference claim) and for ``dra-metadata ls``. Applications that know their claims should name
them: a listing cannot tell a claim that is not mounted yet from one that does not exist.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from dra_metadata._model._errors import MetadataNotFoundError, MetadataReadError
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
from dra_metadata._reading._read import DEFAULT_MAX_SIZE, list_metadata_files, read_metadata

if TYPE_CHECKING:
    from dra_metadata._validation._validate import Profile

ClaimKind = Literal["claim", "template"]

_SUBDIRECTORIES: tuple[tuple[ClaimKind, str], ...] = (
    ("claim", RESOURCE_CLAIMS_SUBDIR),
    ("template", RESOURCE_CLAIM_TEMPLATES_SUBDIR),
)


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class MountedDevice:
    """A device mounted in this container, with the claim, request and file it comes from."""

    claim: MountedClaim
    """The claim's request directory."""
    request_name: str
    """The request of the file that lists the device (``gpu`` or ``gpu/high-memory``)."""
    device: Device
    source: MetadataSource
    """The file that lists the device: path, driver, generation and the whole object (with
    the claim's name, namespace and uid)."""


OnError = Callable[[MetadataReadError], object]
"""What list_claims calls with a directory below the root that it cannot list."""


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
            return list_metadata_files(directory)
        except MetadataReadError as error:
            self._skip(error)
            return []

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
    (permission denied, ...) raises MetadataReadError naming it, unless ``on_error`` is given:
    then ``on_error(error)`` is called and the listing goes on without that directory.
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
) -> list[MountedDevice]:
    """Every device mounted in this container, with its claim, request and file.

    In the order of list_claims, then of each request directory's files (one per driver) and
    their requests. Every claim is read as `MountedClaim.read` does, and its errors are raised
    (the first file that cannot be read or decoded names itself); to skip such a claim, use
    list_claims and read each one yourself.
    """
    return [
        mounted
        for claim in list_claims(root=root)
        for mounted in _devices_of(claim, claim.read(validate=validate, max_size=max_size))
    ]


for _public in (MountedClaim, MountedDevice):
    _public.__module__ = "dra_metadata"
