"""The transport of the API client: httpx2's, with connections that a cancel cannot leave open
and TLS failures that always reach httpx2 as its own errors.

httpcore2 closes a new connection's socket when its TLS handshake fails, but not when the task
is cancelled during the handshake (its backend catches Exception, and asyncio.CancelledError is
a BaseException): a read, watch or wait cancelled while a connection was being set up left its
socket open until the garbage collector found it. The streams of this transport's connections
close their socket when a handshake ends in any way other than with a stream.

httpcore2 maps a TLS error of the handshake to a ConnectError, but lets one raised by a read or
write of the encrypted stream through as a bare ssl.SSLError. With TLS 1.3 a server's refusal
of the client (no client certificate, or one it does not accept) arrives after the handshake,
on the first read: the streams here raise httpcore2's ReadError and WriteError for it (from the
SSLError), which httpx2 maps as it maps every other transport failure. Often that alert never
arrives: the server closes the connection with the request unread, which resets it, and the
reset discards what the client had not read yet. So when the first read or write of a TLS 1.3
connection fails before a byte of the answer came, the server is asked once more on a fresh
connection on which nothing is sent (its close then resets nothing): the alert it sends there
is the error raised, from which the message names the TLS failure.

Only connections made by the transport itself are covered; those to a proxy from the
environment (HTTPS_PROXY) are httpx2's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NoReturn

import httpcore2
import httpx2

REFUSAL_PROBE_SECONDS = 2.0
"""How long the fresh connection that asks for a server's TLS alert waits for one."""


async def server_refusal(
    address: tuple[str, int], context: ssl.SSLContext, hostname: str | None
) -> ssl.SSLError | None:
    """The TLS alert with which the server at ``address`` ends a connection on which this
    client sends nothing (None: it ends none within REFUSAL_PROBE_SECONDS)."""

    async def probe() -> None:
        reader, writer = await asyncio.open_connection(
            address[0], address[1], ssl=context, server_hostname=hostname
        )
        try:
            await reader.read(1)
        finally:
            writer.close()
            with contextlib.suppress(OSError, ssl.SSLError):
                await writer.wait_closed()

    try:
        await asyncio.wait_for(probe(), REFUSAL_PROBE_SECONDS)
    except ssl.SSLError as error:
        return error
    except (OSError, asyncio.TimeoutError):
        return None
    return None


def _raise_from(kind: type[httpcore2.NetworkError], alert: ssl.SSLError) -> NoReturn:
    """Raise ``kind`` for ``alert`` with the alert as its context too: httpcore2's pool
    re-raises errors ``from None``, which drops their cause but keeps their context."""
    try:
        raise alert
    except ssl.SSLError:
        raise kind(str(alert)) from alert


class _ClosingStream(httpcore2.AsyncNetworkStream):
    """A connection's stream whose TLS handshake, cancelled, closes the socket, and whose
    reads and writes raise httpcore2's errors for a TLS failure (see the module)."""

    def __init__(
        self,
        stream: httpcore2.AsyncNetworkStream,
        address: tuple[str, int] | None = None,
        refusal: Callable[[], Awaitable[ssl.SSLError | None]] | None = None,
    ) -> None:
        self._stream = stream
        self._address = address  # where it connected to (None: a Unix socket)
        self._refusal = refusal  # until the first byte is read

    async def _alert(self) -> ssl.SSLError | None:
        """The server's TLS alert, asked for once, before anything was read (see the module)."""
        refusal, self._refusal = self._refusal, None
        return None if refusal is None else await refusal()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            data = await self._stream.read(max_bytes, timeout)
        except ssl.SSLError as error:
            raise httpcore2.ReadError(str(error)) from error
        except httpcore2.ReadError:
            alert = await self._alert()
            if alert is None:
                raise
            _raise_from(httpcore2.ReadError, alert)
        self._refusal = None
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            await self._stream.write(buffer, timeout)
        except ssl.SSLError as error:
            raise httpcore2.WriteError(str(error)) from error
        except httpcore2.WriteError:
            alert = await self._alert()
            if alert is None:
                raise
            _raise_from(httpcore2.WriteError, alert)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            stream = await self._stream.start_tls(ssl_context, server_hostname, timeout)
        except BaseException:
            await self._stream.aclose()  # closes the socket before its first await
            raise
        ssl_object = stream.get_extra_info("ssl_object")
        address = self._address
        if address is None or ssl_object is None or ssl_object.version() != "TLSv1.3":
            return _ClosingStream(stream)

        async def refusal() -> ssl.SSLError | None:
            return await server_refusal(address, ssl_context, server_hostname)

        return _ClosingStream(stream, refusal=refusal)  # the encrypted stream, reads and writes

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _ClosingBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's backend, its streams wrapped in _ClosingStream."""

    def __init__(self, backend: httpcore2.AsyncNetworkBackend) -> None:
        self._backend = backend

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._backend.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return _ClosingStream(stream, (host, port))

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._backend.connect_unix_socket(
            path, timeout=timeout, socket_options=socket_options
        )
        return _ClosingStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def closing_transport(verify: ssl.SSLContext) -> httpx2.AsyncHTTPTransport:
    """An httpx2 transport for the API server whose new connections close on a cancel.

    httpx2 does not take a network backend: the pool it made is given one before any
    connection exists (tests/kube/test_kube_deadline.py fails if httpx2 stops keeping it there).
    """
    transport = httpx2.AsyncHTTPTransport(verify=verify)
    pool = transport._pool  # noqa: SLF001 - see above
    if not isinstance(pool, httpcore2.AsyncConnectionPool):
        raise TypeError(f"httpx2's transport holds a {type(pool).__name__}, not a pool")
    pool._network_backend = _ClosingBackend(pool._network_backend)  # noqa: SLF001
    return transport
