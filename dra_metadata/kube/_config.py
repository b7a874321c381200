"""Which API server, as whom: the in-cluster ServiceAccount, else the kubeconfig, checked.

lightkube's loader (``KubeConfig.from_env``) lets a broken kubeconfig through as whatever its
parser raises (an AttributeError for an empty file, a yaml ParserError, a KeyError for a context
that names a missing cluster). The file is read and checked here instead, field by field, so
that each problem is a KubeAPIError naming the file, the entry and what to do next; the result
is lightkube's own SingleConfig, as a ``client=`` brings it.

The choice follows client-go: the in-cluster configuration when $KUBERNETES_SERVICE_HOST and
$KUBERNETES_SERVICE_PORT are set and the ServiceAccount token file exists, else $KUBECONFIG,
else ~/.kube/config.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dra_metadata._model._errors import KubeAPIError, shown_names
from dra_metadata._reading._missing import WORDING
from dra_metadata.kube._identity import (
    KUBECONFIG_LIMIT,
    SERVICE_ACCOUNT_DIR,
    in_cluster_service,
    kubeconfig_path,
)

if TYPE_CHECKING:
    from lightkube.config.kubeconfig import SingleConfig

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Loaded:
    """A configuration, the namespace it names, and where it came from (for messages)."""

    config: SingleConfig
    namespace: str | None
    source: str  # "kubeconfig /home/me/.kube/config", "the in-cluster ServiceAccount (...)"


def choose_one() -> str:
    if WORDING.get() == "command":
        return "set KUBECONFIG to a kubeconfig file with a current context"
    return "pass client=lightkube.Client(...) to choose one"


def _flat(error: BaseException) -> str:
    """An error's text on one line (yaml's span several)."""
    return " ".join(str(error).split())


def load_configuration(service_account_dir: Path = SERVICE_ACCOUNT_DIR) -> Loaded:
    """The in-cluster configuration where it is possible, else the kubeconfig; KubeAPIError."""
    service = in_cluster_service(service_account_dir)
    if service is not None:
        return _in_cluster(service_account_dir, *service)
    return load_kubeconfig(*kubeconfig_path())


def _in_cluster(account: Path, host: str, port: str) -> Loaded:
    from lightkube.config.kubeconfig import KubeConfig  # noqa: PLC0415
    from lightkube.config.models import Cluster, User  # noqa: PLC0415

    token_file = account / "token"
    source = f"the in-cluster ServiceAccount ({account})"
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        detail = error.strerror if isinstance(error, OSError) else "it is not UTF-8 text"
        raise KubeAPIError(
            f"the ServiceAccount token {token_file} cannot be read ({detail}): the pod runs "
            "with $KUBERNETES_SERVICE_HOST set, so it is used; check the pod's "
            "automountServiceAccountToken and that the container's user may read the token"
        ) from None
    if not token:
        raise KubeAPIError(
            f"the ServiceAccount token {token_file} is empty: the kubelet has not written it "
            "(yet); check the pod's automountServiceAccountToken and projected volumes"
        )
    try:
        namespace: str | None = (account / "namespace").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):  # resolve_namespace says so if it is needed
        namespace = None
    if ":" in host:  # IPv6
        host = f"[{host}]"
    config = KubeConfig.from_one(
        cluster=Cluster(server=f"https://{host}:{port}", certificate_auth=str(account / "ca.crt")),
        user=User(token_file=str(token_file)),
        namespace=namespace,
    ).get()
    assert config is not None  # from_one sets the current context  # noqa: S101
    return Loaded(config, namespace or None, source)


def load_kubeconfig(path: Path, origin: str) -> Loaded:
    """The current context of the kubeconfig ``path`` (named by ``origin``), checked."""
    try:
        with path.open("rb") as file:
            data = file.read(KUBECONFIG_LIMIT + 1)
    except FileNotFoundError:
        also = ""
        if os.pathsep in str(path):
            also = f" (a list of files in {origin} is not supported: name one file)"
        raise KubeAPIError(
            "no Kubernetes API configuration: not in a pod with a ServiceAccount token "
            f"({SERVICE_ACCOUNT_DIR}/token and $KUBERNETES_SERVICE_HOST) and no kubeconfig "
            f"({origin}: {path} not found{also}); {choose_one()}"
        ) from None
    except OSError as error:
        raise KubeAPIError(
            f"the kubeconfig {path} (from {origin}) cannot be read: {error.strerror}; make it "
            f"readable by this user, or {choose_one()}"
        ) from None
    if len(data) > KUBECONFIG_LIMIT:
        raise KubeAPIError(
            f"the kubeconfig {path} (from {origin}) is larger than {KUBECONFIG_LIMIT} bytes: "
            f"not a kubeconfig; {choose_one()}"
        )
    return _from_document(_parse(path, data), path)


def _parse(path: Path, data: bytes) -> dict[str, Any]:
    import yaml  # noqa: PLC0415 - lightkube's dependency

    def wrong(what: str) -> KubeAPIError:
        return KubeAPIError(
            f"the kubeconfig {path} {what}: a kubeconfig is a YAML mapping with clusters, "
            f"contexts, users and current-context (kubectl config view shows one); fix it, "
            f"or {choose_one()}"
        )

    try:
        document = yaml.safe_load(data)
    except yaml.YAMLError as error:
        raise wrong(f"is not valid YAML ({_flat(error)})") from None
    except RecursionError:
        raise wrong("nests too deeply to be read") from None
    if document is None:
        raise wrong("is empty")
    if not isinstance(document, dict):
        raise wrong(f"is a YAML {_kind(document)}, not a mapping")
    return document


def _kind(value: object) -> str:
    names = {
        dict: "mapping",
        list: "list",
        str: "string",
        int: "number",
        float: "number",
        bool: "boolean",
    }
    return names.get(type(value), type(value).__name__)


class _Entries:
    """The named entries of one list of the kubeconfig: clusters, contexts or users."""

    def __init__(self, path: Path, document: Mapping[str, Any], field: str, key: str) -> None:
        self.path = path
        self.field = field
        self.key = key
        self.raw: dict[str, Mapping[str, Any]] = {}
        entries = document.get(field)
        if entries is None:
            return
        if not isinstance(entries, list):
            raise self._wrong(f'"{field}" is a {_kind(entries)}, not a list')
        for index, entry in enumerate(entries):
            where = f"{field}[{index}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise self._wrong(f'{where} is not a mapping with a "name"')
            body = entry.get(key)
            if body is None:
                body = {}
            if not isinstance(body, dict):
                raise self._wrong(f'{where} ("{entry["name"]}"): "{key}" is not a mapping')
            self.raw[entry["name"]] = body

    def _wrong(self, what: str) -> KubeAPIError:
        return KubeAPIError(f"the kubeconfig {self.path} is not valid: {what}; fix it")

    def get(self, name: str, factory: type[_T], *, named_by: str) -> tuple[_T, Mapping[str, Any]]:
        """The entry ``name`` as lightkube's ``factory`` model, and as written."""
        import msgspec  # noqa: PLC0415 - lightkube's dependency

        if name not in self.raw:
            defined = shown_names(sorted(self.raw)) if self.raw else "none"
            raise KubeAPIError(
                f'the kubeconfig {self.path} has no {self.key} "{name}" ({named_by}); its '
                f"{self.field}: {defined}. Fix the name, or choose another context "
                "(kubectl config use-context NAME)"
            )
        raw = self.raw[name]
        try:
            return msgspec.convert(raw, factory), raw
        except msgspec.ValidationError as error:
            raise self._wrong(f'{self.key} "{name}": {error}') from None


_UNSUPPORTED_CLUSTER = {
    "proxy-url": "it would connect to the server directly, not through the proxy",
    "tls-server-name": "it would check the server's certificate against the server's host name",
}
_UNSUPPORTED_USER = dict.fromkeys(
    ("as", "as-uid", "as-groups", "as-user-extra"),
    "it would act as this user itself, not as the user it names (impersonation)",
)
"""kubeconfig fields that change where requests go or whom they act for, which the client
does not apply: refused rather than ignored."""


def _refuse_unsupported(
    path: Path, entry: str, raw: Mapping[str, Any], unsupported: Mapping[str, str]
) -> None:
    for key, consequence in unsupported.items():
        if raw.get(key) not in (None, "", [], {}):
            raise KubeAPIError(
                f'the kubeconfig {path}: {entry} sets "{key}", which dra-metadata does not '
                f"support ({consequence}): remove it, or {choose_one()}"
            )


def _from_document(document: dict[str, Any], path: Path) -> Loaded:
    from lightkube.config.kubeconfig import SingleConfig  # noqa: PLC0415
    from lightkube.config.models import Cluster, Context, User  # noqa: PLC0415

    current = document.get("current-context")
    if current is not None and not isinstance(current, str):
        raise KubeAPIError(
            f'the kubeconfig {path} is not valid: "current-context" is a {_kind(current)}, '
            "not a context's name; fix it"
        )
    contexts = _Entries(path, document, "contexts", "context")
    clusters = _Entries(path, document, "clusters", "cluster")
    users = _Entries(path, document, "users", "user")
    if not current:
        defined = shown_names(sorted(contexts.raw)) if contexts.raw else "none"
        raise KubeAPIError(
            f"the kubeconfig {path} has no current context (its contexts: {defined}): choose "
            f"one with kubectl config use-context NAME, or {choose_one()}"
        )
    context, _ = contexts.get(current, Context, named_by="its current-context")
    cluster, raw_cluster = clusters.get(
        context.cluster, Cluster, named_by=f'of context "{current}"'
    )
    if not isinstance(raw_cluster.get("server"), str) or not raw_cluster["server"]:
        raise KubeAPIError(
            f'the kubeconfig {path} is not valid: cluster "{context.cluster}" has no "server" '
            "(the API server's URL); fix it"
        )
    _refuse_unsupported(path, f'cluster "{context.cluster}"', raw_cluster, _UNSUPPORTED_CLUSTER)
    user = None
    if context.user:
        user, raw_user = users.get(context.user, User, named_by=f'of context "{current}"')
        _refuse_unsupported(path, f'user "{context.user}"', raw_user, _UNSUPPORTED_USER)
    config = SingleConfig(
        context_name=current, context=context, cluster=cluster, user=user, fname=path
    )
    return Loaded(config, config.namespace, f"kubeconfig {path}")
