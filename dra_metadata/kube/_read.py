"""One-shot reads: a claim's status, a template claim's status, a pod's device health."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dra_metadata.kube._errors import claim_target, pod_target
from dra_metadata.kube._http import connect, get_object
from dra_metadata.kube._identity import check_name, resolve_pod_name
from dra_metadata.kube._mapping import (
    claim_status_from_object,
    device_health_from_pod,
    generated_claim_name,
)
from dra_metadata.kube._models import ClaimStatus, DeviceHealth

if TYPE_CHECKING:
    from lightkube import AsyncClient, Client


def _check_where(*, namespace: str | None, pod_name: str | None = None) -> None:
    """The names given as arguments, before any configuration is loaded."""
    if namespace is not None:
        check_name("namespace", namespace, label=True)
    if pod_name is not None:
        check_name("pod_name", pod_name)


def read_claim_status(
    claim_name: str, *, namespace: str | None = None, client: Client | AsyncClient | None = None
) -> ClaimStatus:
    """The allocation and device status of the ResourceClaim ``claim_name`` (one GET).

    For a claim the pod names in ``spec.resourceClaims[].resourceClaimName``. ``namespace``
    defaults to this pod's (docs/guides/kubernetes-api.md, "Who this pod is"); ``client`` is a
    lightkube client whose configuration is used (default: in-cluster, else the kubeconfig).
    Needs ``get`` on ``resourceclaims``. Raises MetadataNotFoundError (404) or KubeAPIError.
    """
    check_name("claim_name", claim_name)
    _check_where(namespace=namespace)
    api = connect(client)
    target = claim_target(claim_name, api.namespace(namespace))
    with api.sync_client() as http:
        return claim_status_from_object(get_object(api, http, target))


def read_template_claim_status(
    pod_claim_name: str,
    *,
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
) -> ClaimStatus:
    """The status of the claim made from a template for the pod's claim ``pod_claim_name``.

    The generated claim's name is read from the Pod's ``status.resourceClaimStatuses`` (this
    pod unless ``pod_name``), then the claim (two GETs). Needs ``get`` on ``pods`` and
    ``resourceclaims``.
    """
    check_name("pod_claim_name", pod_claim_name, label=True)
    _check_where(namespace=namespace, pod_name=pod_name)
    api = connect(client)
    namespace_used = api.namespace(namespace)
    pod = pod_target(resolve_pod_name(pod_name), namespace_used)
    with api.sync_client() as http:
        claim_name = generated_claim_name(get_object(api, http, pod), pod_claim_name)
        target = claim_target(claim_name, namespace_used)
        return claim_status_from_object(get_object(api, http, target))


def read_device_health(
    *,
    pod_name: str | None = None,
    container_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
) -> tuple[DeviceHealth, ...]:
    """The health the kubelet reports for each device allocated to the pod's containers.

    One DeviceHealth per resource of ``allocatedResourcesStatus`` in the Pod's container
    statuses (this pod unless ``pod_name``; every container unless ``container_name``). Empty
    while the kubelet reports none. Needs ``get`` on ``pods``.
    """
    if container_name is not None:
        check_name("container_name", container_name, label=True)
    _check_where(namespace=namespace, pod_name=pod_name)
    api = connect(client)
    pod = pod_target(resolve_pod_name(pod_name), api.namespace(namespace))
    with api.sync_client() as http:
        return device_health_from_pod(get_object(api, http, pod), container_name)
