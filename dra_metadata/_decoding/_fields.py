"""Checking one wire field against its Go type, as Go's JSON decoding does.

Each checker takes the parsed value and the wire path of the field, returns the value (None,
``null``, gives the Go zero value) or raises WireTypeError naming the field; a number orjson
cannot give exactly (a float where an integer belongs, an integer beyond 64 bits in a kept
JSON value) raises NeedsExactPath, and the exact parser reads the object instead. ``_convert``
builds the models from these.
"""

from __future__ import annotations

from datetime import datetime, timezone

from dra_metadata._decoding._gotime import TimeFormatError, parse_rfc3339
from dra_metadata._model._checks import INT64_MAX, INT64_MIN

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, NoReturn


class WireTypeError(Exception):
    """A value of the wrong JSON type; `field` is its wire path."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def describe(value: object) -> str:
    """A JSON-flavoured description of a parsed value for error messages."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _fail(path: str, expected: str, value: object) -> NoReturn:
    if type(value) is float:  # orjson's reading of a number: the message quotes it as written
        raise NeedsExactPath
    raise WireTypeError(path, f"expected {expected}, got {describe(value)}")


# Scalars. Each takes the value and the path of the field; None means "unset" (Go zero value).


def _str(value: object, path: str) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    _fail(path, "a string", value)


def _int64(value: object, path: str) -> int:
    if value is None:
        return 0
    if type(value) is int and INT64_MIN <= value <= INT64_MAX:
        return value
    _fail(path, "an integer in the int64 range", value)


def _optional_int64(value: object, path: str) -> int | None:
    return None if value is None else _int64(value, path)


def _optional_bool(value: object, path: str) -> bool | None:
    if value is None or value is True or value is False:
        return value
    _fail(path, "true or false", value)


_GO_ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)


def _time(value: object, path: str) -> datetime | None:
    if value is None:
        return None
    if type(value) is not str:
        _fail(path, "an RFC 3339 time string", value)
    try:
        parsed = parse_rfc3339(value)
    except TimeFormatError as error:
        raise WireTypeError(path, f"not an RFC 3339 time ({error}): {value!r}") from None
    return None if parsed == _GO_ZERO_TIME else parsed


def _object(value: object, path: str) -> dict[str, Any]:
    if type(value) is dict:
        return value
    if value is None:
        return {}
    _fail(path, "an object", value)


def _list(value: object, path: str) -> list[Any]:
    if type(value) is list:
        return value
    if value is None:
        return []
    _fail(path, "an array", value)


_STR_ONLY = frozenset({str})


def _str_tuple(value: object, path: str) -> tuple[str, ...]:
    items = _list(value, path)
    if set(map(type, items)) <= _STR_ONLY:
        return tuple(items)
    return tuple(_str(item, f"{path}[{index}]") for index, item in enumerate(items))


def _str_map(value: object, path: str) -> dict[str, str]:
    items = _object(value, path)
    return {key: _str(item, f"{path}[{key}]") for key, item in items.items()}


class NeedsExactPath(Exception):  # noqa: N818 - a signal, not an error
    """The object holds what orjson cannot give exactly: read it with the exact parser."""


class ExactJson:
    """A kept JSON value read by the exact parser (integers exact whatever their size)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_FLOAT_FROM_BIG_INTEGER = 2.0**64  # orjson reads larger integer literals as floats


def _json(value: object, path: str) -> Any:  # noqa: ARG001 - same shape as the other checkers
    """A kept JSON value (fieldsV1), which Go keeps as the bytes of the file.

    orjson turns an integer beyond 64 bits into a float; such an object is read exactly.
    """
    if type(value) is ExactJson:
        return value.value
    pending = [value]
    while pending:
        item = pending.pop()
        if type(item) is dict:
            pending.extend(item.values())
        elif type(item) is list:
            pending.extend(item)
        elif type(item) is float and abs(item) >= _FLOAT_FROM_BIG_INTEGER:
            raise NeedsExactPath
    return value
