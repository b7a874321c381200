"""The exception hierarchy: every error the library raises derives from DeviceMetadataError."""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from dra_metadata._model._metadata import DeviceMetadata
    from dra_metadata._validation._findings import FieldError


LISTED_AT_MOST = 10
"""Names (files, requests, versions, ...) that an error message lists at most."""


def shown_names(names: Sequence[str], separator: str = ", ") -> str:
    """At most LISTED_AT_MOST of ``names`` joined by ``separator``, and how many more there are.

    Every message that lists names goes through here, so that none grows with the input:
    ``shown_names(["a", "b"])`` is ``"a, b"``; with 12 names, the first 10 and ", and 2 more".
    """
    shown = separator.join(names[:LISTED_AT_MOST])
    if len(names) > LISTED_AT_MOST:
        shown += f", and {len(names) - LISTED_AT_MOST} more"
    return shown


class DeviceMetadataError(Exception):
    """Base of every error raised by dra_metadata; `.path` names the file when there is one.

    Catch it to handle any failure of the package; its message starts with the path and says
    what to do next. docs/reference/errors.md says when each subclass is raised.

    Examples:
        >>> try:
        ...     dra_metadata.read_claim_metadata("no-such-claim", "gpu")
        ... except dra_metadata.DeviceMetadataError as error:
        ...     print(type(error).__name__, error.path.relative_to(dra_metadata.default_root()))
        MetadataNotFoundError resourceclaims/no-such-claim/gpu
    """

    __module__ = "dra_metadata"

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        return f"{self.path}: {self.message}"


class InvalidNameError(DeviceMetadataError, ValueError):
    """A claim, request or driver name that cannot be turned into a path below the root.

    Empty, ``.``, ``..``, with ``/`` or NUL, over 253 bytes, or a driver whose file name would
    exceed 255 bytes. Also a ValueError; raised at the call, before anything is read.
    """

    __module__ = "dra_metadata"

    def __init__(self, argument: str, value: object, reason: str) -> None:
        super().__init__(f"invalid {argument} {value!r}: {reason}")
        self.argument = argument
        self.value = value
        self.reason = reason


class MetadataNotFoundError(DeviceMetadataError, FileNotFoundError):
    """The metadata file or request directory does not exist (also a FileNotFoundError).

    From the Kubernetes API (`dra_metadata.kube`): the claim or pod does not exist, or has no
    such claim or request; `.path` is None then and the message names the object.
    """

    __module__ = "dra_metadata"

    def __init__(self, message: str, *, path: Path | None) -> None:
        DeviceMetadataError.__init__(self, message, path=path)
        self.errno = errno.ENOENT
        self.strerror = message
        self.filename = None if path is None else str(path)

    def __str__(self) -> str:
        return DeviceMetadataError.__str__(self)


def _init_os_error(
    error: DeviceMetadataError, message: str, path: Path, os_errno: int | None
) -> None:
    """Fill both sides of an error that is also an OSError: our message and path, its errno."""
    DeviceMetadataError.__init__(error, message, path=path)
    error.errno = os_errno  # type: ignore[attr-defined]
    error.strerror = message  # type: ignore[attr-defined]
    error.filename = str(path)  # type: ignore[attr-defined]


class MetadataReadError(DeviceMetadataError, OSError):
    """The file exists but cannot be read: permission denied, a directory, not a regular file.

    Also an OSError with the system's ``errno`` (EACCES, EISDIR, ELOOP, ENOTDIR, EIO, ...). A
    wait never waits it out: the path, its permissions or the mount must change.
    """

    __module__ = "dra_metadata"

    def __init__(self, message: str, *, path: Path, os_errno: int | None = None) -> None:
        _init_os_error(self, message, path, os_errno)

    def __str__(self) -> str:
        return DeviceMetadataError.__str__(self)


class MetadataWriteError(DeviceMetadataError, OSError):
    """A writer could not write the file (also an OSError, with ``errno``).

    `.path` is the metadata file to be written; the message says which step failed, on which
    file or directory (creating a directory, the temporary file, the rename, a full disk, a
    read-only file system, a symlink refused). The previous content of the file is kept,
    unless the message says it could not be.
    """

    __module__ = "dra_metadata"

    def __init__(self, message: str, *, path: Path, os_errno: int | None = None) -> None:
        _init_os_error(self, message, path, os_errno)

    def __str__(self) -> str:
        return DeviceMetadataError.__str__(self)


class MetadataDecodeError(DeviceMetadataError):
    """The stream cannot be decoded.

    `object_index` (1-based position in the stream), `api_version` and `field` (wire path such
    as ``requests[0].devices[1].attributes[model].int``) say where, when known. `truncated` is
    True when the data ends inside an object: a file read in the middle of a write looks so.
    """

    __module__ = "dra_metadata"

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        object_index: int | None = None,
        api_version: str | None = None,
        field: str | None = None,
        truncated: bool = False,
    ) -> None:
        super().__init__(message, path=path)
        self.object_index = object_index
        self.api_version = api_version
        self.field = field
        self.truncated = truncated


class MetadataEncodeError(DeviceMetadataError, ValueError):
    """An object holds a value that cannot be written as JSON (also a ValueError).

    Such as a string with a lone surrogate (from ``os.fsdecode`` of bytes that are not UTF-8) or
    a ``fields_v1`` holding a set. `field` is the wire path of the culprit (e.g.
    ``requests[0].devices[1].attributes[model].string``) and `reason` what is wrong with it;
    `.path` is the file that was to be written, which is left untouched.
    """

    __module__ = "dra_metadata"

    def __init__(self, field: str, reason: str, *, path: Path | None = None) -> None:
        super().__init__(f"cannot encode {field}: {reason}", path=path)
        self.field = field
        self.reason = reason


class NoMetadataError(MetadataDecodeError):
    """The stream holds no object at all (empty or whitespace only: possibly mid-write).

    A driver writing in place truncates the file first: watches and waits read it again soon
    instead of raising this.
    """

    __module__ = "dra_metadata"


class NoCompatibleVersionError(MetadataDecodeError):
    """Every object in the stream has an API version this library does not know.

    ``.unknown_versions`` lists them in stream order: a driver newer than this package, which
    a newer release of it reads.
    """

    __module__ = "dra_metadata"

    def __init__(
        self, message: str, *, unknown_versions: tuple[str, ...], path: Path | None = None
    ) -> None:
        super().__init__(message, path=path)
        self.unknown_versions = unknown_versions


class MetadataTooLargeError(MetadataDecodeError):
    """The file is larger than the size cap; it was not read whole.

    The cap is the readers' ``max_size`` (DEFAULT_MAX_SIZE, 4 MiB); pass a larger one for an
    unusually large file.
    """

    __module__ = "dra_metadata"

    def __init__(self, message: str, *, path: Path, limit: int) -> None:
        super().__init__(message, path=path)
        self.limit = limit


class MetadataConflictError(DeviceMetadataError):
    """The per-driver files of one request disagree about the claim they describe.

    Raised by a merged read with ``validate=`` when the files name different claims (name,
    namespace or uid: ``.field``, ``.values``); without ``validate=`` the merge succeeds with
    that field empty, as Go's does. Read one file with ``driver=`` to see each.
    """

    __module__ = "dra_metadata"

    def __init__(self, message: str, *, path: Path, field: str, values: tuple[str, ...]) -> None:
        super().__init__(message, path=path)
        self.field = field
        self.values = values


class AttributeValueError(DeviceMetadataError, ValueError):
    """A device attribute has no single value, or not of the type asked for (a ValueError).

    Raised by ``DeviceAttribute.value`` when several members are set (the attribute's
    ``members`` say which; validation reports such an attribute as ``invalid``), and by a
    typed read, ``device.attribute(name, type=int)``, when the attribute holds another member:
    `.name` is the attribute's key and `.kind` the member it holds (``"string"``, ``"ints"``,
    ...; None when several are set). Both are None when raised by ``DeviceAttribute.value``.
    """

    __module__ = "dra_metadata"

    def __init__(self, message: str, *, name: str | None = None, kind: str | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.kind = kind


class AttributeNotFoundError(DeviceMetadataError, KeyError):
    """An attribute lookup by a name that the device has only under another domain.

    ``device.attribute("pciBusID")`` looks for ``pciBusID`` and ``<driver>/pciBusID``; when the
    device has ``resource.kubernetes.io/pciBusID`` instead, answering "no such attribute" would
    be a silent wrong answer. ``device.attributes["index"]``, whose keys are exact, raises it
    too when the map has the name under a domain (``gpu.example.com/index``), as the KeyError
    a Mapping raises (``attributes.get`` and ``in`` still answer None and False). `.name` is
    the name asked for, `.suggestions` the attribute names it may have meant.
    """

    __module__ = "dra_metadata"

    def __init__(self, message: str, *, name: str, suggestions: tuple[str, ...]) -> None:
        super().__init__(message)
        self.name = name
        self.suggestions = suggestions


class MetadataValidationError(DeviceMetadataError):
    """The metadata decoded but breaks validation rules.

    Nothing is lost: `.metadata` is the decoded object and `.errors` the FieldErrors.
    """

    __module__ = "dra_metadata"

    def __init__(
        self, errors: tuple[FieldError, ...], metadata: DeviceMetadata, *, path: Path | None
    ) -> None:
        shown = "; ".join(str(error) for error in errors[:5])
        more = f"; and {len(errors) - 5} more" if len(errors) > 5 else ""
        count = f"{len(errors)} validation error{'s' if len(errors) != 1 else ''}"
        super().__init__(f"{count}: {shown}{more}", path=path)
        self.errors = errors
        self.metadata = metadata


class WaitTimeoutError(DeviceMetadataError, TimeoutError):
    """A wait ended before the metadata was ready (also a TimeoutError).

    `.metadata` is the last metadata seen (or None) and `.reason` says why it was not ready;
    `.timeout` is the wait's timeout in seconds, None for a wait without one (stopped).
    """

    __module__ = "dra_metadata"

    def __init__(
        self,
        reason: str,
        *,
        metadata: DeviceMetadata | None,
        path: Path | None,
        timeout: float | None,
    ) -> None:
        after = "" if timeout is None else f" after {timeout:g} s"
        DeviceMetadataError.__init__(self, f"not ready{after}: {reason}", path=path)
        self.reason = reason
        self.metadata = metadata
        self.timeout = timeout

    def __str__(self) -> str:
        return DeviceMetadataError.__str__(self)


class StaleMetadataError(DeviceMetadataError):
    """The driver replaced the file on the host; this container's view of it is frozen.

    A bind mount keeps showing the old file: restart the container to see the new one. A
    wait raises it as soon as it sees a stale view, whether or not its condition holds in it.
    `.metadata` is the metadata last read (its stale sources marked ``stale``), `.reason` why
    it was not ready, None when the condition held in that old view.
    """

    __module__ = "dra_metadata"

    def __init__(
        self,
        message: str,
        *,
        metadata: DeviceMetadata | None,
        path: Path | None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message, path=path)
        self.metadata = metadata
        self.reason = reason


class KubeAPIError(DeviceMetadataError):
    """The Kubernetes API could not be used (`dra_metadata.kube`).

    `.status` is the HTTP status the server answered (401, 403, ...), or None when no answer
    came: no configuration, a refused connection, a TLS failure. `.verb`, `.resource`,
    `.namespace` and `.name` say what was asked, when known.
    """

    __module__ = "dra_metadata"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        verb: str | None = None,
        resource: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.verb = verb
        self.resource = resource
        self.namespace = namespace
        self.name = name


class PodResourcesError(DeviceMetadataError):
    """The kubelet's PodResources API could not be used (`dra_metadata.podresources`).

    `.socket` is the socket asked (the argument, $DRA_METADATA_PODRESOURCES_SOCKET or the
    kubelet's default), `.method` the method (``List``, ``Get``, ``GetAllocatableResources``)
    or None, and `.code` the gRPC status code's name (``UNAVAILABLE``, ``UNIMPLEMENTED``, ...)
    when the call got one; the message names the socket and what to do next. Subclasses say
    what went wrong: no socket, permission denied, nothing answering, no answer in time, a
    method the kubelet does not serve, a pod it does not know, the extra not installed.
    """

    __module__ = "dra_metadata"

    def __init__(
        self, message: str, *, socket: str, method: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.socket = socket
        self.method = method
        self.code = code
