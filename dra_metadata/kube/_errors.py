"""HTTP answers and transport failures -> errors a user can act on.

Nothing raised by httpx2 or lightkube leaves this package: a refusal names the verb, resource
and namespace and points to the example Role; a missing object is a MetadataNotFoundError; a
connection that cannot be made says whether it was refused, timed out or failed TLS.
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass

import orjson

from dra_metadata._model._errors import DeviceMetadataError, KubeAPIError, MetadataNotFoundError
from dra_metadata._reading._missing import WORDING
from dra_metadata.kube._identity import Resolved

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

EXAMPLE_ROLE = "examples/kubernetes/api-reader-rbac.yaml in the dra-metadata sources"
INSTALL_HINT = "pip install 'dra-metadata[kube]'"


class CredentialError(KubeAPIError):
    """Credentials that could not be had while a request was sent (a token file, an exec
    plugin): a watch ends on it instead of retrying."""


@dataclass(frozen=True, slots=True)
class Target:
    """One object asked for: which resource, where, and where its name and namespace came from."""

    resource: str  # plural, as in a Role: "resourceclaims", "pods"
    group: str  # "" for the core group
    version: str
    kind: str  # singular, for messages
    name: str
    namespace: Resolved
    name_origin: str = "argument"

    @property
    def collection_path(self) -> str:
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{prefix}/namespaces/{self.namespace.value}/{self.resource}"

    @property
    def path(self) -> str:
        return f"{self.collection_path}/{self.name}"

    def describe(self) -> str:
        return f'{self.kind} "{self.name}" in namespace "{self.namespace.value}"'

    def origins(self) -> str:
        parts = []
        if self.name_origin != "argument":
            parts.append(f"name from {self.name_origin}")
        if self.namespace.origin != "argument":
            parts.append(f"namespace from {self.namespace.origin}")
        return f" ({'; '.join(parts)})" if parts else ""


def claim_target(name: str, namespace: Resolved) -> Target:
    return Target("resourceclaims", "resource.k8s.io", "v1", "resourceclaim", name, namespace)


def pod_target(name: Resolved, namespace: Resolved) -> Target:
    return Target("pods", "", "v1", "pod", name.value, namespace, name.origin)


def _server_status(body: bytes) -> tuple[str, str]:
    """(reason, message) of a Kubernetes Status body; empty strings when it is not one."""
    try:
        status: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return "", body[:200].decode("utf-8", "replace").strip()
    if not isinstance(status, dict):
        return "", ""
    return str(status.get("reason") or ""), str(status.get("message") or "")


def status_error(target: Target, verb: str, code: int, body: bytes) -> DeviceMetadataError:
    """The error for an HTTP answer other than 200 (also an ERROR event's Status)."""
    reason, message = _server_status(body)
    return status_error_from(target, verb, code, reason, message)


def status_error_from(
    target: Target, verb: str, code: int, reason: str, message: str
) -> DeviceMetadataError:
    """status_error for a Status already decoded (the object of a watch ERROR event)."""
    said = f"HTTP {code}{' ' + reason if reason else ''}{': ' + message if message else ''}"
    group = target.group or '"" (core)'
    if code == 404 and verb == "get":
        hint = (
            "check the pod's name and namespace"
            if target.resource == "pods"
            else "check the claim's name (spec.resourceClaims of the pod) and the namespace"
        )
        return MetadataNotFoundError(
            f"{target.describe()} not found{target.origins()}: {hint}", path=None
        )
    if code == 403:
        return _answered(
            f"the Kubernetes API server refused to {verb} {target.describe()}"
            f"{target.origins()} ({said}). Give the pod's ServiceAccount a Role in namespace "
            f'"{target.namespace.value}" that allows "{verb}" on "{target.resource}" '
            f"(apiGroup {group}) and a RoleBinding to it: see the example Role in "
            f"{EXAMPLE_ROLE}",
            target,
            verb,
            code,
        )
    if code == 401:
        return _answered(
            f"the Kubernetes API server did not accept the credentials sent to {verb} "
            f"{target.describe()} ({said}): the token is unknown, expired or revoked. In a pod, "
            "check that the ServiceAccount token is mounted (automountServiceAccountToken); "
            "outside, check the user of the kubeconfig context",
            target,
            verb,
            code,
        )
    return _answered(
        f"the Kubernetes API server could not {verb} {target.describe()}{target.origins()}: {said}",
        target,
        verb,
        code,
    )


def _answered(message: str, target: Target, verb: str, code: int | None) -> KubeAPIError:
    return KubeAPIError(
        message,
        status=code,
        verb=verb,
        resource=target.resource,
        namespace=target.namespace.value,
        name=target.name,
    )


def _causes(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def transport_error(target: Target, verb: str, server: str, error: Exception) -> KubeAPIError:
    """The error for a request that got no answer: refused, timed out, TLS, or other."""
    import httpx2  # noqa: PLC0415 - the optional dependency, present when this runs

    causes = _causes(error)
    text = " ".join(str(cause) for cause in causes)
    asked = f"to {verb} {target.describe()}"
    tls = next((cause for cause in causes if isinstance(cause, ssl.SSLError)), None)
    if tls is not None or "[SSL" in text:
        problem = _tls_problem(tls if tls is not None else error)
        message = f"TLS with the Kubernetes API server at {server} failed {asked} {problem}"
    elif any(isinstance(cause, ConnectionRefusedError) for cause in causes) or (
        "Connection refused" in text
    ):
        message = (
            f"the Kubernetes API server at {server} refused the connection {asked}: nothing "
            "listens there (in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT; "
            "outside: the kubeconfig's server)"
        )
    elif isinstance(error, httpx2.TimeoutException):  # a watch's reads; a GET has a deadline
        message = f"the Kubernetes API server at {server} did not answer in time {asked}"
    else:
        message = f"cannot reach the Kubernetes API server at {server} {asked}: {error}"
    return _answered(message, target, verb, None)


_CLIENT_CERTIFICATE_ALERTS = (
    "BAD_CERTIFICATE",
    "UNKNOWN_CA",
    "CERTIFICATE_UNKNOWN",
    "CERTIFICATE_EXPIRED",
    "CERTIFICATE_REVOKED",
    "UNSUPPORTED_CERTIFICATE",
    "ACCESS_DENIED",
)


def _tls_problem(error: BaseException) -> str:
    """What a TLS failure (an SSLError, or an error that quotes one) means, after "TLS with the
    Kubernetes API server ... failed ...": the server's certificate not trusted, the server
    refusing the client's, or other."""
    detail = str(error)
    named = re.search(r"\[SSL: (\w+)\]", detail)  # an SSLError re-raised may have no .reason
    reason = str(getattr(error, "reason", None) or (named.group(1) if named else ""))
    if isinstance(error, ssl.SSLCertVerificationError) or reason == "CERTIFICATE_VERIFY_FAILED":
        return (
            f"({detail}): its certificate is not signed by the configured certificate authority "
            "(the kubeconfig's certificate-authority, the ServiceAccount's ca.crt) or does not "
            "name that address"
        )
    if "ALERT_CERTIFICATE_REQUIRED" in reason:
        return (
            f"({detail}): the server demands a client certificate and the configuration gives "
            "none: give the kubeconfig's user a client-certificate and client-key that the "
            "server trusts"
        )
    if "ALERT" in reason and any(alert in reason for alert in _CLIENT_CERTIFICATE_ALERTS):
        return (
            f"({detail}): the server does not accept the client certificate of the "
            "configuration (or its lack of one): give the kubeconfig's user a "
            "client-certificate and client-key signed by an authority that the server trusts"
        )
    if "ALERT_HANDSHAKE_FAILURE" in reason:  # TLS 1.2's answer to a missing certificate too
        return (
            f"({detail}): the server demands a client certificate that the configuration does "
            "not give or that it does not accept (the kubeconfig user's client-certificate and "
            "client-key), or it shares no TLS version or cipher with this client"
        )
    if "ALERT" in reason:
        return (
            f"({detail}): the server ended the TLS connection with that alert (a TLS version, "
            "cipher or client certificate it does not accept)"
        )
    return f"({detail})"


def deadline_error(
    target: Target,
    verb: str,
    server: str,
    seconds: float,
    plugin: str | None = None,
    *,
    adjustable: bool = False,
) -> KubeAPIError:
    """The error for a request not done by its deadline (``plugin``: an exec plugin still ran;
    ``adjustable``: the caller chose the deadline with ``timeout=``, the command's --timeout)."""
    asked = f"to {verb} {target.describe()}"
    if plugin is not None:
        what = f"{plugin} did not give a credential {asked}"
    else:
        what = f"the Kubernetes API server at {server} did not answer {asked}"
    option = "--timeout" if WORDING.get() == "command" else "timeout="
    more = f" or pass a larger {option}" if adjustable else ""
    return _answered(
        f"{what} within {seconds:g} s, the deadline of the request (connection, credentials "
        f"and the whole answer): check the server and the network{more}",
        target,
        verb,
        None,
    )


def malformed_answer(target: Target, verb: str, body: bytes) -> KubeAPIError:
    return _answered(
        f"the Kubernetes API server answered {verb} {target.describe()} with something that is "
        f"not a JSON object: {body[:120]!r}",
        target,
        verb,
        None,
    )


def decode_object(target: Target, verb: str, body: bytes) -> Mapping[str, Any]:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise malformed_answer(target, verb, body) from None
    if not isinstance(value, dict):
        raise malformed_answer(target, verb, body)
    return value
