"""One-shot reads: a claim's status, a template claim's status (the pod's device health is
_health_read's). Plain reads where the configuration allows (_plain_read), else the usual way."""

from __future__ import annotations

from dra_metadata.kube._deadline import REQUEST_TIMEOUT_SECONDS, Deadline, checked_request_timeout
from dra_metadata.kube._errors import claim_target, pod_target
from dra_metadata.kube._identity import check_name, check_where, resolve_pod_name
from dra_metadata.kube._mapping import claim_status_from_object, generated_claim_name
from dra_metadata.kube._plain_read import plainly

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lightkube import AsyncClient, Client

    from dra_metadata.kube._models import ClaimStatus


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
    it). Made with the standard library's sockets where the configuration allows, as
    read_device_health (docs/guides/kubernetes-api.md, "Plain reads").
    """
    check_name("claim_name", claim_name)
    check_where(namespace=namespace)
    deadline = Deadline.after(checked_request_timeout(timeout))
    with plainly(deadline, client) as connection:
        if connection is not None:
            target = claim_target(claim_name, connection.namespace(namespace))
            return claim_status_from_object(connection.get(target))
    from dra_metadata.kube._http import connect, get_by_itself  # noqa: PLC0415

    api = connect(client)
    target = claim_target(claim_name, api.namespace(namespace))
    return claim_status_from_object(get_by_itself(api, deadline, target))


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
    Needs ``get`` on ``pods`` and ``resourceclaims``. Plain reads where the configuration
    allows, as read_claim_status.
    """
    check_name("pod_claim_name", pod_claim_name, label=True)
    check_where(namespace=namespace, pod_name=pod_name)
    deadline = Deadline.after(checked_request_timeout(timeout))
    with plainly(deadline, client) as connection:
        if connection is not None:
            namespace_used = connection.namespace(namespace)
            pod = pod_target(resolve_pod_name(pod_name), namespace_used)
            claim_name = generated_claim_name(connection.get(pod), pod_claim_name)
            return claim_status_from_object(
                connection.get(claim_target(claim_name, namespace_used))
            )
    from dra_metadata.kube._http import aget_object, connect  # noqa: PLC0415
    from dra_metadata.kube._sync import run  # noqa: PLC0415

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
