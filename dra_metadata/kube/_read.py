"""One-shot reads: a claim's status, a template claim's status, a pod's device health."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dra_metadata.kube._errors import Target, claim_target, pod_target
from dra_metadata.kube._health import ClaimResolver, PodHealthView
from dra_metadata.kube._http import (
    REQUEST_TIMEOUT_SECONDS,
    Api,
    Deadline,
    aget_object,
    checked_request_timeout,
    connect,
)
from dra_metadata.kube._identity import check_name, resolve_pod_name
from dra_metadata.kube._mapping import claim_status_from_object, generated_claim_name
from dra_metadata.kube._models import ClaimStatus, DeviceHealth
from dra_metadata.kube._sync import run

if TYPE_CHECKING:
    from lightkube import AsyncClient, Client


def _get(api: Api, deadline: Deadline, target: Target) -> Mapping[str, Any]:
    """One GET, on a connection of its own, done by the deadline."""

    async def get() -> Mapping[str, Any]:
        async with api.async_client(deadline.httpx_timeout()) as http:
            return await aget_object(api, http, target, deadline)

    return run(get)


def _check_where(*, namespace: str | None, pod_name: str | None = None) -> None:
    """The names given as arguments, before any configuration is loaded."""
    if namespace is not None:
        check_name("namespace", namespace, label=True)
    if pod_name is not None:
        check_name("pod_name", pod_name)


def read_claim_status(
    claim_name: str,
    *,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
) -> ClaimStatus:
    """The allocation and device status of the ResourceClaim ``claim_name`` (one GET).

    For a claim the pod names in ``spec.resourceClaims[].resourceClaimName``. ``namespace``
    defaults to this pod's (docs/guides/kubernetes-api.md, "Who this pod is"); ``client`` is a
    lightkube client whose configuration is used (default: in-cluster, else the kubeconfig).
    ``timeout`` is the deadline of the whole read in seconds (credentials, connection, the whole
    answer; default 10, math.inf for none). Needs ``get`` on ``resourceclaims``. Raises
    MetadataNotFoundError (404) or KubeAPIError (refused, unreachable, past the deadline, or a
    configuration that cannot be used: the message names the kubeconfig and what is wrong in
    it).
    """
    check_name("claim_name", claim_name)
    _check_where(namespace=namespace)
    deadline = Deadline.after(checked_request_timeout(timeout))
    api = connect(client)
    target = claim_target(claim_name, api.namespace(namespace))
    return claim_status_from_object(_get(api, deadline, target))


def read_template_claim_status(
    pod_claim_name: str,
    *,
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
) -> ClaimStatus:
    """The status of the claim made from a template for the pod's claim ``pod_claim_name``.

    The generated claim's name is read from the Pod's ``status.resourceClaimStatuses`` (this
    pod unless ``pod_name``), then the claim (two GETs, both by the one deadline ``timeout``).
    Needs ``get`` on ``pods`` and ``resourceclaims``.
    """
    check_name("pod_claim_name", pod_claim_name, label=True)
    _check_where(namespace=namespace, pod_name=pod_name)
    deadline = Deadline.after(checked_request_timeout(timeout))
    api = connect(client)
    namespace_used = api.namespace(namespace)
    pod = pod_target(resolve_pod_name(pod_name), namespace_used)

    async def read() -> Mapping[str, Any]:
        async with api.async_client(deadline.httpx_timeout()) as http:
            claim_name = generated_claim_name(
                await aget_object(api, http, pod, deadline), pod_claim_name
            )
            target = claim_target(claim_name, namespace_used)
            return await aget_object(api, http, target, deadline)

    return claim_status_from_object(run(read))


def read_device_health(
    *,
    pod_name: str | None = None,
    container_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
) -> tuple[DeviceHealth, ...]:
    """The health the kubelet reports for each device allocated to the pod's containers.

    One DeviceHealth per resource of ``allocatedResourcesStatus`` in the Pod's container
    statuses (this pod unless ``pod_name``; every container unless ``container_name``). Empty
    while the kubelet reports none. Entries the kubelet keys by a CDI device ID are named
    (`driver`, `pool`, `device`) through the pod's claims where that is unambiguous, else
    `unresolved` says why (see DeviceHealth). ``timeout``: the deadline of the read, the claims
    included, as in read_claim_status.

    Needs ``get`` on ``pods``, and ``get`` on ``resourceclaims`` to name CDI-keyed devices:
    without it the health is returned unresolved, with one UnresolvedDeviceWarning naming the
    permission. Raises MetadataNotFoundError (no such pod or container) or KubeAPIError.

    Example:
        >>> for device in kube.read_device_health(container_name="trainer"):  # doctest: +SKIP
        ...     print(device.device or device.unresolved, device.health, device.message)
    """
    if container_name is not None:
        check_name("container_name", container_name, label=True)
    _check_where(namespace=namespace, pod_name=pod_name)
    deadline = Deadline.after(checked_request_timeout(timeout))
    api = connect(client)
    pod = pod_target(resolve_pod_name(pod_name), api.namespace(namespace))
    resolver = ClaimResolver(api, pod.namespace)

    async def read() -> tuple[DeviceHealth, ...]:
        async with api.async_client(deadline.httpx_timeout()) as http:
            view = PodHealthView.of(await aget_object(api, http, pod, deadline), container_name)
            return await resolver.named(http, view, deadline)

    return run(read)
