"""The public calls: List, Get and GetAllocatableResources, and their asyncio twins."""

from __future__ import annotations

import os

from dra_metadata.podresources._client import (
    ALLOCATABLE,
    GET,
    LIST,
    REQUEST_TIMEOUT_SECONDS,
    acall,
    call,
    check_pod,
    checked_timeout,
)
from dra_metadata.podresources._mapping import allocatable_resources as _allocatable
from dra_metadata.podresources._mapping import pod_resources as _pod
from dra_metadata.podresources._models import AllocatableResources, PodResources
from dra_metadata.podresources._socket import resolve_socket


def list_pod_resources(
    *, socket: str | os.PathLike[str] | None = None, timeout: float = REQUEST_TIMEOUT_SECONDS
) -> list[PodResources]:
    """Every pod the kubelet runs on this node, with what each container holds (``List``).

    Each PodResources lists its containers' DRA devices (``dynamic_resources``: claim, driver,
    pool, device, CDI devices), device plugin devices, exclusive CPUs and memory, in the
    kubelet's order. ``socket`` is the kubelet's PodResources socket (default:
    ``$DRA_METADATA_PODRESOURCES_SOCKET``, else ``/var/lib/kubelet/pod-resources/kubelet.sock``:
    in a pod, mount ``/var/lib/kubelet/pod-resources`` as a hostPath volume, see
    docs/guides/node-agents.md). ``timeout`` is the limit in seconds for connecting and the
    whole answer (math.inf: none).

    Raises a PodResourcesError subclass, whose message names the socket and the next step:
    PodResourcesSocketNotFoundError, PodResourcesPermissionError, PodResourcesConnectionError
    (nothing answers), PodResourcesTimeoutError, PodResourcesUnimplementedError,
    PodResourcesServerError, PodResourcesNotInstalledError (the ``podresources`` extra).

    Examples:
        >>> from dra_metadata import podresources
        >>> for pod in podresources.list_pod_resources():  # doctest: +SKIP
        ...     for container, claim, device in pod.claim_resources():
        ...         print(pod.namespace, pod.name, container.name, claim.claim_name, device.device)
        default dra-meta c claim-direct device-00
    """
    where, seconds = resolve_socket(socket), checked_timeout(timeout)
    response = call(where, LIST, seconds)
    return [_pod(pod) for pod in response.pod_resources]


def get_pod_resources(
    name: str,
    namespace: str,
    *,
    socket: str | os.PathLike[str] | None = None,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
) -> PodResources:
    """What the containers of the pod ``name`` in ``namespace`` hold (``Get``).

    One pod, as list_pod_resources gives it; ``socket`` and ``timeout`` as there. Raises
    PodNotFoundError (also a MetadataNotFoundError) when the kubelet does not run that pod,
    InvalidNameError for a name that no pod can have, and the errors of list_pod_resources.

    Examples:
        >>> from dra_metadata import podresources
        >>> pod = podresources.get_pod_resources("dra-meta", "default")  # doctest: +SKIP
        >>> [device.cdi_devices for _, _, device in pod.claim_resources()]  # doctest: +SKIP
    """
    pod = check_pod(name, namespace)
    where, seconds = resolve_socket(socket), checked_timeout(timeout)
    fields = {"pod_name": pod[0], "pod_namespace": pod[1]}
    response = call(where, GET, seconds, fields, pod)
    return _pod(response.pod_resources)


def allocatable_resources(
    *, socket: str | os.PathLike[str] | None = None, timeout: float = REQUEST_TIMEOUT_SECONDS
) -> AllocatableResources:
    """What the node's kubelet can allocate: device plugin devices, CPUs, memory
    (``GetAllocatableResources``).

    DRA devices are not in it (their drivers publish them in ResourceSlices): on a node with
    DRA drivers only and the default CPU and memory manager policies, it is empty. ``socket``
    and ``timeout`` and the errors as for list_pod_resources.
    """
    where, seconds = resolve_socket(socket), checked_timeout(timeout)
    return _allocatable(call(where, ALLOCATABLE, seconds))


async def alist_pod_resources(
    *, socket: str | os.PathLike[str] | None = None, timeout: float = REQUEST_TIMEOUT_SECONDS
) -> list[PodResources]:
    """list_pod_resources's asyncio twin (a grpc.aio channel): same arguments and errors."""
    where, seconds = resolve_socket(socket), checked_timeout(timeout)
    response = await acall(where, LIST, seconds)
    return [_pod(pod) for pod in response.pod_resources]


async def aget_pod_resources(
    name: str,
    namespace: str,
    *,
    socket: str | os.PathLike[str] | None = None,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
) -> PodResources:
    """get_pod_resources's asyncio twin (a grpc.aio channel): same arguments and errors."""
    pod = check_pod(name, namespace)
    where, seconds = resolve_socket(socket), checked_timeout(timeout)
    fields = {"pod_name": pod[0], "pod_namespace": pod[1]}
    response = await acall(where, GET, seconds, fields, pod)
    return _pod(response.pod_resources)


async def aallocatable_resources(
    *, socket: str | os.PathLike[str] | None = None, timeout: float = REQUEST_TIMEOUT_SECONDS
) -> AllocatableResources:
    """allocatable_resources's asyncio twin (a grpc.aio channel): same arguments and errors."""
    where, seconds = resolve_socket(socket), checked_timeout(timeout)
    return _allocatable(await acall(where, ALLOCATABLE, seconds))
