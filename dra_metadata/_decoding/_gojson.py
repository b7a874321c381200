"""An exact JSON parser with the rules of Go's encoding/json, for input orjson refuses.

Go's decoder accepts what orjson does not: invalid UTF-8 inside strings and escaped lone
surrogates (each becomes U+FFFD), numbers of any size (they are only checked for syntax unless a
field needs them), and nesting up to 10000 levels. It also keeps what orjson loses: every key of
an object in order, duplicates included. This parser reproduces that, in time linear in the
value, without recursion:

* an object becomes `Pairs`, a list of (key, value) in document order;
* a number becomes `Number`, its literal text (a str);
* strings are decoded as Go does, arrays are lists, literals are True, False and None.

Syntax errors carry the byte offset and Go's wording ("invalid character 'x' after object
key:value pair"); `truncated` tells data that ends inside the value.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 10000
"""Go's nesting limit: 10000 open objects and arrays; one more is a syntax error."""


class Pairs(list[tuple[str, Any]]):
    """A JSON object: its (key, value) pairs in document order, duplicates kept."""

    __slots__ = ()


class Number(str):
    """A JSON number: its literal text, unconverted (Go checks it only where a field needs it)."""

    __slots__ = ()


class GoSyntaxError(Exception):
    """Invalid JSON at byte `offset`; `truncated` when the data ends inside the value."""

    def __init__(self, message: str, offset: int, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.truncated = truncated


_STRING_BODY = rb'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4})[^"\\\x00-\x1f]*)*'
_NUMBER = rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_TOKEN = re.compile(
    rb'[ \t\r\n]*(?:"(' + _STRING_BODY + rb')"|(' + _NUMBER + rb")|(true|false|null)|([{}\[\],:]))"
)
_STRING, _NUMBER_TOKEN, _LITERAL, _PUNCTUATION = 1, 2, 3, 4
_NUMBER_CONTINUATIONS = frozenset({b".", b"e", b"E"})
_LITERALS: dict[bytes, Any] = {b"true": True, b"false": False, b"null": None}
_WHITESPACE = re.compile(rb"[ \t\r\n]*")

# What the parser expects next; the names say where it is, for Go's error wording.
_VALUE, _VALUE_OR_END, _KEY, _KEY_OR_END, _COLON, _AFTER_MEMBER, _AFTER_ELEMENT = range(7)
_LOOKING_FOR = {
    _VALUE: "looking for beginning of value",
    _VALUE_OR_END: "looking for beginning of value",
    _KEY: "looking for beginning of object key string",
    _KEY_OR_END: "looking for beginning of object key string",
    _COLON: "after object key",
    _AFTER_MEMBER: "after object key:value pair",
    _AFTER_ELEMENT: "after array element",
}

_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))"
)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r"}
_SIMPLE_ESCAPES["t"] = "\t"
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _unescape(match: re.Match[str]) -> str:
    high, low, single, simple = match.groups()
    if high is not None:  # a valid surrogate pair
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
    if single is not None:
        code = int(single, 16)
        return "\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code)
    return _SIMPLE_ESCAPES[simple]


def go_string(raw: bytes) -> str:
    """The content of a JSON string (between the quotes) as Go decodes it.

    Every byte that is not part of valid UTF-8 becomes U+FFFD (one per byte, as Go's
    utf8.DecodeRune consumes them); a lone surrogate escape becomes U+FFFD too.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # surrogateescape turns each bad byte into one lone surrogate
        text = _ESCAPED_BYTE.sub("\ufffd", raw.decode("utf-8", "surrogateescape"))
    if "\\" in text:
        text = _ESCAPE.sub(_unescape, text)
    return text


def quote_char(byte: int) -> str:
    """A byte as Go's scanner quotes it in messages: 'x', '\\'', '"', '\\n', '\\x00'."""
    if byte == 0x27:
        return "'\\''"
    if byte == 0x22:
        return "'\"'"
    if byte == 0x5C:
        return "'\\\\'"
    char = chr(byte)
    if char.isprintable():
        return f"'{char}'"
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    escapes["\v"] = "\\v"
    if char in escapes:
        return f"'{escapes[char]}'"
    return f"'\\x{byte:02x}'" if byte < 0x80 else f"'\\u{byte:04x}'"


def _invalid(data: bytes, offset: int, context: str) -> GoSyntaxError:
    if offset >= len(data):
        return GoSyntaxError("unexpected end of JSON input", offset, truncated=True)
    return GoSyntaxError(f"invalid character {quote_char(data[offset])} {context}", offset)


def _string_error(data: bytes, start: int) -> GoSyntaxError:
    """Where and why the string that opens at ``start`` is invalid.

    The error comes before any closing quote (else the token pattern would have matched the
    string), and the digits of a valid \\u escape are bytes like any other.
    """
    position = start + 1
    size = len(data)
    while position < size:
        byte = data[position]
        if byte < 0x20:
            return _invalid(data, position, "in string literal")
        if byte == 0x5C:
            position += 1
            error = _escape_error(data, position)
            if error is not None:
                return error
        position += 1
    return _invalid(data, size, "")


def _escape_error(data: bytes, position: int) -> GoSyntaxError | None:
    """The error in the escape whose letter is at ``position``, if any."""
    if position >= len(data):
        return _invalid(data, position, "")
    escape = data[position]
    if escape == 0x75:  # \u and four hexadecimal digits
        for offset in range(position + 1, position + 5):
            if offset >= len(data) or data[offset] not in b"0123456789abcdefABCDEF":
                return _invalid(data, offset, "in \\u hexadecimal character escape")
    elif escape not in b'"\\/bfnrt':
        return _invalid(data, position, "in string escape code")
    return None


def _number_error(data: bytes, start: int) -> GoSyntaxError:
    """Where and why the number that starts at ``start`` is invalid (Go's number states)."""
    position = start
    if data[position : position + 1] == b"-":
        position += 1
        if position >= len(data) or not 0x30 <= data[position] <= 0x39:
            return _invalid(data, position, "in numeric literal")
    # Here the number is followed by the '.', 'e' or 'E' the caller saw: digits never run to
    # the end of the data (a '-' and a digit start a number the token pattern matches).
    if data[position] != 0x30:
        while 0x30 <= data[position] <= 0x39:
            position += 1
    else:
        position += 1
    if data[position : position + 1] == b".":
        position += 1
        if position >= len(data) or not 0x30 <= data[position] <= 0x39:
            return _invalid(data, position, "after decimal point in numeric literal")
        while 0x30 <= data[position] <= 0x39:
            position += 1
    # The malformation is in the exponent (the caller saw an 'e' or 'E' cut short).
    position += 1
    if data[position : position + 1] in {b"+", b"-"}:
        position += 1
    return _invalid(data, position, "in exponent of numeric literal")


def _is_cut_short(text: str, following: bytes) -> bool:
    """Whether a number followed by '.', 'e' or 'E' is malformed rather than complete."""
    if "e" in text or "E" in text:
        return False
    return following != b"." or "." not in text


def _literal_error(data: bytes, start: int) -> GoSyntaxError:
    """Where the literal at ``start`` departs from its word (the token pattern refused it, so
    it does so, or the data ends, before the word is complete)."""
    word = {0x74: b"true", 0x66: b"false", 0x6E: b"null"}[data[start]]
    index = 1
    while start + index < len(data) and data[start + index] == word[index]:
        index += 1
    expecting = f"in literal {word.decode()} (expecting '{chr(word[index])}')"
    return _invalid(data, start + index, expecting)


def _token_error(data: bytes, position: int, state: int) -> GoSyntaxError:
    """The error for data at ``position`` (whitespace already skipped) that is no valid token."""
    if position >= len(data):
        return _invalid(data, position, "")
    byte = data[position]
    if byte == 0x22 and state in {_VALUE, _VALUE_OR_END, _KEY, _KEY_OR_END}:
        return _string_error(data, position)
    if state in {_VALUE, _VALUE_OR_END}:
        if byte == 0x2D:  # a digit always starts a number the token pattern matches
            return _number_error(data, position)
        if byte in b"tfn":
            return _literal_error(data, position)
    return _invalid(data, position, _LOOKING_FOR[state])


class _Parser:
    """Go's scanner states for one value: what may come next, and the containers open."""

    __slots__ = ("container", "data", "key", "stack", "state")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.stack: list[tuple[Any, str | None]] = []  # outer containers, with pending keys
        self.container: Any = None
        self.key: str | None = None
        self.state = _VALUE

    def expect(self, states: frozenset[int], offset: int) -> None:
        if self.state not in states:
            raise _invalid(self.data, offset, _LOOKING_FOR[self.state])

    def open(self, char: int, offset: int) -> None:
        self.expect(_BEFORE_VALUE, offset)
        if len(self.stack) >= MAX_DEPTH:
            raise _invalid(self.data, offset, "exceeded max depth")
        self.stack.append((self.container, self.key))
        if char == 0x7B:
            self.container, self.key, self.state = Pairs(), None, _KEY_OR_END
        else:
            self.container, self.key, self.state = [], None, _VALUE_OR_END

    def separate(self, char: int, offset: int) -> None:
        if char == 0x3A:  # :
            self.expect(_BEFORE_COLON, offset)
            self.state = _VALUE
        else:  # ,
            self.expect(_BEFORE_COMMA, offset)
            self.state = _KEY if self.state == _AFTER_MEMBER else _VALUE

    def close(self, char: int, offset: int) -> Any:
        self.expect(_BEFORE_CLOSING_BRACE if char == 0x7D else _BEFORE_CLOSING_BRACKET, offset)
        value = self.container
        self.container, self.key = self.stack.pop()
        return value

    def takes_key(self, key: str) -> bool:
        if self.state in _BEFORE_KEY:
            self.key, self.state = key, _COLON
            return True
        return False

    def done(self, value: Any) -> bool:
        """Put a complete value in its container; True when it is the top-level value."""
        if not self.stack:
            return True
        if type(self.container) is Pairs:
            self.container.append((self.key, value))  # type: ignore[arg-type]  # a key came first
            self.state = _AFTER_MEMBER
        else:
            self.container.append(value)
            self.state = _AFTER_ELEMENT
        return False


_BEFORE_VALUE = frozenset({_VALUE, _VALUE_OR_END})
_BEFORE_KEY = frozenset({_KEY, _KEY_OR_END})
_BEFORE_COLON = frozenset({_COLON})
_BEFORE_COMMA = frozenset({_AFTER_MEMBER, _AFTER_ELEMENT})
_BEFORE_CLOSING_BRACE = frozenset({_KEY_OR_END, _AFTER_MEMBER})
_BEFORE_CLOSING_BRACKET = frozenset({_VALUE_OR_END, _AFTER_ELEMENT})


def _scalar(data: bytes, match: re.Match[bytes]) -> Any:
    """The number or literal a token stands for."""
    if match.lastindex == _LITERAL:
        return _LITERALS[match.group(_LITERAL)]
    text = match.group(_NUMBER_TOKEN).decode("ascii")
    following = data[match.end() : match.end() + 1]
    if following in _NUMBER_CONTINUATIONS and _is_cut_short(text, following):
        raise _number_error(data, match.start(_NUMBER_TOKEN))  # 1.x, 1e+: one bad number
    return Number(text)


def parse_value(data: bytes, start: int) -> tuple[Any, int]:
    """Parse the JSON value that starts at ``start`` (after whitespace) as Go reads a stream.

    Returns the value and the offset just after it; raises GoSyntaxError.
    """
    match_token = _TOKEN.match
    parser = _Parser(data)
    position = start
    while True:
        match = match_token(data, position)
        if match is None:
            end_of_space = _WHITESPACE.match(data, position).end()  # type: ignore[union-attr]
            raise _token_error(data, end_of_space, parser.state)
        kind = match.lastindex
        position = match.end()
        value: Any
        if kind == _PUNCTUATION:
            char = data[position - 1]
            if char in b"{[":
                parser.open(char, position - 1)
                continue
            if char in b",:":
                parser.separate(char, position - 1)
                continue
            value = parser.close(char, position - 1)
        elif kind == _STRING:
            value = go_string(match.group(_STRING))
            if parser.takes_key(value):
                continue
            parser.expect(_BEFORE_VALUE, match.start(_STRING) - 1)
        else:
            parser.expect(_BEFORE_VALUE, match.start(kind))  # type: ignore[arg-type]
            value = _scalar(data, match)
        if parser.done(value):
            return value, position


def to_python(value: Any) -> Any:
    """A parsed value as plain Python data (dicts, lists, int, float, str), without recursion.

    A duplicate key keeps its last value; an integer literal becomes an int of any size and any
    other number a float (infinite when out of range).
    """
    if type(value) is Number:
        return _number(value)
    if type(value) is not Pairs and type(value) is not list:
        return value
    root: list[Any] = [None]
    work: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while work:
        node, parent, slot = work.pop()
        if type(node) is Pairs:
            last = dict(node)  # a duplicate key keeps its first place and its last value
            built: Any = dict.fromkeys(last)
            parent[slot] = built
            work.extend((item, built, key) for key, item in last.items())
        elif type(node) is list:
            built = [None] * len(node)
            parent[slot] = built
            work.extend((item, built, index) for index, item in enumerate(node))
        elif type(node) is Number:
            parent[slot] = _number(node)
        else:
            parent[slot] = node
    return root[0]


_INTEGER = re.compile(r"-?[0-9]+\Z")


def _number(text: str) -> int | float:
    return int(text) if _INTEGER.match(text) else float(text)


_ESCAPES_OF_SURROGATES = re.compile(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2})|.)",
    re.DOTALL,
)


def _replace_lone_surrogate(match: re.Match[str]) -> str:
    return "\\ufffd" if match.group(1) else match.group(0)


def sanitize(data: bytes) -> str | None:
    """``data`` as text in which Go's replacements are made, for a parser that refuses them.

    Invalid UTF-8 bytes become U+FFFD (inside strings this is what Go reads; outside strings a
    byte that is no ASCII stays a syntax error), escaped lone surrogates become ``\\ufffd``.
    None when there is nothing to replace.
    """
    changed = False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = _ESCAPED_BYTE.sub("\ufffd", data.decode("utf-8", "surrogateescape"))
        changed = True
    if "\\ud" in text or "\\uD" in text:
        replaced = _ESCAPES_OF_SURROGATES.sub(_replace_lone_surrogate, text)
        changed = changed or replaced != text
        text = replaced
    return text if changed else None
