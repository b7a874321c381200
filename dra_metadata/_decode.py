"""The multi-document stream decoder: pick the first object of a known API version.

Behaviour of the Go reference (spec §2, §4.1, B1): objects are read in order; the first object
of a known version wins and nothing after it is parsed; an object of an unknown version that has
a kind is skipped and remembered; everything else that goes wrong is fatal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from dra_metadata._convert import WireTypeError, describe, metadata_from_wire
from dra_metadata._errors import MetadataDecodeError, NoCompatibleVersionError, NoMetadataError
from dra_metadata._models import DeviceMetadata, builder
from dra_metadata._versions import KIND, KNOWN_API_VERSIONS, ApiVersionError, normalize_api_version

if TYPE_CHECKING:
    from dra_metadata._validate import FieldError, Profile

_WHITESPACE = re.compile(rb"[ \t\r\n]*")
_END_OF_STREAM = frozenset(b"]}")
_KNOWN = frozenset(KNOWN_API_VERSIONS)
_SEPARATOR = b"}\n{"
_WINDOW = 256


@dataclass(frozen=True, slots=True)
class DecodeResult:
    """What decode_stream found: the object, the version it came from, the versions skipped,
    and (when asked for) the validation findings, which never prevent decoding."""

    metadata: DeviceMetadata
    api_version: str
    skipped_versions: tuple[str, ...] = ()
    errors: tuple[FieldError, ...] = ()
    """Validation findings (``validate=``); empty when valid or not validated."""

    __module__ = "dra_metadata"


_build_result = builder(DecodeResult)


class _ReadError(Exception):
    def __init__(self, message: str, offset: int, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.offset = offset
        self.truncated = truncated


def _byte_offset(data: bytes, start: int, char_offset: int) -> int:
    """orjson reports positions in characters; turn one into a byte offset into ``data``."""
    if data.isascii():
        return start + char_offset
    text = data[start:].decode("utf-8", errors="replace")
    return start + len(text[:char_offset].encode("utf-8", errors="replace"))


def _parse_prefix(data: bytes, start: int, end: int) -> Any:
    return orjson.loads(memoryview(data)[start:end])


def _read_value(data: bytes, start: int) -> tuple[Any, int]:
    """Parse the JSON value that starts at ``start``; return it and the offset just after it.

    orjson parses whole documents only, so the end of the value is guessed from the layout
    writers produce (objects separated by "}\n{", compact or indented: a raw newline cannot occur
    inside a JSON string, and indented inner braces never start a line) and the guess is
    confirmed by parsing exactly that much. A wrong guess costs one more parse of the remainder,
    whose error tells where the value ends. A writer emits the same object once per version, so
    in the common two-version stream the separator lies near the middle: look there first,
    since a full search costs about half as much as parsing.
    """
    size = len(data)
    middle = (start + size) // 2
    guess = data.find(_SEPARATOR, middle - _WINDOW, middle + _WINDOW)
    if guess == -1:
        guess = data.find(_SEPARATOR, start)
    guess = guess + 1 if guess != -1 else size
    try:
        return _parse_prefix(data, start, guess), guess
    except orjson.JSONDecodeError:
        return _read_value_slowly(data, start)


_TRUNCATED_HINT = " (the stream is truncated: the file may be in the middle of being written)"


def _read_value_slowly(data: bytes, start: int) -> tuple[Any, int]:
    end = len(data)
    cut_character = False  # the data ends inside a multi-byte character: a partial write
    if not data.isascii():
        try:
            data[start:].decode("utf-8")
        except UnicodeDecodeError as error:
            end = start + error.start  # parse up to the first invalid byte
            cut_character = error.reason == "unexpected end of data"
    try:
        return _parse_prefix(data, start, end), end
    except orjson.JSONDecodeError as error:
        stop = _byte_offset(data, start, error.pos)
        if start < stop < end:
            try:  # the error may just be "more data after the value"
                return _parse_prefix(data, start, stop), stop
            except orjson.JSONDecodeError:
                pass
        if end < len(data) and stop >= end:
            message = f"invalid UTF-8 byte 0x{data[end]:02x} at byte {end}"
            if cut_character:
                message += _TRUNCATED_HINT
            raise _ReadError(message, end, truncated=cut_character) from None
        truncated = stop >= end == len(data)
        message = f"{error.msg} at byte {stop}{_TRUNCATED_HINT if truncated else ''}"
        raise _ReadError(message, stop, truncated=truncated) from None


def decode_bytes(data: bytes, path: Path | None = None) -> DecodeResult:
    """decode_stream for bytes, naming ``path`` in errors."""
    position = 0
    index = 0
    skipped: list[str] = []
    size = len(data)
    while True:
        position = _WHITESPACE.match(data, position).end()  # type: ignore[union-attr]
        if position >= size or data[position] in _END_OF_STREAM:
            break
        index += 1
        try:
            value, position = _read_value(data, position)
        except _ReadError as error:
            raise MetadataDecodeError(
                f"read metadata object from stream: object {index}: {error}",
                path=path,
                object_index=index,
                truncated=error.truncated,
            ) from None
        api_version = _object_api_version(value, index, path)
        if api_version in _KNOWN:
            metadata = _decode_known(value, api_version, index, path)
            return _build_result(metadata, api_version, tuple(skipped), ())
        skipped.append(api_version)
    if skipped:
        versions = ", ".join(skipped)
        raise NoCompatibleVersionError(
            f"no compatible metadata version found in stream (unknown versions: {versions}); "
            f"this library reads {', '.join(KNOWN_API_VERSIONS)}",
            unknown_versions=tuple(skipped),
            path=path,
        )
    raise NoMetadataError(
        "no metadata objects found in stream: it is empty or holds only whitespace "
        "(a file may be in the middle of being written)",
        path=path,
    )


def _fatal(
    message: str, index: int, path: Path | None, api_version: str | None = None
) -> MetadataDecodeError:
    prefix = f"decode {api_version}" if api_version else "decode metadata object"
    return MetadataDecodeError(
        f"{prefix}: object {index} {message}",
        path=path,
        object_index=index,
        api_version=api_version,
    )


def _object_api_version(value: Any, index: int, path: Path | None) -> str:
    """The normalized apiVersion of a stream object; raises for objects that must not be skipped.

    An unknown version is returned (to be skipped) only when the object also has a kind.
    """
    if type(value) is not dict:
        raise _fatal(f"is {describe(value)}, not a JSON object", index, path)
    kind = value.get("kind")
    api_version = value.get("apiVersion")
    if kind == KIND and type(api_version) is str and api_version in _KNOWN:  # the usual case
        return api_version
    for key, found in (("kind", kind), ("apiVersion", api_version)):
        if found is not None and type(found) is not str:
            raise _fatal(f'has a "{key}" that is {describe(found)}, not a string', index, path)
    try:
        normalized = normalize_api_version(api_version or "")
    except ApiVersionError as error:
        if not kind:
            raise _fatal('has no "kind"', index, path) from None
        raise _fatal(f'has no usable "apiVersion": {error}', index, path) from None
    if not kind:
        raise _fatal('has no "kind"', index, path, normalized)
    if normalized in _KNOWN and kind != KIND:
        message = f'has kind "{kind}"; the only kind of this version is {KIND}'
        raise _fatal(message, index, path, normalized)
    return normalized


def _decode_known(
    value: dict[str, Any], api_version: str, index: int, path: Path | None
) -> DeviceMetadata:
    try:
        return metadata_from_wire(value, api_version)
    except WireTypeError as error:
        raise MetadataDecodeError(
            f"decode {api_version}: object {index}, field {error.field}: {error.problem}",
            path=path,
            object_index=index,
            api_version=api_version,
            field=error.field,
        ) from None


def resolve_profile(validate: bool | Profile) -> Profile | None:
    """The validation profile a ``validate=`` option asks for, or None for no validation."""
    if validate is False:
        return None
    if validate is True:
        return "metadata"
    if validate in {"metadata", "strict"}:
        return validate
    raise ValueError(f"validate must be False, True, 'metadata' or 'strict', not {validate!r}")


def decode_stream(data: bytes | str, *, validate: bool | Profile = False) -> DecodeResult:
    """Decode a metadata stream as the Go reference does and return the first usable object.

    Raises MetadataDecodeError (and its subclasses NoMetadataError, NoCompatibleVersionError)
    naming the object and the field at fault. With ``validate`` (True for the upstream rules,
    "strict" for the API server's too), the findings are in ``.errors``; the object is
    returned all the same.
    """
    profile = resolve_profile(validate)
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError as error:
            raise MetadataDecodeError(f"read metadata object from stream: {error}") from None
    elif not isinstance(data, bytes):
        try:
            data = bytes(memoryview(data))
        except TypeError:
            raise TypeError(
                f"data must be bytes (or bytes-like) or str, not {type(data).__name__}"
            ) from None
    result = decode_bytes(data)
    if profile is None:
        return result
    from dra_metadata._validate import validate as validate_metadata  # noqa: PLC0415

    errors = validate_metadata(result.metadata, profile=profile)
    return replace(result, errors=errors)
