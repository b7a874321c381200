"""Output formats of the command: tables and messages shown safely, JSON that always encodes.

Text from files (device names, attribute values, file names) reaches terminals: control
characters in it are escaped, so that a file cannot move the cursor, recolour the terminal or
split a one-line message. JSON is never escaped that way (it is for programs) but always
encodes: file names that are not UTF-8 (``os.fsdecode`` turns their bytes into lone
surrogates) become ``\\udcXX`` escapes, which Python's json module turns back into the same
name, and a stdout that cannot encode the text gets ASCII JSON.
"""

from __future__ import annotations

import codecs
import errno
import io
import json
import os
import re
import stat
import sys
from collections.abc import Iterable

import orjson

import dra_metadata

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, TextIO

    from dra_metadata import DeviceAttribute

# C0 and C1 controls and DEL; Unicode line breaks; invisible and bidirectional formatting
# characters (a file name can read backwards on a terminal); lone surrogates.
_UNSAFE = (  # patterns compiled on first use (re caches them): a JSON show uses none
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)
_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_LONE_SURROGATE = "[\ud800-\udfff]"
_NON_ASCII = "[^\x00-\x7f]"


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    named = _NAMED_ESCAPES.get(character)
    if named is not None:
        return named
    code = ord(character)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """``text`` as a terminal should show it: control and formatting characters escaped."""
    if text.isascii() and text.isprintable():  # " " to "~": nothing to escape, no pattern
        return text
    return re.sub(_UNSAFE, _escape, text)


class OutputError(Exception):
    """Writing the output failed (a full disk, a closed terminal): not the data's fault."""

    def __init__(self, error: OSError) -> None:
        super().__init__(f"cannot write the output: {error.strerror}")
        self.errno = error.errno


class Output:
    """Standard output of a command: text, JSON and raw bytes, with typed write failures.

    BrokenPipeError (the reader went away, as in ``| head -1``) passes through for the caller
    to end quietly; any other failure to write is an OutputError.
    """

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream  # None: stdout was closed before the command started (>&-)

    def is_terminal(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def write(self, text: str) -> None:
        if self.stream is None:
            raise OutputError(OSError(errno.EBADF, "stdout is closed"))
        self._guarded(self.stream.write, text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def write_bytes(self, data: bytes) -> None:
        """Bytes as they are (paths and shell lines must reach scripts exactly)."""
        if self.stream is None:
            raise OutputError(OSError(errno.EBADF, "stdout is closed"))
        buffer = getattr(self.stream, "buffer", None)
        if buffer is None:  # a text-only stream (tests): as near to the bytes as text gets
            self.write(data.decode("utf-8", "surrogateescape"))
            return
        self._guarded(self.stream.flush)
        self._guarded(buffer.write, data)
        self._guarded(buffer.flush)

    def write_json(self, value: object) -> None:
        """One JSON document and a newline, in the stream's encoding if it can hold it."""
        text = json_text(value) + "\n"
        encoding = getattr(self.stream, "encoding", None) or "utf-8"
        if codecs.lookup(encoding).name != "utf-8":
            try:
                text.encode(encoding)
            except UnicodeEncodeError:
                text = re.sub(_NON_ASCII, lambda match: json.dumps(match.group())[1:-1], text)
        self.write(text)

    def flush(self) -> None:
        """Write what is buffered; BrokenPipeError when the reader has gone away.

        A write into a pipe whose reader closes meanwhile can come back short, without an
        error, and Python then drops the rest: the pipe itself says whether its reader is gone.
        """
        if self.stream is None:
            return
        self._guarded(self.stream.flush)
        if _reader_gone(self.stream):
            raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")

    @staticmethod
    def _guarded(action: Any, *arguments: Any) -> None:
        try:
            action(*arguments)
        except BrokenPipeError:
            raise
        except OSError as error:
            if error.errno == errno.EPIPE:
                raise BrokenPipeError(*error.args) from None
            raise OutputError(error) from None


def _reader_gone(stream: TextIO) -> bool:
    """Whether ``stream`` is a pipe or socket that nobody reads any more (poll says POLLERR)."""
    try:
        descriptor = stream.fileno()
        mode = os.fstat(descriptor).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return False
        import select  # noqa: PLC0415 - only for a pipe or socket, not at every start

        poller = select.poll()
        poller.register(descriptor, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False  # no descriptor (a test's StringIO), or closed: nothing to tell
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def json_text(value: object) -> str:
    """Indented JSON; lone surrogates (bytes of names that are not UTF-8) as ``\\udcXX``."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:
        text = json.dumps(value, indent=2, ensure_ascii=False)
        return re.sub(_LONE_SURROGATE, lambda match: f"\\u{ord(match.group()):04x}", text)


def table(rows: list[list[str]], out: Output) -> None:
    """Columns aligned on the widest cell; every cell shown safely."""
    shown = [[safe_text(cell) for cell in row] for row in rows]
    widths = [max(len(row[column]) for row in shown) for column in range(len(shown[0]))]
    for row in shown:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        out.write("  ".join(cells).rstrip() + "\n")


def value_text(value: object) -> str:
    """An attribute value as shells and tables show it: true/false, lists comma-separated."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value_text(item) for item in value)
    return str(value)


def attribute_text(attribute: DeviceAttribute) -> str:
    """The value of an attribute, or what is wrong with it: "(unset)", "(int, string)"."""
    try:
        value = attribute.value
    except dra_metadata.AttributeValueError:
        return "(" + ", ".join(attribute.members) + ")"
    return "(unset)" if value is None else value_text(value)


def standard_output() -> Output:
    """sys.stdout as an Output (None when the command was started with stdout closed)."""
    return Output(sys.stdout)
