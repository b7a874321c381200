"""The multi-document stream decoder: pick the first object of a known API version.

Behaviour of the Go reference (spec §2, §3.3, §4.1, B1): objects are read in order; the first
object of a known version wins and nothing after it is parsed; an object of an unknown version
that has a kind is skipped and remembered; everything else that goes wrong is fatal.

Two paths lead there. The fast one parses each object with orjson, which gives what Go gives for
the JSON writers produce. The exact one (`_gojson`, `_unmarshal`) reproduces Go's
encoding/json where orjson cannot: it is taken for an object orjson refuses (invalid UTF-8,
escaped lone surrogates, numbers beyond a double, nesting deeper than 1024, syntax errors, whose
messages it words as Go does), for an object whose apiVersion or kind is spelled in another
case, which needs every key in order, and for a number in a field of another type, which the
message quotes as written. Either way, the work is proportional to the bytes read.
"""

from __future__ import annotations

import re
from dataclasses import replace
from operator import itemgetter
from pathlib import Path

import orjson

from dra_metadata._decoding._convert import metadata_from_wire
from dra_metadata._decoding._fields import NeedsExactPath, WireTypeError, describe
from dra_metadata._decoding._result import DecodeResult, build_result
from dra_metadata._decoding._split import (
    _SMALL_OBJECT,
    _WINDOW,
    _WRITER_SEPARATOR,
    _parse_run,
    _read_value,
    _read_value_exactly,
    _ReadError,
)
from dra_metadata._model._errors import (
    MetadataDecodeError,
    NoCompatibleVersionError,
    NoMetadataError,
    shown_names,
)
from dra_metadata._model._metadata import DeviceMetadata
from dra_metadata._model._versions import (
    KIND,
    KNOWN_API_VERSIONS,
    ApiVersionError,
    normalize_api_version,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from dra_metadata._validation._profiles import Profile

_WHITESPACE = re.compile(rb"[ \t\r\n]*")
_END_OF_STREAM = b"]}"
_KNOWN = frozenset(KNOWN_API_VERSIONS)
_TOP_LEVEL_KEYS = frozenset({"kind", "apiVersion", "metadata", "podClaimName", "requests"})
_AT_ONCE_AFTER = 8
"""After this many skipped objects, the rest of the stream is parsed in one go if it is a
plain sequence of small objects: 125,000 objects cost about one orjson call, not 125,000."""
_TRUNCATED_HINT = " (the stream is truncated: the file may be in the middle of being written)"


# What an object is: its apiVersion, or a fatal error.


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


def _classify(kind: Any, api_version: Any, index: int, path: Path | None) -> str:
    """The normalized apiVersion of an object; raises for objects that must not be skipped.

    An unknown version is returned (to be skipped) only when the object also has a kind.
    """
    if kind == KIND and type(api_version) is str and api_version in _KNOWN:  # the usual case
        return api_version
    for key, found in (("kind", kind), ("apiVersion", api_version)):
        if found is not None and type(found) is not str:
            article = "an" if key == "apiVersion" else "a"
            raise _fatal(
                f'has {article} "{key}" that is {describe(found)}, not a string', index, path
            )
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


def _has_type_meta_in_another_case(value: dict[str, Any]) -> bool:
    """Whether a key other than "kind"/"apiVersion" finds them in Go's case-insensitive lookup.

    Such an object needs its keys in order (the last matching key wins), which orjson loses.
    """
    from dra_metadata._decoding._unmarshal import type_meta_key  # noqa: PLC0415 - rare

    return any(type_meta_key(key) for key in value.keys() - _TOP_LEVEL_KEYS)


def _object_api_version(value: Any, index: int, path: Path | None) -> str:
    if type(value) is dict:
        return _classify(value.get("kind"), value.get("apiVersion"), index, path)
    from dra_metadata._decoding._gojson import Pairs, to_python  # noqa: PLC0415 - exact values only

    if type(value) is not Pairs:
        raise _fatal(f"is {describe(to_python(value))}, not a JSON object", index, path)
    from dra_metadata._decoding._unmarshal import type_meta  # noqa: PLC0415

    api_version, kind = (
        item if item is None or type(item) is str else to_python(item) for item in type_meta(value)
    )
    return _classify(kind, api_version, index, path)


def _decode_known(value: Any, api_version: str, index: int, path: Path | None) -> DeviceMetadata:
    """The DeviceMetadata of an object of a known version; raises NeedsExactPath for an object
    that orjson could not give exactly."""
    try:
        if type(value) is dict:
            return metadata_from_wire(value, api_version)
        from dra_metadata._decoding._unmarshal import unmarshal_device_metadata  # noqa: PLC0415

        return metadata_from_wire(unmarshal_device_metadata(value), api_version)
    except WireTypeError as error:
        raise _field_error(error, api_version, index, path) from None


def _field_error(
    error: WireTypeError, api_version: str, index: int, path: Path | None
) -> MetadataDecodeError:
    return MetadataDecodeError(
        f"decode {api_version}: object {index}, field {error.field}: {error.problem}",
        path=path,
        object_index=index,
        api_version=api_version,
        field=error.field,
    )


# Many small objects at once.


def _objects_at_once(
    data: bytes, previous_end: int, start: int
) -> tuple[list[Any], bytes, int] | None:
    """The values from ``start`` up to the last object of the stream, parsed together, the
    bytes they were parsed from and where the last of them ends; else None.

    The separator between the two previous objects (e.g. "}\n{" or "}{") is turned into
    "},{" and the whole run parsed as one array; the last object, and whatever may follow it,
    is left to be read alone. The array must have one element more than separators were
    replaced (else a comma of the run was taken for one); `_skipped_prefix` sees the rest of
    what proves that the split is Go's.
    """
    separator = b"}" + data[previous_end:start] + b"{"
    last = data.rfind(separator, start)
    if (
        previous_end > _AT_ONCE_AFTER * _SMALL_OBJECT  # the objects so far were not small
        or data[previous_end - 1] != 0x7D
        or data[start] != 0x7B
        or last == -1
    ):
        return None
    run = data[start : last + 1]
    parsed = _parse_run(run, separator)
    if parsed is None or len(parsed[0]) != parsed[1] + 1:  # a comma of the run taken for one
        return None
    return parsed[0], run, last + 1


def _skippable_version(api_version: Any) -> str | None:
    """The normalized form of an apiVersion that makes an object skipped, or None."""
    if type(api_version) is not str:
        return None
    try:
        normalized = normalize_api_version(api_version)
    except ApiVersionError:
        return None
    return None if normalized in _KNOWN else normalized


def _skipped_prefix(objects: list[Any], run: bytes) -> list[str | None] | None:
    """The versions of the leading objects that are skipped, then None for the first object
    that is not (if any); None if the objects might not be what Go's reader finds in ``run``,
    or an object has apiVersion or kind in another case (its keys must be read in order).

    The objects are Go's when each is an object with nothing nested and no brace inside a
    string: then no separator was replaced inside a string or a nested array. The usual run,
    of objects with only apiVersion and kind, shows it in its few distinct values; any other
    needs as many "{" and "}" in ``run`` as objects, and no "[". Each distinct apiVersion and
    kind is looked at once.
    """
    try:  # itemgetter refuses anything but objects (TypeError), as orjson makes no other mapping
        versions: list[Any] = list(map(_API_VERSION, objects))
        kinds: set[Any] = set(map(_KIND, objects))  # refuses objects and arrays (TypeError)
        distinct = set(versions)
        only_type_fields = set(map(len, objects)) == {2}
    except (TypeError, KeyError):
        return _skipped_prefix_of_any_objects(objects, run)
    if not only_type_fields:
        return _skipped_prefix_of_any_objects(objects, run)
    if any(type(value) is str and ("{" in value or "}" in value) for value in distinct | kinds):
        return None
    outcome = {version: _skippable_version(version) for version in distinct}
    results: list[str | None] = (
        versions  # already normalized, as is usual
        if all(key == value for key, value in outcome.items())
        else list(map(outcome.__getitem__, versions))
    )
    return _cut_at_the_first_stop(results, outcome, kinds, objects)


def _skipped_prefix_of_any_objects(objects: list[Any], run: bytes) -> list[str | None] | None:
    if (
        set(map(type, objects)) != {dict}
        or run.count(b"{") != len(objects)
        or run.count(b"}") != len(objects)
        or b"[" in run
    ):
        return None
    from dra_metadata._decoding._unmarshal import type_meta_key  # noqa: PLC0415 - rare

    if any(type_meta_key(key) for key in set().union(*objects) - _TOP_LEVEL_KEYS):
        return None
    versions = [item.get("apiVersion") for item in objects]
    outcome = {version: _skippable_version(version) for version in set(versions)}
    results: list[str | None] = list(map(outcome.__getitem__, versions))
    kinds = {item.get("kind") for item in objects}
    return _cut_at_the_first_stop(results, outcome, kinds, objects)


def _cut_at_the_first_stop(
    results: list[str | None], outcome: dict[Any, str | None], kinds: set[Any], objects: list[Any]
) -> list[str | None]:
    """``results`` up to the first object that is not skipped, which becomes None."""
    stop = results.index(None) if None in outcome.values() else len(results)
    unusable_kinds = {kind for kind in kinds if type(kind) is not str or not kind}
    if unusable_kinds:
        each = [item.get("kind") for item in objects]
        stop = min(stop, list(map(unusable_kinds.__contains__, each)).index(True))
    if stop < len(results):
        del results[stop:]
        results.append(None)
    return results


_API_VERSION = itemgetter("apiVersion")
_KIND = itemgetter("kind")


# The stream.


def _no_compatible_version(skipped: list[str], path: Path | None) -> NoCompatibleVersionError:
    named = shown_names(skipped)
    return NoCompatibleVersionError(
        f"no compatible metadata version found in stream (unknown versions: {named}); "
        f"this library reads {', '.join(KNOWN_API_VERSIONS)}",
        unknown_versions=tuple(skipped),
        path=path,
    )


def decode_bytes(data: bytes, path: Path | None = None) -> DecodeResult:
    """decode_stream for bytes, naming ``path`` in errors.

    A writer's stream of two versions is decoded on the shortest way: the first object ends
    at the separator near the middle (see `_first_object_end`) and is of a known version, with
    no other members. Anything else goes through `_decode_objects`, object by object.
    """
    middle = len(data) >> 1
    low = middle - _WINDOW if middle > _WINDOW else 0
    end = data.find(_WRITER_SEPARATOR, low, middle + _WINDOW) + 1
    if end <= 0 or data[0] != 0x7B:
        return _decode_objects(data, path, None)
    try:
        value = orjson.loads(data[:end])
    except orjson.JSONDecodeError:
        return _decode_objects(data, path, None)
    if (
        type(value) is dict
        and value.keys() <= _TOP_LEVEL_KEYS
        and value.get("kind") == KIND
        and type(api_version := value.get("apiVersion")) is str
        and api_version in _KNOWN
    ):
        try:
            return build_result(metadata_from_wire(value, api_version), api_version, (), ())
        except WireTypeError as error:
            raise _field_error(error, api_version, 1, path) from None
        except NeedsExactPath:
            pass
    return _decode_objects(data, path, (value, end))


def _decode_objects(data: bytes, path: Path | None, first: tuple[Any, int] | None) -> DecodeResult:
    """The objects of the stream in turn, up to the first of a known version; ``first`` is the
    first object and where it ends, when read already."""
    size = len(data)
    position = 0 if data[:1] == b"{" else _WHITESPACE.match(data).end()  # type: ignore[union-attr]
    index = 0
    skipped: list[str] = []
    previous_end = 0
    while position < size and data[position] not in _END_OF_STREAM:
        if len(skipped) == _AT_ONCE_AFTER:
            outcome = _skip_at_once(data, previous_end, position, index, path, skipped)
            if type(outcome) is DecodeResult:
                return outcome
            if outcome is not None:
                previous_end, index = outcome  # type: ignore[misc]
                position = _WHITESPACE.match(data, previous_end).end()  # type: ignore[union-attr]
                continue
        index += 1
        value, end = _read_object(data, position, index, path, first if index == 1 else None)
        if not (  # the usual case is classified with as few calls as can be
            type(value) is dict
            and value.get("kind") == KIND
            and type(api_version := value.get("apiVersion")) is str
            and api_version in _KNOWN
        ):
            api_version = _object_api_version(value, index, path)
        if api_version in _KNOWN:
            try:
                metadata = _decode_known(value, api_version, index, path)
            except NeedsExactPath:
                value, _ = _read_value_exactly(data, position)
                metadata = _decode_known(value, api_version, index, path)
            return build_result(metadata, api_version, tuple(skipped), ())
        skipped.append(api_version)
        previous_end = end
        position = _WHITESPACE.match(data, end).end()  # type: ignore[union-attr]
    if skipped:
        raise _no_compatible_version(skipped, path)
    raise NoMetadataError(
        "no metadata objects found in stream: it is empty or holds only whitespace "
        "(a file may be in the middle of being written)",
        path=path,
    )


def _skip_at_once(
    data: bytes,
    previous_end: int,
    position: int,
    index: int,
    path: Path | None,
    skipped: list[str],
) -> DecodeResult | tuple[int, int] | None:
    """Skip the run of small objects at ``position`` at once, if it is one (`_objects_at_once`).

    Returns the result when the run holds an object of a known version, else where the run ends
    and the index of its last object; None when the run cannot be read at once. Raises for an
    object of the run that is neither skipped nor known.
    """
    batch = _objects_at_once(data, previous_end, position)
    if batch is None:
        return None
    objects, run, end = batch
    found = _skipped_prefix(objects, run)
    if found is None:
        return None
    index += len(found)
    if found[-1] is None:  # an object that is not skipped: known, or fatal
        value = objects[len(found) - 1]
        api_version = _object_api_version(value, index, path)
        try:
            metadata = _decode_known(value, api_version, index, path)
        except NeedsExactPath:  # a number in a field of another type: read one by one
            return None
        skipped.extend(found[:-1])  # type: ignore[arg-type]
        return build_result(metadata, api_version, tuple(skipped), ())
    skipped.extend(found)  # type: ignore[arg-type]
    return end, index


def _read_object(
    data: bytes, position: int, index: int, path: Path | None, read: tuple[Any, int] | None
) -> tuple[Any, int]:
    """The value at ``position`` (or ``read``: the value and its end, read already), read
    exactly again when orjson's reading is not enough."""
    try:
        value, end = read or _read_value(data, position, first=index == 1)
        if (
            type(value) is dict
            and not value.keys() <= _TOP_LEVEL_KEYS
            and _has_type_meta_in_another_case(value)
        ):
            value, end = _read_value_exactly(data, position)
    except _ReadError as error:
        message = f"{error.message} at byte {error.offset}"
        if error.truncated:
            message += _TRUNCATED_HINT
        else:
            from dra_metadata._decoding._hints import syntax_hint  # noqa: PLC0415 - on errors only

            message += syntax_hint(data, position, error.offset, index, path)
        raise MetadataDecodeError(
            f"read metadata object from stream: object {index}: {message}",
            path=path,
            object_index=index,
            truncated=error.truncated,
        ) from None
    return value, end


def resolve_profile(validate: bool | Profile) -> Profile | None:
    """The validation profile a ``validate=`` option asks for, or None for no validation."""
    if validate is False:
        return None
    if validate is True:
        return "metadata"
    if validate in {"metadata", "strict"}:
        return validate
    raise ValueError(f"validate must be False, True, 'metadata' or 'strict', not {validate!r}")


def _as_bytes(data: object) -> bytes:
    """The bytes of anything but bytes itself (decode_stream takes bytes as they are)."""
    if isinstance(data, str):
        # A str stands for the bytes it was decoded from: lone surrogates that "surrogateescape"
        # made of undecodable bytes become those bytes again (and then U+FFFD, as in Go).
        try:
            return data.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return data.encode("utf-8", "surrogatepass")
    if isinstance(data, bytes):
        return bytes(data)
    try:
        return bytes(memoryview(data))  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"data must be bytes (or bytes-like) or str, not {type(data).__name__}"
        ) from None


def decode_stream(data: bytes | str, *, validate: bool | Profile = False) -> DecodeResult:
    """Decode a metadata stream as the Go reference does and return the first usable object.

    Raises MetadataDecodeError (and its subclasses NoMetadataError, NoCompatibleVersionError)
    naming the object and the field at fault. With ``validate`` (True for the upstream rules,
    "strict" for the API server's too), the findings are in ``.errors``; the object is
    returned all the same. A str is taken as the UTF-8 bytes it stands for.

    Examples:
        >>> stream = (
        ...     b'{"apiVersion": "metadata.resource.k8s.io/v2", "kind": "DeviceMetadata"}\\n'
        ...     b'{"apiVersion": "metadata.resource.k8s.io/v1beta1", "kind": "DeviceMetadata",'
        ...     b' "requests": [{"name": "gpu", "devices": [{"name": "gpu-0"}]}]}\\n'
        ... )
        >>> result = dra_metadata.decode_stream(stream, validate=True)
        >>> result.api_version, result.skipped_versions
        ('metadata.resource.k8s.io/v1beta1', ('metadata.resource.k8s.io/v2',))
        >>> for error in result.errors:
        ...     print(error)
        requests[0].devices[0].driver: Required value
        requests[0].devices[0].pool: Required value
    """
    profile = None if validate is False else resolve_profile(validate)
    result = decode_bytes(data if type(data) is bytes else _as_bytes(data))
    if profile is None:
        return result
    from dra_metadata._validation._validate import validate as validate_metadata  # noqa: PLC0415

    errors = validate_metadata(result.metadata, profile=profile)
    return replace(result, errors=errors)
