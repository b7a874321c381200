"""The connection: a configuration (in-cluster or kubeconfig), an httpx2 client, GETs, deadlines.

lightkube is imported here and in the watch only, when the API is used. The configuration is
loaded and checked by _config, its TLS by _tls, its credentials by _credentials (lightkube's
models, our checks); requests are made on an httpx2 AsyncClient built from it, so that a watch
can be read line by line, resumed and stopped on our terms, and so that a request can be
cancelled as a whole at its deadline: httpx2's time-outs bound each read, which a server sending
a byte now and then never reaches. The synchronous reads run on a private event loop (_sync).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from dra_metadata._model._errors import KubeAPIError
from dra_metadata.kube._deadline import REQUEST_TIMEOUT_SECONDS, Deadline
from dra_metadata.kube._errors import (
    INSTALL_HINT,
    Target,
    deadline_error,
    decode_object,
    status_error,
    transport_error,
)
from dra_metadata.kube._identity import Resolved, resolve_namespace

if TYPE_CHECKING:
    import httpx2
    from lightkube import AsyncClient, Client
    from lightkube.config.kubeconfig import SingleConfig

_T = TypeVar("_T")


async def within(
    deadline: Deadline, step: Coroutine[Any, Any, _T], expired: Callable[[], Exception]
) -> _T:
    """The result of ``step``, cancelled when ``deadline`` passes: then ``expired()`` is raised.

    ``step`` runs in the calling task, not in a task of its own (as asyncio.wait_for does
    before 3.12): a response opened in one step is read and closed in others of the same task,
    which httpcore's connection pool needs.
    """
    remaining = deadline.remaining()
    if remaining is None:
        return await step
    if sys.version_info >= (3, 11):
        try:
            async with asyncio.timeout(remaining):
                return await step
        except TimeoutError:
            if not deadline.passed():  # not the deadline's: raised by the step itself
                raise
            raise expired() from None
    task = asyncio.current_task()
    assert task is not None  # noqa: S101 - called from a coroutine
    fired = False

    def fire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    handle = asyncio.get_running_loop().call_later(remaining, fire)
    try:
        return await step
    except asyncio.CancelledError:
        if not fired:
            raise
        raise expired() from None
    finally:
        handle.cancel()


def _import_lightkube() -> None:
    try:
        import httpx2  # noqa: F401, PLC0415
        import lightkube  # noqa: F401, PLC0415
    except ImportError as error:
        raise KubeAPIError(
            f"reading from the Kubernetes API needs lightkube ({error}): {INSTALL_HINT}"
        ) from None


@dataclass(frozen=True, slots=True)
class Api:
    """A configuration to reach one API server, the namespace of its context, where it is from."""

    config: SingleConfig
    config_namespace: str | None
    source: str = "the configuration of client="

    @property
    def server(self) -> str:
        return str(self.config.cluster.server)

    def namespace(self, namespace: str | None) -> Resolved:
        """The namespace to use: see resolve_namespace."""
        return resolve_namespace(namespace, config_namespace=self.config_namespace)

    def async_client(self, timeout: float | None = REQUEST_TIMEOUT_SECONDS) -> httpx2.AsyncClient:
        """A client for this server: its TLS, its credentials (checked: KubeAPIError)."""
        import httpx2  # noqa: PLC0415

        from dra_metadata.kube._credentials import auth  # noqa: PLC0415
        from dra_metadata.kube._tls import ssl_context  # noqa: PLC0415
        from dra_metadata.kube._transport import closing_transport  # noqa: PLC0415

        verify = ssl_context(self.config, self.source)
        return httpx2.AsyncClient(
            base_url=self.server,
            verify=verify,
            transport=closing_transport(verify),
            auth=auth(self.config, self.source),
            timeout=httpx2.Timeout(timeout),
            trust_env=True,
        )


def connect(client: Client | AsyncClient | None) -> Api:
    """The configuration of ``client``, else in-cluster, else $KUBECONFIG or ~/.kube/config."""
    _import_lightkube()
    from lightkube import AsyncClient, Client  # noqa: PLC0415

    from dra_metadata.kube._config import load_configuration  # noqa: PLC0415

    if client is not None:
        if not isinstance(client, (Client, AsyncClient)):
            raise TypeError(
                f"client must be a lightkube Client or AsyncClient, not {type(client).__name__}"
            )
        config = client.config
        source = (
            f"kubeconfig {config.fname} (of client=)"
            if config.fname is not None
            else "the configuration of client="
        )
        return Api(config, client.namespace, source)
    loaded = load_configuration()
    return Api(loaded.config, loaded.namespace, loaded.source)


async def aget_object(
    api: Api, http: httpx2.AsyncClient, target: Target, deadline: Deadline | None = None
) -> Mapping[str, Any]:
    """GET one object, done by ``deadline`` (the caller's ``timeout=``; default: a deadline of
    REQUEST_TIMEOUT_SECONDS from now, as for the GETs of a watch)."""
    import httpx2  # noqa: PLC0415

    from dra_metadata.kube._credentials import exec_plugin_running  # noqa: PLC0415

    by = deadline or Deadline.after(REQUEST_TIMEOUT_SECONDS)

    async def get() -> httpx2.Response:
        return await http.get(target.path)

    def expired() -> KubeAPIError:
        plugin = exec_plugin_running(http)
        adjustable = deadline is not None
        return deadline_error(target, "get", api.server, by.seconds, plugin, adjustable=adjustable)

    try:
        response = await within(by, get(), expired)
    except httpx2.TimeoutException:  # a connect, read or write time-out: also the deadline
        raise expired() from None
    except httpx2.RequestError as error:  # no answer: transport, decoding
        raise transport_error(target, "get", api.server, error) from None
    if response.status_code != 200:
        raise status_error(target, "get", response.status_code, response.content)
    return decode_object(target, "get", response.content)


def get_by_itself(api: Api, deadline: Deadline, target: Target) -> Mapping[str, Any]:
    """One GET, on a connection of its own, done by the deadline."""
    from dra_metadata.kube._sync import run  # noqa: PLC0415

    async def get() -> Mapping[str, Any]:
        async with api.async_client(deadline.httpx_timeout()) as http:
            return await aget_object(api, http, target, deadline)

    return run(get)
