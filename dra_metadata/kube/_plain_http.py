"""Plain reads: GETs over the standard library's sockets and TLS, each done by the read's deadline.

For one-shot reads whose configuration _plain_config accepts: one keep-alive HTTP/1.1 connection,
a bearer token or client certificate, JSON answers. It never words a failure of its own: when
anything goes other than an answer read in full (the connection cannot be made or breaks, TLS
fails, the deadline passes, the server answers 401 or in a form this reader does not take), that
GET is made again the usual way (``fallback``: httpx2, on a connection of its own, by the same
deadline), whose answer or error is the result. So a plain read answers what the usual way
answers, and fails as it fails, only sooner when all goes well.

The answer is read by ``read_response`` from what ``receive`` returns, so that any bytes a
server may send can be fed to it in a test: an answer it does not take raises Declined.
"""

from __future__ import annotations

import socket
import ssl

from dra_metadata._model._errors import KubeAPIError
from dra_metadata.kube._errors import decode_object, status_error
from dra_metadata.kube._identity import resolve_namespace

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from dra_metadata.kube._deadline import Deadline
    from dra_metadata.kube._errors import Target
    from dra_metadata.kube._identity import Resolved
    from dra_metadata.kube._plain_config import PlainConfig

LINE_LIMIT = 16 << 10
"""Bytes of a status line, header line or chunk-size line at most."""
HEADER_LIMIT = 256 << 10
"""Bytes of all header (and trailer) lines of an answer at most."""
BODY_LIMIT = 64 << 20
"""Bytes of an answer's body at most (a Pod or ResourceClaim is a few KiB)."""
RECEIVE_BYTES = 64 << 10


class Declined(Exception):  # noqa: N818 - no error: a hand-over to the usual way
    """What happened is not for a plain read to word: the GET is made the usual way."""


class Answer:
    """An HTTP answer read in full: its status, body, and whether the connection stays open."""

    __slots__ = ("body", "keep_alive", "status")

    def __init__(self, status: int, body: bytes, *, keep_alive: bool) -> None:
        self.status = status
        self.body = body
        self.keep_alive = keep_alive


class _Received:
    """What the server sent so far, taken apart line by line or by length."""

    __slots__ = ("data", "receive")

    def __init__(self, receive: Callable[[], bytes]) -> None:
        self.receive = receive
        self.data = bytearray()

    def _more(self) -> None:
        chunk = self.receive()
        if not chunk:
            raise Declined("the connection was closed before the answer was complete")
        self.data += chunk

    def line(self) -> bytes:
        """The next line, without its CRLF."""
        searched = 0
        while True:
            end = self.data.find(b"\r\n", searched, LINE_LIMIT + 2)
            if end >= 0:
                line = bytes(self.data[:end])
                del self.data[: end + 2]
                return line
            if len(self.data) >= LINE_LIMIT + 2:
                raise Declined("a line of the answer is too long")
            searched = max(0, len(self.data) - 1)
            self._more()

    def exactly(self, size: int) -> bytes:
        while len(self.data) < size:
            self._more()
        taken = bytes(self.data[:size])
        del self.data[:size]
        return taken

    def to_the_end(self) -> bytes:
        """Everything up to the close of the connection."""
        while True:
            chunk = self.receive()
            if not chunk:
                break
            self.data += chunk
            if len(self.data) > BODY_LIMIT:
                raise Declined("the answer is too large")
        taken = bytes(self.data)
        self.data.clear()
        return taken


_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")


def _headers(received: _Received) -> dict[bytes, bytes]:
    """The header (or trailer) lines up to the empty one, by lower-case name."""
    headers: dict[bytes, bytes] = {}
    total = 0
    while line := received.line():
        total += len(line)
        if total > HEADER_LIMIT:
            raise Declined("the answer's headers are too long")
        name, colon, value = line.partition(b":")
        if not colon or not name or not name.isascii() or name != name.strip(b" \t"):
            raise Declined("a header line of the answer is not one")  # folded lines included
        key = name.lower()
        value = value.strip(b" \t")
        if key in headers:
            if key in (b"content-length", b"transfer-encoding"):
                raise Declined(f"the answer has more than one {key.decode()} header")
            value = headers[key] + b", " + value
        headers[key] = value
    return headers


def _chunked(received: _Received) -> bytes:
    body = bytearray()
    while True:
        size_text = received.line().partition(b";")[0].strip(b" \t")
        if not size_text or not _HEX_DIGITS.issuperset(size_text) or len(size_text) > 16:
            raise Declined("a chunk size of the answer is not a hexadecimal number")
        size = int(size_text, 16)
        if size == 0:
            break
        if len(body) + size > BODY_LIMIT:
            raise Declined("the answer is too large")
        body += received.exactly(size)
        if received.exactly(2) != b"\r\n":
            raise Declined("a chunk of the answer does not end where its size says")
    _headers(received)  # trailers, if any: nothing of them is used
    return bytes(body)


def _body(received: _Received, headers: dict[bytes, bytes], status: int) -> tuple[bytes, bool]:
    """The body of an answer, and whether it ended with the connection."""
    if b"transfer-encoding" in headers:
        if headers[b"transfer-encoding"].lower() != b"chunked" or b"content-length" in headers:
            raise Declined("the answer's transfer encoding is not chunked alone")
        return _chunked(received), False
    if b"content-length" in headers:
        length = headers[b"content-length"]
        if not length.isdigit() or len(length) > 12 or int(length) > BODY_LIMIT:
            raise Declined("the answer's content length is not one this reader takes")
        return received.exactly(int(length)), False
    if status in (204, 304):
        return b"", False
    return received.to_the_end(), True


def read_response(receive: Callable[[], bytes]) -> Answer:
    """The answer to one request, from the bytes ``receive`` returns (b"": closed); Declined
    for anything but a complete HTTP/1.x answer with a final status and an unencoded body."""
    received = _Received(receive)
    version, _, rest = received.line().partition(b" ")
    code = rest[:3]
    well_formed = code.isdigit() and len(code) == 3 and rest[3:4] in (b"", b" ")
    if version not in (b"HTTP/1.1", b"HTTP/1.0") or not well_formed:
        raise Declined("the answer does not start with an HTTP/1.x status line")
    status = int(code)
    if status < 200:
        raise Declined("the answer is an informational one")
    headers = _headers(received)
    if headers.get(b"content-encoding", b"identity").lower() != b"identity":
        raise Declined("the answer's body is encoded")
    connection = {token.strip().lower() for token in headers.get(b"connection", b"").split(b",")}
    keep_alive = b"close" not in connection and (
        version == b"HTTP/1.1" or b"keep-alive" in connection
    )
    body, until_closed = _body(received, headers, status)
    if until_closed or received.data:  # more than the answer: nothing more is asked on it
        keep_alive = False
    return Answer(status, body, keep_alive=keep_alive)


def _is_visible_ascii(text: str) -> bool:
    """Whether ``text`` is printable ASCII without spaces (what a token may hold)."""
    return text.isascii() and text.isprintable() and " " not in text


def _encoded_host(hostname: str) -> bytes | str:
    """``hostname`` as the bytes the IDNA codec would make of it, when it is ASCII in labels of
    1 to 63 characters (an IP address too): the socket and ssl modules encode a str with that
    codec, whose import costs more than a request; anything else is left to them."""
    if hostname.isascii() and all(0 < len(label) < 64 for label in hostname.split(".")):
        return hostname.encode("ascii")
    return hostname


class PlainConnection:
    """GETs to the server of ``config``, on one connection kept open between them."""

    def __init__(
        self,
        config: PlainConfig,
        deadline: Deadline,
        fallback: Callable[[Target], Mapping[str, Any]],
    ) -> None:
        self.config = config
        self.deadline = deadline
        self.fallback = fallback
        self.context: ssl.SSLContext | None = None
        self.authorization: bytes | None = None
        self.socket: ssl.SSLSocket | None = None

    def namespace(self, namespace: str | None) -> Resolved:
        """The namespace to use, as the usual way's ``Api.namespace`` resolves it."""
        return resolve_namespace(namespace, config_namespace=self.config.namespace)

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    def get(self, target: Target) -> Mapping[str, Any]:
        """The object ``target`` names: as the usual way answers, or fails, for it."""
        try:
            answer = self._ask(target.path)
        # ssl.SSLError and timeouts are OSErrors; UnicodeError: a host name IDNA refuses
        except (Declined, OSError, UnicodeError, KubeAPIError):
            self.close()
            return self.fallback(target)
        if answer.status == 401:
            return self.fallback(target)
        if answer.status != 200:
            raise status_error(target, "get", answer.status, answer.body)
        return decode_object(target, "get", answer.body)

    def _timeout(self) -> float | None:
        remaining = self.deadline.remaining()
        if remaining is not None and remaining <= 0:
            raise Declined("the deadline has passed")
        return remaining

    def _credentials(self) -> bytes:
        if self.authorization is None:
            from dra_metadata.kube._tls import config_file, ssl_context  # noqa: PLC0415

            config, user = self.config, self.config.user
            self.context = ssl_context(config, config.source)  # KubeAPIError: declined
            token = user.token if user is not None else None
            if user is not None and user.token_file is not None:
                token_file = config_file(config, user.token_file, config.source)
                try:
                    token = token_file.read_text(encoding="utf-8").strip()
                except (OSError, UnicodeDecodeError):
                    raise Declined("the token file cannot be read") from None
                if not token:
                    raise Declined("the token file is empty")
            if token is not None and not _is_visible_ascii(token):
                raise Declined("the token is not one header value")  # httpx2 says which
            self.authorization = b"" if token is None else b"Bearer " + token.encode()
        return self.authorization

    def _connected(self) -> ssl.SSLSocket:
        if self.socket is None:
            assert self.context is not None  # noqa: S101 - set by _credentials
            host = _encoded_host(self.config.address.hostname)
            address = (host, self.config.address.port)  # getaddrinfo takes bytes too
            raw = socket.create_connection(address, self._timeout())  # type: ignore[arg-type]
            try:
                # A request waits behind the handshake's last record otherwise (Nagle's
                # algorithm meeting the server's delayed ACK: 40 ms on Linux); httpx2's too.
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.socket = self.context.wrap_socket(raw, server_hostname=host)
            except BaseException:
                raw.close()
                raise
        return self.socket

    def _ask(self, path: str) -> Answer:
        authorization = self._credentials()
        address = self.config.address
        request = (
            f"GET {address.base_path}{path} HTTP/1.1\r\nHost: {address.host_header()}\r\n"
            "Accept: application/json\r\nUser-Agent: dra-metadata\r\n"
        ).encode("ascii")
        if authorization:
            request += b"Authorization: " + authorization + b"\r\n"
        connection = self._connected()
        connection.settimeout(self._timeout())
        connection.sendall(request + b"\r\n")

        def receive() -> bytes:
            connection.settimeout(self._timeout())
            return connection.recv(RECEIVE_BYTES)

        answer = read_response(receive)
        if not answer.keep_alive:
            self.close()
        return answer
