"""Which pod and container hold which device, from the kubelet's PodResources API.

For node agents (exporters, health controllers, scheduler helpers: DaemonSets) that must map
the node's DRA devices to pods. gRPC over the kubelet's unix socket
(``/var/lib/kubelet/pod-resources/kubelet.sock``; docs/guides/node-agents.md shows the
DaemonSet that mounts it). Needs the optional dependencies: ``pip install
'dra-metadata[podresources]'`` (grpcio, protobuf); they are imported at the first call, so
importing this package costs no more than its models.

>>> from dra_metadata import podresources
>>> pods = podresources.list_pod_resources()  # doctest: +SKIP
>>> [(p.name, d.device) for p in pods for *_, d in p.claim_resources()]  # doctest: +SKIP
"""

from dra_metadata.podresources._client import REQUEST_TIMEOUT_SECONDS
from dra_metadata.podresources._errors import (
    PodNotFoundError,
    PodResourcesConnectionError,
    PodResourcesError,
    PodResourcesNotInstalledError,
    PodResourcesPermissionError,
    PodResourcesServerError,
    PodResourcesSocketNotFoundError,
    PodResourcesTimeoutError,
    PodResourcesUnimplementedError,
)
from dra_metadata.podresources._models import (
    AllocatableResources,
    ClaimResource,
    ContainerDevices,
    ContainerMemory,
    ContainerResources,
    DynamicResource,
    NUMANode,
    PodResources,
    TopologyInfo,
)
from dra_metadata.podresources._read import (
    aallocatable_resources,
    aget_pod_resources,
    alist_pod_resources,
    allocatable_resources,
    get_pod_resources,
    list_pod_resources,
)
from dra_metadata.podresources._socket import DEFAULT_SOCKET, SOCKET_ENVIRONMENT_VARIABLE

__all__ = [
    "DEFAULT_SOCKET",
    "REQUEST_TIMEOUT_SECONDS",
    "SOCKET_ENVIRONMENT_VARIABLE",
    "AllocatableResources",
    "ClaimResource",
    "ContainerDevices",
    "ContainerMemory",
    "ContainerResources",
    "DynamicResource",
    "NUMANode",
    "PodNotFoundError",
    "PodResources",
    "PodResourcesConnectionError",
    "PodResourcesError",
    "PodResourcesNotInstalledError",
    "PodResourcesPermissionError",
    "PodResourcesServerError",
    "PodResourcesSocketNotFoundError",
    "PodResourcesTimeoutError",
    "PodResourcesUnimplementedError",
    "TopologyInfo",
    "aallocatable_resources",
    "aget_pod_resources",
    "alist_pod_resources",
    "allocatable_resources",
    "get_pod_resources",
    "list_pod_resources",
]

for _public in (
    AllocatableResources,
    ClaimResource,
    ContainerDevices,
    ContainerMemory,
    ContainerResources,
    DynamicResource,
    NUMANode,
    PodResources,
    TopologyInfo,
    PodNotFoundError,
    PodResourcesConnectionError,
    PodResourcesNotInstalledError,
    PodResourcesPermissionError,
    PodResourcesServerError,
    PodResourcesSocketNotFoundError,
    PodResourcesTimeoutError,
    PodResourcesUnimplementedError,
):
    _public.__module__ = "dra_metadata.podresources"
del _public
