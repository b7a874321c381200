"""Why metadata is not there, and what to do next: the sentences of MetadataNotFoundError.

A reader that finds nothing looks around once (only then, never on the way to a good read) to
say which of the usual mistakes it is: the root is not mounted or points elsewhere, the claim
name is wrong, the claim is a template claim read as a named one (or the reverse), the request
name is wrong, or the driver publishes nothing. The hints are worded for the audience: the
command sets WORDING so that they name its options instead of the Python arguments.
"""

from __future__ import annotations

import os
import stat
from contextvars import ContextVar
from pathlib import Path

from dra_metadata._model._errors import shown_names
from dra_metadata._reading._paths import (
    METADATA_FILE_SUFFIX,
    RESOURCE_CLAIM_TEMPLATES_SUBDIR,
    RESOURCE_CLAIMS_SUBDIR,
    ROOT_ENVIRONMENT_VARIABLE,
    StrPath,
    default_root,
    driver_of_file_name,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Literal

    Wording = Literal["python", "command"]
WORDING: ContextVar[Wording] = ContextVar("dra_metadata_wording", default="python")
"""Whose words the hints use: the Python API's (``root=``) or the command's (``--root``)."""

_LS_HINT = "`dra-metadata ls` lists everything mounted"


def listing(directory: Path) -> list[str] | None:
    """The names in ``directory``, byte-wise sorted; None when it cannot be listed."""
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    return sorted(names, key=os.fsencode)


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a directory; False for what cannot be looked at (a name too long
    for the system included, where Path.is_dir raises)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)  # noqa: PTH116 - one system call
    except (OSError, ValueError):
        return False


def _claims(root: Path, subdirectory: str) -> list[str]:
    names = listing(root / subdirectory) or []
    return [name for name in names if _is_dir(root / subdirectory / name)]


def _option(python: str, command: str) -> str:
    return command if WORDING.get() == "command" else python


def _root_origin(root: StrPath | None) -> str:
    if root is not None:
        return _option("root=", "--root")
    if os.environ.get(ROOT_ENVIRONMENT_VARIABLE):
        return f"${ROOT_ENVIRONMENT_VARIABLE}"
    return "the container default"


def describe_missing_root(given: StrPath | None) -> str | None:
    """Why the root (``given``, else the default) cannot hold metadata; None if it can."""
    root = Path(default_root() if given is None else given)
    return None if _is_dir(root) else _missing_root(root, given)


def _missing_root(root: Path, given: StrPath | None) -> str:
    origin = _root_origin(given)
    elsewhere = _option("pass root= or set", "pass --root DIR or set")
    try:
        os.stat(root)  # noqa: PTH116 - one system call, its errno decides
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as error:  # a name too long, a component that is a file, ...
        why = getattr(error, "strerror", None) or str(error)
        return f"the metadata root {root} (from {origin}) cannot be looked at: {why}"
    else:
        return f"the metadata root {root} (from {origin}) is not a directory"
    return (
        f"the metadata root {root} (from {origin}) does not exist: no DRA device metadata is "
        f"mounted here (no claim of this container has a driver that publishes it); to read a "
        f"tree elsewhere, {elsewhere} {ROOT_ENVIRONMENT_VARIABLE}"
    )


def _claims_present(root: Path) -> str:
    named = _claims(root, RESOURCE_CLAIMS_SUBDIR)
    templates = _claims(root, RESOURCE_CLAIM_TEMPLATES_SUBDIR)
    if not named and not templates:
        return f"no claim has device metadata under {root}"
    parts = []
    if named:
        parts.append(f"claims referenced by name: {shown_names(named)}")
    if templates:
        parts.append(f"claims made from templates (pod claim names): {shown_names(templates)}")
    return "; ".join(parts)


def _other_kind(template: bool, *, waiting: bool) -> tuple[str, str]:
    """The subdirectory of the other kind of claim, and how to read (or wait for) that kind
    instead."""
    if template:
        python = "leave out template=True (read_claim_metadata reads it)"
        reader = "use read_claim_metadata"
        return RESOURCE_CLAIMS_SUBDIR, _option(
            python if waiting else reader, "leave out --template"
        )
    python = "pass template=True (read_template_metadata reads it)"
    reader = "use read_template_metadata"
    return RESOURCE_CLAIM_TEMPLATES_SUBDIR, _option(python if waiting else reader, "add --template")


def _claim_words(claim_name: str, *, template: bool) -> str:
    if template:
        return f"the claim with pod claim name {claim_name}"
    return f"claim {claim_name}"


def describe_missing(
    claim_name: str,
    request_name: str,
    *,
    template: bool,
    driver: str | None,
    root: StrPath | None,
    waiting: bool = False,
) -> str | None:
    """Why the request directory (or the driver's file in it) holds no metadata file; None
    when it does (nothing is missing: it may have been removed and written again since).

    ``waiting``: the words of a wait (``template=True``, and the claims that are mounted, where
    the claim is mounted as the other kind) instead of a reader's (read_template_metadata).
    """
    base = Path(default_root() if root is None else root)
    if not _is_dir(base):
        return _missing_root(base, root)
    claim_dir = _claims_dir(base, template=template) / claim_name
    request = request_name.partition("/")[0]
    request_dir = claim_dir / request
    if not _is_dir(claim_dir):
        other = _other_kind_sentence(base, claim_name, request, template=template, waiting=waiting)
        if other is not None:
            return other
        if template:
            sentence = f"no claim made from a template has the pod claim name {claim_name}"
        else:
            sentence = f"no claim {claim_name} referenced by name has metadata"
        return f"{sentence} ({_claims_present(base)}); {_LS_HINT}"
    if not _is_dir(request_dir):
        other = _other_kind_sentence(base, claim_name, request, template=template, waiting=waiting)
        if other is not None:
            return other
        return f"{_no_such_request(claim_dir, claim_name, request, template=template)}; {_LS_HINT}"
    return _missing_in_request_dir(request_dir, driver)


def describe_other_kind(
    claim_name: str, request_name: str, *, template: bool, root: StrPath | None
) -> str | None:
    """The words of a wait when the claim (or its request) is not mounted as the kind asked
    for (named, or made from a template) but is as the other kind; else None."""
    base = Path(default_root() if root is None else root)
    request = request_name.partition("/")[0]
    if not _is_dir(base) or _is_dir(_claims_dir(base, template=template) / claim_name / request):
        return None
    return _other_kind_sentence(base, claim_name, request, template=template, waiting=True)


def _claims_dir(base: Path, *, template: bool) -> Path:
    return base / (RESOURCE_CLAIM_TEMPLATES_SUBDIR if template else RESOURCE_CLAIMS_SUBDIR)


def _no_such_request(claim_dir: Path, claim_name: str, request: str, *, template: bool) -> str:
    requests = [name for name in listing(claim_dir) or [] if _is_dir(claim_dir / name)]
    present = f"its requests: {shown_names(requests)}" if requests else "it has no request"
    return (
        f"{_claim_words(claim_name, template=template)} has no request {request} with "
        f"metadata ({present})"
    )


def _other_kind_sentence(
    base: Path, claim_name: str, request: str, *, template: bool, waiting: bool
) -> str | None:
    """Where the asked-for kind has no such claim (or no such request of it) and the other
    kind has: the sentence saying so and how to switch; else None. A wait's sentence also
    lists the claims that are mounted."""
    claim_dir = _claims_dir(base, template=template) / claim_name
    other_subdirectory, switch = _other_kind(template, waiting=waiting)
    other_claim_dir = base / other_subdirectory / claim_name
    mounted = f"; {_claims_present(base)}" if waiting else ""
    if not _is_dir(claim_dir):
        if not _is_dir(other_claim_dir):
            return None
        if template:
            sentence = f"no claim made from a template has the pod claim name {claim_name}"
            found = f"claim {claim_name} is referenced by name"
        else:
            sentence = f"no claim {claim_name} referenced by name has metadata"
            found = f"{claim_name} is the pod claim name of a claim made from a template"
        return f"{sentence}, but {found}: {switch}{mounted}"
    if not _is_dir(other_claim_dir / request):
        return None
    sentence = _no_such_request(claim_dir, claim_name, request, template=template)
    other = _claim_words(claim_name, template=not template)
    return f"{sentence}; {other} has: {switch}{mounted}; {_LS_HINT}"


def _missing_in_request_dir(request_dir: Path, driver: str | None) -> str | None:
    entries = listing(request_dir) or []
    drivers = [driver_of_file_name(name) for name in entries if name.endswith(METADATA_FILE_SUFFIX)]
    if driver in drivers or (driver is None and drivers):
        return None
    if driver is not None and drivers:
        everything = _option("leave out driver=", "leave out --driver")
        return (
            f"driver {driver} has no metadata file in {request_dir}; drivers with a file: "
            f"{shown_names(drivers)} ({everything} to read them all)"
        )
    holds = f"it holds: {shown_names(entries)}" if entries else "it is empty"
    return (
        f"no *{METADATA_FILE_SUFFIX} file in {request_dir} ({holds}): is the claim allocated "
        "to this container, and does its driver publish device metadata?"
    )
