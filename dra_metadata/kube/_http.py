"""The connection: lightkube's configuration (in-cluster or kubeconfig), an httpx2 client, GETs.

lightkube is imported here and in the watch only, when the API is used. Its configuration
loading (service account, $KUBECONFIG, exec plugins, a token file re-read on 401) is used as
is; requests are made on an httpx2 client built from that configuration, so that a watch can
be read line by line, resumed and stopped on our terms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from dra_metadata._model._errors import KubeAPIError
from dra_metadata._reading._missing import WORDING
from dra_metadata.kube._errors import (
    INSTALL_HINT,
    Target,
    malformed_answer,
    status_error,
    transport_error,
)
from dra_metadata.kube._identity import SERVICE_ACCOUNT_DIR, Resolved, resolve_namespace

if TYPE_CHECKING:
    import httpx2
    from lightkube import AsyncClient, Client
    from lightkube.config.kubeconfig import SingleConfig

REQUEST_TIMEOUT_SECONDS = 10.0
"""Connect, read and write timeout of one request (a watch reads without a timeout of its own)."""


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
    """A configuration to reach one API server, and the namespace of its context."""

    config: SingleConfig
    config_namespace: str | None

    @property
    def server(self) -> str:
        return str(self.config.cluster.server)

    def namespace(self, namespace: str | None) -> Resolved:
        """The namespace to use: see resolve_namespace."""
        return resolve_namespace(namespace, config_namespace=self.config_namespace)

    def _httpx_params(self) -> dict[str, Any]:
        import httpx2  # noqa: PLC0415
        from lightkube.config.client_adapter import ConnectionParams  # noqa: PLC0415
        from lightkube.config.models import User  # noqa: PLC0415
        from lightkube.core.exceptions import ConfigError  # noqa: PLC0415

        config = self.config
        if config.user is None:  # a context without a user: anonymous requests
            config = config._replace(user=User())
        try:
            return ConnectionParams(timeout=httpx2.Timeout(REQUEST_TIMEOUT_SECONDS)).httpx_params(
                config
            )
        except (ConfigError, OSError, ValueError) as error:  # ssl.SSLError is an OSError
            raise KubeAPIError(
                f"the configuration of the Kubernetes API server at {self.server} cannot be "
                f"used: {error}"
            ) from None

    def sync_client(self) -> httpx2.Client:
        import httpx2  # noqa: PLC0415

        return httpx2.Client(**self._httpx_params())

    def async_client(self) -> httpx2.AsyncClient:
        import httpx2  # noqa: PLC0415

        return httpx2.AsyncClient(**self._httpx_params())


def _choose_one() -> str:
    if WORDING.get() == "command":
        return "set KUBECONFIG to a kubeconfig file with a current context"
    return "pass client=lightkube.Client(...) to choose one"


def connect(client: Client | AsyncClient | None) -> Api:
    """The configuration of ``client``, else in-cluster, else $KUBECONFIG or ~/.kube/config."""
    _import_lightkube()
    from lightkube import AsyncClient, Client  # noqa: PLC0415
    from lightkube.config.kubeconfig import KubeConfig  # noqa: PLC0415
    from lightkube.core.exceptions import ConfigError  # noqa: PLC0415

    if client is not None:
        if not isinstance(client, (Client, AsyncClient)):
            raise TypeError(
                f"client must be a lightkube Client or AsyncClient, not {type(client).__name__}"
            )
        return Api(client.config, client.namespace)
    try:
        config = KubeConfig.from_env().get()
    except (ConfigError, KeyError, OSError, ValueError) as error:
        raise KubeAPIError(
            "no Kubernetes API configuration: not in a pod with a ServiceAccount token "
            f"({SERVICE_ACCOUNT_DIR}/token and $KUBERNETES_SERVICE_HOST) and no usable "
            f"kubeconfig ($KUBECONFIG or ~/.kube/config: {error}); {_choose_one()}"
        ) from None
    if config is None:  # get() without a default and without a current context
        raise KubeAPIError(f"the kubeconfig has no current context; {_choose_one()}")
    return Api(config, config.namespace)


def decode_object(target: Target, verb: str, body: bytes) -> Mapping[str, Any]:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise malformed_answer(target, verb, body) from None
    if not isinstance(value, dict):
        raise malformed_answer(target, verb, body)
    return value


def get_object(api: Api, http: httpx2.Client, target: Target) -> Mapping[str, Any]:
    """GET one object; errors as dra_metadata errors."""
    import httpx2  # noqa: PLC0415
    from lightkube.core.exceptions import ConfigError  # noqa: PLC0415

    try:
        response = http.get(target.path)
    except httpx2.RequestError as error:  # no answer: transport, decoding
        raise transport_error(target, "get", api.server, error) from None
    except ConfigError as error:  # the token file or exec plugin, read when sending
        raise KubeAPIError(f"cannot authenticate to {api.server}: {error}") from None
    if response.status_code != 200:
        raise status_error(target, "get", response.status_code, response.content)
    return decode_object(target, "get", response.content)


async def aget_object(api: Api, http: httpx2.AsyncClient, target: Target) -> Mapping[str, Any]:
    """get_object for asyncio."""
    import httpx2  # noqa: PLC0415
    from lightkube.core.exceptions import ConfigError  # noqa: PLC0415

    try:
        response = await http.get(target.path)
    except httpx2.RequestError as error:  # no answer: transport, decoding
        raise transport_error(target, "get", api.server, error) from None
    except ConfigError as error:
        raise KubeAPIError(f"cannot authenticate to {api.server}: {error}") from None
    if response.status_code != 200:
        raise status_error(target, "get", response.status_code, response.content)
    return decode_object(target, "get", response.content)
