"""The configuration of a plain read (_plain_http): the in-cluster ServiceAccount, or a kubeconfig
that uses nothing but a server, its certificate authority, a token and a client certificate.

A one-shot read (_plain_read: ``read_device_health``, so ``dra-metadata health``, a liveness
probe every few seconds for the pod's whole life; the claim status reads) spends most of its
time importing lightkube, httpx2 and asyncio. Where the configuration is one that the standard
library's sockets and TLS can serve with the same result, it is read here, without them; every
other configuration is declined (None), and then the read goes the usual way (_config, _http),
which applies it or says what is wrong with it. So this module never raises and never words an
error: a broken, unusual or unsupported configuration is one it declines, and the usual way
reports it exactly as before.

Declined: a proxy in the environment ($HTTPS_PROXY, $ALL_PROXY: httpx2 would use it); a server
that is not ``https://host[:port][/path]``; no certificate authority (httpx2's trust store would
decide, or insecure-skip-tls-verify); exec plugins, passwords, auth-providers; any field of
the cluster, user or context entry in use that is not one of those below; any value of the
wrong type or empty; any kubeconfig the usual way would refuse (it is checked there).
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from dra_metadata.kube._identity import (
    KUBECONFIG_LIMIT,
    SERVICE_ACCOUNT_DIR,
    in_cluster_service,
    kubeconfig_path,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

DEFAULT_NAMESPACE = "default"  # lightkube's, for a context that names none
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")

_CLUSTER_FIELDS = {
    "server": str,
    "certificate-authority": str,
    "certificate-authority-data": str,
    "insecure-skip-tls-verify": bool,
}
_USER_FIELDS = dict.fromkeys(
    (
        "token",
        "tokenFile",
        "client-certificate",
        "client-certificate-data",
        "client-key",
        "client-key-data",
    ),
    str,
)
_CONTEXT_FIELDS = dict.fromkeys(("cluster", "user", "namespace"), str)
_NOT_NULL = frozenset(("server", "insecure-skip-tls-verify", "cluster"))
"""Fields lightkube's models refuse a null for (the others it takes as not given)."""


class Address:
    """Where the API server is: ``https://host:port`` and the path its API is under."""

    __slots__ = ("base_path", "host", "hostname", "port")

    def __init__(self, host: str, port: int, base_path: str) -> None:
        self.host = host  # as in the URL (brackets around an IPv6 address), for Host:
        self.hostname = host[1:-1] if host.startswith("[") else host  # to connect, for TLS
        self.port = port
        self.base_path = base_path  # "" or "/prefix", without a slash at its end

    def host_header(self) -> str:
        return self.host if self.port == 443 else f"{self.host}:{self.port}"


def server_address(server: object) -> Address | None:
    """``https://host[:port][/path]`` as an Address; None for anything else (http://, user
    info, a query, a fragment, a port that is not a number from 1 to 65535)."""
    if not isinstance(server, str) or not server.startswith("https://"):
        return None
    rest = server[len("https://") :]
    authority, slash, path = rest.partition("/")
    if not authority or any(character in rest for character in "@?#%\\ \t\r\n"):
        return None
    if authority.startswith("["):
        host, bracket, after = authority.partition("]")
        host += bracket
        if not bracket or len(host) < 3 or (after and not after.startswith(":")):
            return None
        port_text = after[1:] if after else "443"
    else:
        host, colon, port_text = authority.partition(":")
        if not host or (colon and not port_text) or ":" in port_text:
            return None
        port_text = port_text or "443"
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        return None
    return Address(host, int(port_text), ("/" + path).rstrip("/") if slash else "")


class PlainCluster:
    """The cluster entry in use, by the attribute names of lightkube's Cluster (for _tls)."""

    __slots__ = ("certificate_auth", "certificate_auth_data", "insecure", "server")

    def __init__(self, entry: Mapping[str, Any]) -> None:
        self.server: str = entry["server"]
        self.certificate_auth: str | None = entry.get("certificate-authority")
        self.certificate_auth_data: str | None = entry.get("certificate-authority-data")
        self.insecure: bool = entry.get("insecure-skip-tls-verify", False)


class PlainUser:
    """The user entry in use, by the attribute names of lightkube's User (for _tls)."""

    __slots__ = (
        "client_cert",
        "client_cert_data",
        "client_key",
        "client_key_data",
        "token",
        "token_file",
    )

    def __init__(self, entry: Mapping[str, Any]) -> None:
        self.token: str | None = entry.get("token")
        self.token_file: str | None = entry.get("tokenFile")
        self.client_cert: str | None = entry.get("client-certificate")
        self.client_cert_data: str | None = entry.get("client-certificate-data")
        self.client_key: str | None = entry.get("client-key")
        self.client_key_data: str | None = entry.get("client-key-data")


class PlainContext:
    """The names of the cluster and user entries in use (for the messages of _tls)."""

    __slots__ = ("cluster", "user")

    def __init__(self, cluster: str, user: str | None) -> None:
        self.cluster = cluster
        self.user = user


class PlainConfig:
    """A configuration a plain read can serve, as _tls reads lightkube's SingleConfig."""

    __slots__ = ("address", "cluster", "context", "fname", "namespace", "source", "user")

    def __init__(
        self,
        *,
        address: Address,
        cluster: PlainCluster,
        user: PlainUser | None,
        context: PlainContext,
        fname: Path | None,
        namespace: str | None,
        source: str,
    ) -> None:
        self.address = address
        self.cluster = cluster
        self.user = user
        self.context = context
        self.fname = fname  # the kubeconfig (relative file names are relative to it)
        self.namespace = namespace  # the configuration's: the context's, or the account's
        self.source = source  # for messages, as _config's Loaded.source


def plain_configuration(service_account_dir: Path = SERVICE_ACCOUNT_DIR) -> PlainConfig | None:
    """The configuration load_configuration would choose, when a plain read can serve it."""
    if any(os.environ.get(variable) for variable in PROXY_VARIABLES) or not _usual_way_installed():
        return None
    service = in_cluster_service(service_account_dir)
    if service is not None:
        return _in_cluster(service_account_dir, *service)
    return _kubeconfig(kubeconfig_path()[0])


def _usual_way_installed() -> bool:
    """Whether the kube extra is installed: a plain read serves only what the usual way would
    (without it, the usual way says what to install)."""
    import importlib.util  # noqa: PLC0415

    try:
        return all(importlib.util.find_spec(name) is not None for name in ("lightkube", "httpx2"))
    except (ImportError, ValueError):
        return False


def _text(path: Path) -> str:
    """A file's text, stripped ("" when it cannot be read or is not UTF-8)."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _in_cluster(account: Path, host: str, port: str) -> PlainConfig | None:
    if not _text(account / "token"):
        return None  # unreadable or empty: _config says which
    if ":" in host:  # IPv6
        host = f"[{host}]"
    server = f"https://{host}:{port}"
    address = server_address(server)
    if address is None:
        return None
    cluster = PlainCluster({"server": server, "certificate-authority": str(account / "ca.crt")})
    return PlainConfig(
        address=address,
        cluster=cluster,
        user=PlainUser({"tokenFile": str(account / "token")}),
        context=PlainContext("default", "default"),  # lightkube's names for from_one()
        fname=None,
        namespace=_text(account / "namespace") or None,
        source=f"the in-cluster ServiceAccount ({account})",
    )


def _document(path: Path) -> object:
    """The kubeconfig's content (None: it cannot be read, or is not YAML)."""
    try:
        with path.open("rb") as file:
            data = file.read(KUBECONFIG_LIMIT + 1)
    except OSError:
        return None
    if len(data) > KUBECONFIG_LIMIT:
        return None
    if data.lstrip()[:1] == b"{":  # JSON, which YAML reads the same (the types are checked)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    try:
        import yaml  # noqa: PLC0415 - lightkube's dependency, as in _config

        return yaml.safe_load(data)
    except Exception:  # noqa: BLE001 - not YAML (or nested too deeply): _config words it
        return None


def _entries(document: Mapping[str, Any], field: str, key: str) -> dict[str, Any] | None:
    """The entries of one list by name, each body as written; None where _config refuses."""
    entries = document.get(field)
    if entries is None:
        return {}
    if not isinstance(entries, list):
        return None
    named: dict[str, Any] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            return None
        body = entry.get(key)
        if body is not None and not isinstance(body, dict):
            return None
        named[entry["name"]] = body or {}
    return named


def _only(entry: object, fields: Mapping[str, type]) -> dict[str, Any] | None:
    """``entry`` when each of its fields is one of ``fields``, of its type and not empty (a
    null is left out, as lightkube reads it, where it takes one), else None."""
    if not isinstance(entry, dict):
        return None
    kept = {}
    for key, value in entry.items():
        if value is None and key not in _NOT_NULL:
            continue
        wanted = fields.get(key)
        if wanted is None or type(value) is not wanted or value == "":
            return None
        kept[key] = value
    return kept


def _in_use(document: Mapping[str, Any]) -> tuple[dict[str, Any], ...] | None:
    """The current context's entry, its cluster's and its user's ({} for none), each holding
    only fields a plain read serves; None where anything else is found."""
    current = document.get("current-context")
    contexts = _entries(document, "contexts", "context")
    clusters = _entries(document, "clusters", "cluster")
    users = _entries(document, "users", "user")
    if not isinstance(current, str) or contexts is None or clusters is None or users is None:
        return None
    context = _only(contexts.get(current), _CONTEXT_FIELDS)
    if context is None or "cluster" not in context:
        return None
    cluster = _only(clusters.get(context["cluster"]), _CLUSTER_FIELDS)
    user = _only(users.get(context["user"]), _USER_FIELDS) if "user" in context else {}
    if cluster is None or user is None:
        return None
    return context, cluster, user


def _kubeconfig(path: Path) -> PlainConfig | None:
    document = _document(path)
    entries = _in_use(document) if isinstance(document, dict) else None
    if entries is None:
        return None
    context, cluster, user = entries
    address = server_address(cluster.get("server"))
    if address is None or not (
        "certificate-authority" in cluster or "certificate-authority-data" in cluster
    ):
        return None  # without one, httpx2's trust store (or none) decides
    return PlainConfig(
        address=address,
        cluster=PlainCluster(cluster),
        user=PlainUser(user) if "user" in context else None,
        context=PlainContext(context["cluster"], context.get("user")),
        fname=path,
        namespace=context.get("namespace") or DEFAULT_NAMESPACE,
        source=f"kubeconfig {path}",
    )
