"""Splitting a stream: reading one JSON value at an offset, and where it ends.

A metadata stream is JSON objects one after the other (Go's json.Decoder reads them so). The
fast way guesses where an object ends and lets orjson confirm the guess; the exact parser
(``_gojson``) reads what orjson refuses, stopping where Go's reader stops. ``_decode`` decides
what each value is.
"""

from __future__ import annotations

import re

import orjson

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

_SEPARATOR = re.compile(rb"\}[ \t\r\n]*\{")
"""Where the next object may start: objects are separated by whitespace or nothing, and a raw
newline cannot occur inside a string (a "}{" inside one only makes a guess fail)."""


_WRITER_SEPARATOR = b"}\n{"


_WINDOW = 64


_UNEXPECTED_CONTENT = "unexpected content after document"


_UNEXPECTED_END = "unexpected end of data"


_SMALL_OBJECT = 1024


_GUESSES = 4
"""How many separators are tried as the end of an object after the first (one that lies in a
string only makes a guess fail) before the exact parser reads it."""


def _char_offset_to_bytes(data: bytes, start: int, characters: int) -> int:
    """orjson counts positions in characters; the byte offset of one, from ``start``.

    Only called for positions orjson parsed up to, which are valid UTF-8.
    """
    prefix = data[start : start + 4 * characters]
    if prefix[:characters].isascii():
        return characters
    return len(prefix.decode("utf-8", "ignore")[:characters].encode("utf-8"))


def _first_object_end(data: bytes, start: int) -> int:
    """Where the first object ends, if a guess finds it, else -1 (the guess is checked by
    parsing up to there).

    A writer emits the same object once per version, "}\\n{" between them (which occurs
    nowhere else in its output): in a stream of two (or three) versions the first separator
    lies near the middle (or the first third), as far from it as the names of the versions
    differ in length. Else, a small first object ends at the first "}{" (or "}", whitespace,
    "{").
    """
    for parts in (2, 3):
        middle = start + (len(data) - start) // parts
        found = data.find(_WRITER_SEPARATOR, max(start, middle - _WINDOW), middle + _WINDOW)
        if found > start:
            return found + 1
    separator = _SEPARATOR.search(data, start, start + _SMALL_OBJECT)
    return -1 if separator is None else separator.start() + 1


def _read_value(data: bytes, start: int, *, first: bool) -> tuple[Any, int]:
    """The JSON value at ``start`` and the offset just after it.

    The fast way guesses where the value ends and lets orjson confirm the guess by parsing
    exactly that much (a JSON value that parses whole is what Go's stream reader reads there).
    When that fails, the exact parser reads the value from ``start``: it stops where Go's
    reader stops, so it reads only the value, and it raises _ReadError.
    """
    if first:
        read = _read_first_value(data, start)
        if read is not None:
            return read
    return _read_up_to_a_separator(data, start, whole_rest=not first)


def _read_first_value(data: bytes, start: int) -> tuple[Any, int] | None:
    """The first value, where a guess finds its end or orjson reports it; else None."""
    loads = orjson.loads
    end = _first_object_end(data, start)
    if end != -1:
        try:
            return loads(data[start:end]), end
        except orjson.JSONDecodeError:
            pass
    try:  # a stream of one object, or a first object whose end orjson reports
        return loads(data[start:] if start else data), len(data)
    except orjson.JSONDecodeError as error:
        if error.msg == _UNEXPECTED_CONTENT:
            end = start + _char_offset_to_bytes(data, start, error.pos)
            try:
                return loads(data[start:end]), end
            except orjson.JSONDecodeError:
                pass
    return None


def _read_up_to_a_separator(data: bytes, start: int, *, whole_rest: bool) -> tuple[Any, int]:
    """The value that ends at one of the next separators (with ``whole_rest``, or at the end
    of the data), else the exact parser's reading of it.

    A separator inside a string makes orjson find the value cut short: the next one is tried,
    a few times only, as each guess parses more. Any other refusal needs the exact parser.
    """
    loads = orjson.loads
    guesses = 0
    for separator in _SEPARATOR.finditer(data, start):
        end = separator.start() + 1
        try:
            return loads(data[start:end]), end
        except orjson.JSONDecodeError as error:
            guesses += 1
            if error.msg != _UNEXPECTED_END or guesses == _GUESSES:
                return _read_value_exactly(data, start)
    if whole_rest:  # the last value: no separator after it, or only inside its strings
        try:
            return loads(data[start:]), len(data)
        except orjson.JSONDecodeError:
            pass
    return _read_value_exactly(data, start)


class _ReadError(Exception):
    """A syntax error of the exact parser: Go's message, the byte offset, truncation."""

    def __init__(self, message: str, offset: int, *, truncated: bool) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.truncated = truncated


def _read_value_exactly(data: bytes, start: int) -> tuple[Any, int]:
    from dra_metadata._decoding._gojson import GoSyntaxError, parse_value  # noqa: PLC0415 - rare

    try:
        return parse_value(data, start)
    except GoSyntaxError as error:
        raise _ReadError(error.message, error.offset, truncated=error.truncated) from None


# Many small objects at once.


def _go_text(data: bytes) -> str | None:
    """``data`` with what Go replaces replaced (invalid UTF-8, escaped lone surrogates), or None
    when there is nothing of the kind, i.e. when orjson refused it for another reason."""
    from dra_metadata._decoding._gojson import sanitize  # noqa: PLC0415 - rare

    return sanitize(data)


def _parse_run(run: bytes, separator: bytes) -> tuple[list[Any], int] | None:
    """The run parsed as one array, a comma put after the "}" of each separator, and how many
    separators there were (after Go's replacements of invalid UTF-8 and escaped lone
    surrogates if orjson refuses it); None if it is no array."""
    array = run.replace(separator, b"}," + separator[1:])
    try:
        return orjson.loads(b"[" + array + b"]"), len(array) - len(run)
    except orjson.JSONDecodeError:
        text = _go_text(run)
    if text is None:
        return None
    separator_text = separator.decode()
    array_text = text.replace(separator_text, "}," + separator_text[1:])
    try:
        return orjson.loads("[" + array_text + "]"), len(array_text) - len(text)
    except orjson.JSONDecodeError:
        return None
