"""read_device_health: the pod's device health, read once: plainly where the configuration
allows (_plain_read), else the usual way.
"""

from __future__ import annotations

from dra_metadata.kube._deadline import REQUEST_TIMEOUT_SECONDS, Deadline, checked_request_timeout
from dra_metadata.kube._errors import pod_target
from dra_metadata.kube._health import ClaimResolver, PodHealthView
from dra_metadata.kube._identity import check_name, check_where, resolve_pod_name
from dra_metadata.kube._plain_read import plainly

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from lightkube import AsyncClient, Client

    from dra_metadata.kube._models import DeviceHealth
    from dra_metadata.kube._plain_http import PlainConnection


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

    Where the configuration allows (in a pod: its ServiceAccount; a kubeconfig with a server, its
    certificate authority and a token or client certificate), with no ``client``, the GETs are
    made with the standard library's sockets and TLS, which a probe runs sooner than lightkube;
    with the same answers and errors (docs/guides/kubernetes-api.md, "Plain reads").

    Needs ``get`` on ``pods``, and ``get`` on ``resourceclaims`` to name CDI-keyed devices:
    without it the health is returned unresolved, with one UnresolvedDeviceWarning naming the
    permission. Raises MetadataNotFoundError (no such pod or container) or KubeAPIError.

    Example:
        >>> for device in kube.read_device_health(container_name="trainer"):  # doctest: +SKIP
        ...     print(device.device or device.unresolved, device.health, device.message)
    """
    if container_name is not None:
        check_name("container_name", container_name, label=True)
    check_where(namespace=namespace, pod_name=pod_name)
    deadline = Deadline.after(checked_request_timeout(timeout))
    with plainly(deadline, client) as connection:
        if connection is not None:
            return _plain_read(connection, pod_name, container_name, namespace)
    return _usual_read(client, deadline, pod_name, container_name, namespace)


def _plain_read(
    connection: PlainConnection,
    pod_name: str | None,
    container_name: str | None,
    namespace: str | None,
) -> tuple[DeviceHealth, ...]:
    pod = pod_target(resolve_pod_name(pod_name), connection.namespace(namespace))
    view = PodHealthView.of(connection.get(pod), container_name)
    return ClaimResolver(pod.namespace).named_by(connection.get, view, stacklevel=3)


def _usual_read(
    client: Client | AsyncClient | None,
    deadline: Deadline,
    pod_name: str | None,
    container_name: str | None,
    namespace: str | None,
) -> tuple[DeviceHealth, ...]:
    from dra_metadata.kube._http import aget_object, connect  # noqa: PLC0415
    from dra_metadata.kube._sync import run  # noqa: PLC0415

    api = connect(client)
    pod = pod_target(resolve_pod_name(pod_name), api.namespace(namespace))
    resolver = ClaimResolver(pod.namespace)

    async def read() -> tuple[DeviceHealth, ...]:
        async with api.async_client(deadline.httpx_timeout()) as http:
            view = PodHealthView.of(await aget_object(api, http, pod, deadline), container_name)
            return await resolver.named(api, http, view, deadline)

    return run(read)
