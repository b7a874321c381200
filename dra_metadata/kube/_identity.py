"""Who "this pod" is: its namespace and name, from arguments, the downward API or the sandbox.

Each answer carries where it came from, so that a 404 or 403 can say which namespace or pod
name was used and why.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path

from dra_metadata._model._errors import InvalidNameError, KubeAPIError

NAMESPACE_ENVIRONMENT_VARIABLE = "POD_NAMESPACE"
POD_NAME_ENVIRONMENT_VARIABLE = "POD_NAME"
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


DEFAULT_KUBECONFIG = "~/.kube/config"
KUBECONFIG_LIMIT = 16 << 20
"""Bytes read of a kubeconfig at most (kubectl's are a few KiB; certificates inline add some)."""


def in_cluster_service(service_account_dir: Path) -> tuple[str, str] | None:
    """($KUBERNETES_SERVICE_HOST, $KUBERNETES_SERVICE_PORT) where the in-cluster configuration
    is the one to use (both set and the ServiceAccount token file there), as client-go decides;
    else None."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if host and port and os.path.lexists(service_account_dir / "token"):
        return host, port
    return None


def kubeconfig_path() -> tuple[Path, str]:
    """The kubeconfig to use otherwise, and what named it: $KUBECONFIG, else ~/.kube/config."""
    from_environment = os.environ.get("KUBECONFIG", "")
    if from_environment:
        return Path(from_environment), "$KUBECONFIG"
    return Path(DEFAULT_KUBECONFIG).expanduser(), DEFAULT_KUBECONFIG


def check_name(argument: str, value: object, *, label: bool = False) -> str:
    """An object name as the API server accepts it (it also goes into a URL path)."""
    if not isinstance(value, str):
        raise InvalidNameError(argument, value, f"must be a str, not {type(value).__name__}")
    limit, pattern = (63, _DNS_LABEL) if label else (253, _DNS_SUBDOMAIN)
    if not value or len(value) > limit or not pattern.fullmatch(value):
        kind = "DNS label" if label else "DNS subdomain"
        raise InvalidNameError(
            argument,
            value,
            f"a Kubernetes name is a {kind}: at most {limit} characters of a-z, 0-9, "
            + ("'-'" if label else "'-', '.'")
            + ", starting and ending with a letter or digit",
        )
    return value


def check_where(*, namespace: str | None, pod_name: str | None = None) -> None:
    """The names given as arguments, before any configuration is loaded."""
    if namespace is not None:
        check_name("namespace", namespace, label=True)
    if pod_name is not None:
        check_name("pod_name", pod_name)


@dataclass(frozen=True, slots=True)
class Resolved:
    """A namespace or pod name, and where it came from (for error messages)."""

    value: str
    origin: str


def resolve_namespace(
    namespace: str | None,
    *,
    config_namespace: str | None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
) -> Resolved:
    """The argument, else $POD_NAMESPACE, else the service account's namespace file, else the
    namespace of the configuration's context (the kubeconfig context, "default" when unset)."""
    if namespace is not None:
        return Resolved(check_name("namespace", namespace, label=True), "argument")
    from_environment = os.environ.get(NAMESPACE_ENVIRONMENT_VARIABLE, "").strip()
    if from_environment:
        origin = f"${NAMESPACE_ENVIRONMENT_VARIABLE}"
        return Resolved(check_name(origin, from_environment, label=True), origin)
    namespace_file = service_account_dir / "namespace"
    try:
        from_file = namespace_file.read_text(encoding="utf-8").strip()
    except OSError:
        from_file = ""
    if from_file:
        return Resolved(check_name(str(namespace_file), from_file, label=True), str(namespace_file))
    if config_namespace:
        origin = "the kubeconfig context"
        return Resolved(check_name(origin, config_namespace, label=True), origin)
    raise KubeAPIError(
        f"no namespace: pass namespace=, set ${NAMESPACE_ENVIRONMENT_VARIABLE} (downward API: "
        f"metadata.namespace), or mount the service account ({namespace_file})"
    )


def resolve_pod_name(pod_name: str | None) -> Resolved:
    """The argument, else $POD_NAME (downward API: metadata.name), else the host name.

    The host name is the pod's name unless the pod sets spec.hostname or uses the host's
    network: set POD_NAME then.
    """
    if pod_name is not None:
        return Resolved(check_name("pod_name", pod_name), "argument")
    from_environment = os.environ.get(POD_NAME_ENVIRONMENT_VARIABLE, "").strip()
    if from_environment:
        origin = f"${POD_NAME_ENVIRONMENT_VARIABLE}"
        return Resolved(check_name(origin, from_environment), origin)
    origin = (
        f"the host name (set ${POD_NAME_ENVIRONMENT_VARIABLE} from the downward API "
        "when the pod sets spec.hostname or hostNetwork)"
    )
    return Resolved(check_name(origin, socket.gethostname()), origin)
