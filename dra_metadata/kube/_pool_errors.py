"""Arguments and answers of a ResourcePoolStatusRequest -> errors a user can act on.

The arguments are checked with the API server's own rules (the 422 messages of
kube-apiserver 1.36 in tests/data/pool-status/) before anything is sent. A refusal names the
verb and the resource and points to the example ClusterRole; a 404 says which API and flags the
feature needs; no answer names kube-controller-manager, its feature gate and incomplete pools.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from dra_metadata._model._errors import InvalidNameError, KubeAPIError
from dra_metadata.kube._errors import Target, _server_status, transport_error
from dra_metadata.kube._identity import Resolved

GROUP = "resource.k8s.io"
VERSION = "v1alpha3"
RESOURCE = "resourcepoolstatusrequests"
KIND = "ResourcePoolStatusRequest"
COLLECTION_PATH = f"/apis/{GROUP}/{VERSION}/{RESOURCE}"
FEATURE_GATE = "DRAResourcePoolStatus"
RUNTIME_CONFIG = f"--runtime-config={GROUP}/{VERSION}=true"
FIRST_VERSION = (1, 36)
EXAMPLE_CLUSTER_ROLE = "examples/kubernetes/pool-status-rbac.yaml in the dra-metadata sources"
VERBS = ("create", "get", "watch", "delete")
MAX_LIMIT = 1000
_NAME_BYTES = 253

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_SUBDOMAIN_IGNORING_CASE = re.compile(rf"{_LABEL}(\.{_LABEL})*", re.IGNORECASE)


def check_driver(driver: object) -> str:
    """A driver name as kube-apiserver accepts it in ``spec.driver``.

    A DNS subdomain of at most 253 bytes; the server ignores case here (and then matches
    ResourceSlices exactly, case included), so this does too.
    """
    if not isinstance(driver, str):
        raise InvalidNameError("driver", driver, f"must be a str, not {type(driver).__name__}")
    if len(driver.encode()) > _NAME_BYTES:
        raise InvalidNameError("driver", driver, f"must be no more than {_NAME_BYTES} bytes")
    if not _SUBDOMAIN_IGNORING_CASE.fullmatch(driver):
        raise InvalidNameError(
            "driver",
            driver,
            "a driver name is a DNS subdomain: letters, digits, '-' and '.', starting and "
            "ending with a letter or digit, e.g. gpu.example.com",
        )
    return driver


def check_pool(pool: object) -> str | None:
    """A pool name as kube-apiserver accepts it in ``spec.poolName``: one or more lowercase DNS
    subdomains joined by '/', at most 253 bytes; None for every pool of the driver."""
    if pool is None:
        return None
    if not isinstance(pool, str):
        raise InvalidNameError("pool", pool, f"must be a str or None, not {type(pool).__name__}")
    if len(pool.encode()) > _NAME_BYTES:
        raise InvalidNameError("pool", pool, f"must be no more than {_NAME_BYTES} bytes")
    for index, segment in enumerate(pool.split("/")):
        if not segment:
            raise InvalidNameError(
                "pool",
                pool,
                f"segment {index} is empty: a pool name is one or more lowercase DNS "
                "subdomains joined by '/' (e.g. rack-1/node-7)",
            )
        if not _SUBDOMAIN.fullmatch(segment):
            raise InvalidNameError(
                "pool",
                pool,
                f"segment {index} ({segment!r}) is not a lowercase DNS subdomain: a-z, 0-9, "
                "'-' and '.', starting and ending with a letter or digit",
            )
    return pool


def check_limit(limit: object) -> int | None:
    """``spec.limit``: 1 to 1000 pools; None for the server's default (100)."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int from 1 to {MAX_LIMIT} or None, not {limit!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(
            f"limit must be from 1 to {MAX_LIMIT} pools (the server's range), not {limit}"
        )
    return limit


def check_timeout(timeout: object) -> float | None:
    """More than 0 seconds, or None to wait as long as it takes."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, not {timeout!r}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be more than 0 seconds (None: no limit), not {timeout!r}")
    return float(timeout)


@dataclass(frozen=True, slots=True)
class RequestTarget(Target):
    """A ResourcePoolStatusRequest: cluster-scoped, so no namespace in paths or messages."""

    @property
    def collection_path(self) -> str:
        return COLLECTION_PATH

    def describe(self) -> str:
        return f'resourcepoolstatusrequest "{self.name}"' if self.name else RESOURCE

    def origins(self) -> str:
        return ""


def request_target(name: str = "") -> RequestTarget:
    return RequestTarget(RESOURCE, GROUP, VERSION, "resourcepoolstatusrequest", name, _NO_NS)


_NO_NS = Resolved("", "cluster-scoped")


def _error(message: str, verb: str, code: int | None, name: str) -> KubeAPIError:
    return KubeAPIError(message, status=code, verb=verb, resource=RESOURCE, name=name or None)


def not_served(server: str, said: str, version: str | None) -> KubeAPIError:
    """404 on the collection: the API is off (or the server too old)."""
    needs = (
        f"Resource pool status needs Kubernetes {FIRST_VERSION[0]}.{FIRST_VERSION[1]} or "
        f"later, with kube-apiserver started with {RUNTIME_CONFIG} (the API is alpha and off by "
        f"default) and kube-controller-manager with --feature-gates={FEATURE_GATE}=true to "
        "answer the requests"
    )
    if version is None:
        found = "its version could not be read (GET /version)"
    elif _older(version):
        found = f"this server is {version}: upgrade it first"
    else:
        found = f"this server is {version}: add the flag"
    return _error(
        f"the Kubernetes API server at {server} does not serve {RESOURCE} in {GROUP}/{VERSION} "
        f"({said}). {needs}; {found}",
        "create",
        404,
        "",
    )


def _older(version: str) -> bool:
    match = re.match(r"v?(\d+)\.(\d+)", version)
    if match is None:
        return False
    return (int(match.group(1)), int(match.group(2))) < FIRST_VERSION


def refusal(verb: str, code: int, body: bytes, name: str, server: str) -> KubeAPIError:
    """An HTTP answer other than success to ``verb`` (create, get, watch, delete)."""
    reason, message = _server_status(body)
    said = f"HTTP {code}{' ' + reason if reason else ''}{': ' + message if message else ''}"
    what = request_target(name).describe()
    if code == 403:
        return _error(
            f"the Kubernetes API server refused to {verb} {what} ({said}). Give the user or "
            f'ServiceAccount a ClusterRole that allows "{verb}" (reading pool status needs '
            f'{", ".join(VERBS)}) on "{RESOURCE}" (apiGroup {GROUP}) and a ClusterRoleBinding '
            f"to it: see the example ClusterRole in {EXAMPLE_CLUSTER_ROLE}",
            verb,
            code,
            name,
        )
    if code == 401:
        return _error(
            f"the Kubernetes API server did not accept the credentials sent to {verb} {what} "
            f"({said}): the token is unknown, expired or revoked. In a pod, check that the "
            "ServiceAccount token is mounted (automountServiceAccountToken); outside, check the "
            "user of the kubeconfig context",
            verb,
            code,
            name,
        )
    return _error(
        f"the Kubernetes API server at {server} could not {verb} {what}: {said}", verb, code, name
    )


def unreachable(verb: str, name: str, server: str, error: Exception) -> KubeAPIError:
    """No answer: refused, timed out, TLS (the wording of the claim reads)."""
    found = transport_error(request_target(name), verb, server, error)
    found.namespace = None
    return found


def deleted_meanwhile(name: str) -> KubeAPIError:
    return _error(
        f"{request_target(name).describe()} was deleted before kube-controller-manager answered "
        "it: by another client (kube-controller-manager itself deletes only requests left "
        "unanswered for 24 h); ask again",
        "watch",
        None,
        name,
    )


def no_answer(name: str, driver: str, pool: str | None, timeout: float | None) -> KubeAPIError:
    """No status within the timeout: the two causes, and what to check."""
    which = f'driver "{driver}"' + (f', pool "{pool}"' if pool is not None else "")
    return _error(
        f"no answer to {request_target(name).describe()} ({which}) within {timeout:g} s: "
        "kube-controller-manager answers these requests only when it runs with "
        f"--feature-gates={FEATURE_GATE}=true (its resourcepoolstatusrequest-controller; "
        "without the gate nothing tells the client), or a pool of that driver is incomplete "
        "(fewer ResourceSlices published at its newest generation than "
        "spec.pool.resourceSliceCount), which keeps the request unanswered until the request "
        "or the controller changes. Check kube-controller-manager's flags and the driver's "
        "ResourceSlices, or ask with a longer timeout",
        "watch",
        None,
        name,
    )


def failed(name: str, reason: str, message: str) -> KubeAPIError:
    """The controller wrote a ``Failed`` condition."""
    because = f" ({reason})" if reason else ""
    return _error(
        f"kube-controller-manager could not compute the pool status of "
        f"{request_target(name).describe()}{because}: {message or 'no message'}; ask again",
        "watch",
        None,
        name,
    )


def with_cleanup(error: KubeAPIError, cleanup: str) -> KubeAPIError:
    """``error`` with what happened to the request after it (deleted, kept, left behind)."""
    return KubeAPIError(
        f"{error.message}; {cleanup}",
        status=error.status,
        verb=error.verb,
        resource=error.resource,
        namespace=error.namespace,
        name=error.name,
    )
