"""Where drivers put metadata files inside a container, and checked builders for those paths."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dra_metadata._model._errors import InvalidNameError

CONTAINER_DIR = "/var/run/kubernetes.io/dra-device-attributes"
"""Root under which the container runtime mounts every metadata file."""
RESOURCE_CLAIMS_SUBDIR = "resourceclaims"
"""Subdirectory for claims referenced by name (``pod.spec.resourceClaims[].resourceClaimName``)."""
RESOURCE_CLAIM_TEMPLATES_SUBDIR = "resourceclaimtemplates"
"""Subdirectory for claims made from a template, keyed by the pod-local claim name."""
METADATA_FILE_SUFFIX = "-metadata.json"
"""A driver's file in a request directory is named ``<driver>-metadata.json``."""
ROOT_ENVIRONMENT_VARIABLE = "DRA_METADATA_ROOT"
"""Environment variable that overrides CONTAINER_DIR (tests, host-side tools)."""

_MAX_NAME_BYTES = 253
MAX_FILE_NAME_BYTES = 255
"""The longest file name Linux file systems take (NAME_MAX)."""
HOST_METADATA_DIR_NAME = "dra-device-metadata"
"""Directory below a driver's plugin data directory that holds its metadata files."""
HOST_METADATA_FILE_NAME = "metadata.json"
"""On the host every request's file is called metadata.json (the driver is in the directory)."""

StrPath = str | os.PathLike[str]
"""A path as a str or any os.PathLike of str (a pathlib.Path)."""


def default_root() -> Path:
    """The root in effect when no ``root=`` is given: ``$DRA_METADATA_ROOT``, else CONTAINER_DIR.

    Looked up at every call, so a test or tool can set the variable at any time (an empty value
    counts as unset). Inside a container nothing needs setting.

    Examples:
        >>> import os
        >>> from pathlib import Path
        >>> dra_metadata.default_root() == Path(os.environ["DRA_METADATA_ROOT"])
        True
    """
    return Path(os.environ.get(ROOT_ENVIRONMENT_VARIABLE) or CONTAINER_DIR)


def _resolve_root(root: StrPath | None) -> Path:
    return default_root() if root is None else Path(root)


def _check_segment(argument: str, value: object, segment: str) -> None:
    if not segment:
        raise InvalidNameError(argument, value, "must not be empty")
    if segment in {".", ".."}:
        raise InvalidNameError(argument, value, f"{segment!r} is not a name")
    if "/" in segment:
        raise InvalidNameError(argument, value, "must not contain '/'")
    if "\0" in segment:
        raise InvalidNameError(argument, value, "must not contain a NUL character")


def _check_text(argument: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidNameError(argument, value, f"must be a str, not {type(value).__name__}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidNameError(argument, value, "is not valid Unicode text") from None
    if size > _MAX_NAME_BYTES:
        raise InvalidNameError(argument, value, f"is {size} bytes long, at most 253 allowed")
    return value


def _check_name(argument: str, value: object) -> str:
    name = _check_text(argument, value)
    _check_segment(argument, value, name)
    return name


def _request_directory_name(request_name: object) -> str:
    """The top-level request name: ``gpu/high-memory`` (a subrequest) -> ``gpu``."""
    name = _check_text("request_name", request_name)
    top, separator, subrequest = name.partition("/")
    _check_segment("request_name", request_name, top)
    if separator:
        if "/" in subrequest:
            raise InvalidNameError(
                "request_name", request_name, "only one '/' (before the subrequest) is allowed"
            )
        _check_segment("request_name", request_name, subrequest)
    return top


def metadata_file_name(driver: str) -> str:
    """The file name a driver uses in a request directory: ``<driver>-metadata.json``.

    A driver name that would make the file name longer than a file system allows (255 bytes:
    a driver name of at most 241 bytes) is an InvalidNameError, as any other invalid name.
    """
    name = _check_name("driver", driver) + METADATA_FILE_SUFFIX
    return check_file_name_length(
        "driver",
        driver,
        name,
        f"its file name {name[:20]}...{METADATA_FILE_SUFFIX}",
        f" ({MAX_FILE_NAME_BYTES - len(METADATA_FILE_SUFFIX)} bytes of driver name)",
    )


def check_file_name_length(
    argument: str, value: object, name: str, what: str, hint: str = ""
) -> str:
    """``name`` (made from ``value``) if it fits in a file name, else an InvalidNameError."""
    size = len(name.encode("utf-8"))
    if size > MAX_FILE_NAME_BYTES:
        raise InvalidNameError(
            argument,
            value,
            f"{what} would be {size} bytes long, at most {MAX_FILE_NAME_BYTES} allowed{hint}",
        )
    return name


def resource_claim_request_dir(
    claim_name: str, request_name: str, *, root: StrPath | None = None
) -> Path:
    """Directory holding every driver's file for one request of a claim referenced by name.

    ``<root>/resourceclaims/<claim_name>/<request>``, where ``<request>`` is the top-level
    request of ``request_name`` (``gpu/high-memory`` lives in ``gpu``). ``root`` defaults to
    default_root(). Raises InvalidNameError for a name that is not a single path segment
    (empty, ``.``, ``..``, with ``/`` or NUL, over 253 bytes).

    Examples:
        >>> dra_metadata.resource_claim_request_dir("training-gpus", "gpu", root="/mnt")
        PosixPath('/mnt/resourceclaims/training-gpus/gpu')
    """
    claim = _check_name("claim_name", claim_name)
    request = _request_directory_name(request_name)
    return _resolve_root(root) / RESOURCE_CLAIMS_SUBDIR / claim / request


def resource_claim_template_request_dir(
    pod_claim_name: str, request_name: str, *, root: StrPath | None = None
) -> Path:
    """Directory for one request of a claim made from a template, keyed by the pod claim name.

    ``<root>/resourceclaimtemplates/<pod_claim_name>/<request>``: a claim made from a
    ResourceClaimTemplate has a generated name, so the pod's own name for it
    (``spec.resourceClaims[].name``) keys it. Otherwise as resource_claim_request_dir.

    Examples:
        >>> dra_metadata.resource_claim_template_request_dir("accelerator", "gpu/high-memory")
        PosixPath('.../resourceclaimtemplates/accelerator/gpu')
    """
    claim = _check_name("pod_claim_name", pod_claim_name)
    request = _request_directory_name(request_name)
    return _resolve_root(root) / RESOURCE_CLAIM_TEMPLATES_SUBDIR / claim / request


def resource_claim_file_path(
    driver: str, claim_name: str, request_name: str, *, root: StrPath | None = None
) -> Path:
    """Path of one driver's file for a request of a claim referenced by name.

    ``<request directory>/<driver>-metadata.json`` (see resource_claim_request_dir). Raises
    InvalidNameError for a name that is not a single path segment, or a driver whose file name
    would exceed 255 bytes. Nothing is looked at on disk.

    Examples:
        >>> dra_metadata.resource_claim_file_path("gpu.example.com", "training-gpus", "gpu").name
        'gpu.example.com-metadata.json'
    """
    name = metadata_file_name(driver)
    return resource_claim_request_dir(claim_name, request_name, root=root) / name


def resource_claim_template_file_path(
    driver: str, pod_claim_name: str, request_name: str, *, root: StrPath | None = None
) -> Path:
    """Path of one driver's file for a request of a claim made from a template.

    As resource_claim_file_path, below resource_claim_template_request_dir.

    Examples:
        >>> path = dra_metadata.resource_claim_template_file_path(
        ...     "gpu.example.com", "accelerator", "gpu"
        ... )
        >>> path.is_file()  # on the sample tree
        True
    """
    name = metadata_file_name(driver)
    return resource_claim_template_request_dir(pod_claim_name, request_name, root=root) / name


def request_dir(
    claim_name: str, request_name: str, *, template: bool, root: StrPath | None = None
) -> Path:
    """Either request directory, chosen by ``template``."""
    if template:
        return resource_claim_template_request_dir(claim_name, request_name, root=root)
    return resource_claim_request_dir(claim_name, request_name, root=root)


def driver_of_file_name(file_name: str) -> str:
    """The driver name encoded in a ``<driver>-metadata.json`` file name."""
    return file_name[: -len(METADATA_FILE_SUFFIX)]


def not_a_directory(path: Path) -> Path:
    """For an ENOTDIR met on ``path``: the first of its components that exists but is no
    directory (a root that is a regular file, say); ``path`` itself when none is found (any
    more: it may have changed since)."""
    for component in (*reversed(path.parents), path):
        try:
            mode = os.stat(component).st_mode  # noqa: PTH116 - a str or Path, one system call
        except OSError:
            break  # not there, or not to be looked into: the culprit is not further down
        if not stat.S_ISDIR(mode):
            return component
    return path
