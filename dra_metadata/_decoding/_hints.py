"""What a syntax error adds when the data is plainly something else than what it says.

Go's syntax error ("invalid character 'o' in literal null") says where the parser stopped, not
that the data starts with a UTF-8 byte order mark, or is no JSON at all (a text, YAML, a binary
file): the hint says so, and for data that is not JSON shows how it begins, escaped so that it
cannot act on a terminal, and cut short.
"""

from __future__ import annotations

from pathlib import Path

PREVIEW_CHARACTERS = 24
"""How much of the beginning a "not JSON" error shows."""
_BYTE_ORDER_MARK = b"\xef\xbb\xbf"
_JSON_OBJECT_STARTS = b"{["
"""What a stream of JSON objects can start with (an array is JSON too: it is refused later)."""


def syntax_hint(data: bytes, position: int, offset: int, index: int, path: Path | None) -> str:
    """What to add to the syntax error at ``offset`` in object ``index`` (from 1), which starts
    at ``position``: a byte order mark there, data that is not JSON, or nothing."""
    if data.startswith(_BYTE_ORDER_MARK, offset):
        return " (a UTF-8 byte order mark, which JSON does not allow)"
    if index == 1 and data[position] not in _JSON_OBJECT_STARTS:
        return not_json(data, position, path)
    return ""


def not_json(data: bytes, position: int, path: Path | None) -> str:
    """What a syntax error in a first value that is no object or array adds: that this is not
    JSON at all (a text, YAML, a binary file), and how it begins, escaped and cut short."""
    window = 4 * PREVIEW_CHARACTERS  # bytes that hold the characters shown, whatever they are
    head = data[position : position + window].decode("utf-8", "surrogateescape")
    shown = "".join(map(_escaped, head[:PREVIEW_CHARACTERS]))
    cut = "..." if len(head) > PREVIEW_CHARACTERS or position + window < len(data) else ""
    what = "the file" if path is not None else "the data"
    return f" ({what} is not JSON: it begins with '{shown}'{cut})"


def _escaped(character: str) -> str:
    """A character of a preview: as Python writes it in a string, a byte that is not UTF-8 as
    ``\\xff``."""
    if "\udc80" <= character <= "\udcff":
        return f"\\x{ord(character) - 0xDC00:02x}"
    return repr(character)[1:-1]  # a quote stays as it is: repr quotes it with the other
