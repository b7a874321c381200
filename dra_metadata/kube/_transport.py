"""The transport of the API client: httpx2's, with connections that a cancel cannot leave open.

httpcore2 closes a new connection's socket when its TLS handshake fails, but not when the task
is cancelled during the handshake (its backend catches Exception, and asyncio.CancelledError is
a BaseException): a read, watch or wait cancelled while a connection was being set up left its
socket open until the garbage collector found it. The streams of this transport's connections
close their socket when a handshake ends in any way other than with a stream.

Only connections made by the transport itself are covered; those to a proxy from the
environment (HTTPS_PROXY) are httpx2's own.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2


class _ClosingStream(httpcore2.AsyncNetworkStream):
    """A connection's stream whose TLS handshake, cancelled, closes the socket."""

    def __init__(self, stream: httpcore2.AsyncNetworkStream) -> None:
        self._stream = stream

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            return await self._stream.start_tls(ssl_context, server_hostname, timeout)
        except BaseException:
            await self._stream.aclose()  # closes the socket before its first await
            raise

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
        return _ClosingStream(stream)

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
