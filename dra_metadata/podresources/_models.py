"""What the kubelet's PodResources API answers, as frozen, hashable models.

Plain dataclasses with tuples: nothing here knows about gRPC or protobuf (``_mapping`` turns
the messages into these). The names follow the API's messages in Python's spelling; a DRA
device is ``driver``/``pool``/``device`` as everywhere else in dra_metadata. ``to_document()``
gives what ``dra-metadata pod-resources -o json`` prints: plain dicts and lists, every key
present (null when unset), keys in camelCase as the project's other documents spell them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class NUMANode:
    """One NUMA node of a topology (the message ``NUMANode``)."""

    id: int
    """The node's number, as the kernel counts them (``/sys/devices/system/node/node<id>``)."""

    def to_document(self) -> dict[str, Any]:
        """``{"id": 0}``."""
        return {"id": self.id}


@dataclass(frozen=True, slots=True)
class TopologyInfo:
    """Where a device or a block of memory sits: its NUMA nodes (the message ``TopologyInfo``)."""

    nodes: tuple[NUMANode, ...] = ()

    def to_document(self) -> dict[str, Any]:
        """``{"nodes": [{"id": 0}, ...]}``."""
        return {"nodes": [node.to_document() for node in self.nodes]}


def _topology(topology: TopologyInfo | None) -> dict[str, Any] | None:
    return None if topology is None else topology.to_document()


@dataclass(frozen=True, slots=True)
class ContainerDevices:
    """Devices of one device plugin resource (the message ``ContainerDevices``).

    These come from device plugins (``nvidia.com/gpu``), not from DRA: DRA devices are the
    `ContainerResources.dynamic_resources`. `topology` is None when the kubelet sent none.
    """

    resource_name: str
    """The extended resource's name, such as ``nvidia.com/gpu``."""
    device_ids: tuple[str, ...] = ()
    """The device plugin's IDs of the devices."""
    topology: TopologyInfo | None = None

    def to_document(self) -> dict[str, Any]:
        """``{"resourceName", "deviceIDs", "topology"}``."""
        return {
            "resourceName": self.resource_name,
            "deviceIDs": list(self.device_ids),
            "topology": _topology(self.topology),
        }


@dataclass(frozen=True, slots=True)
class ContainerMemory:
    """Memory of one type given to a container or allocatable (the message ``ContainerMemory``).

    `memory_type` is ``memory`` or a huge page size (``hugepages-1Gi``); `size` is in bytes.
    The kubelet reports memory only with its Static memory manager policy.
    """

    memory_type: str
    size: int
    """Bytes."""
    topology: TopologyInfo | None = None

    def to_document(self) -> dict[str, Any]:
        """``{"memoryType", "size", "topology"}``."""
        return {
            "memoryType": self.memory_type,
            "size": self.size,
            "topology": _topology(self.topology),
        }


@dataclass(frozen=True, slots=True)
class ClaimResource:
    """One DRA device a claim holds (the message ``ClaimResource``).

    `driver`, `pool` and `device` name the allocated device as the claim's allocation does
    (the API's ``driver_name``, ``pool_name``, ``device_name``). `cdi_devices` are the CDI
    device names it was given to the container as (``vendor.com/class=name``); with device
    metadata on, the driver's metadata CDI device is one of them. `share_id` is set for a
    device allocated with consumable capacity (a share of it), else None.
    """

    driver: str
    pool: str
    device: str
    cdi_devices: tuple[str, ...] = ()
    share_id: str | None = None

    def to_document(self) -> dict[str, Any]:
        """``{"driver", "pool", "device", "shareID", "cdiDevices"}``."""
        return {
            "driver": self.driver,
            "pool": self.pool,
            "device": self.device,
            "shareID": self.share_id,
            "cdiDevices": list(self.cdi_devices),
        }


@dataclass(frozen=True, slots=True)
class DynamicResource:
    """One ResourceClaim a container uses, and its devices (the message ``DynamicResource``).

    `claim_name` is the ResourceClaim's name: for a claim made from a template, the generated
    name (``<pod>-<pod claim>-<suffix>``), not the pod's name for it.
    """

    claim_name: str
    claim_namespace: str
    claim_resources: tuple[ClaimResource, ...] = ()

    def to_document(self) -> dict[str, Any]:
        """``{"claimName", "claimNamespace", "claimResources"}``."""
        return {
            "claimName": self.claim_name,
            "claimNamespace": self.claim_namespace,
            "claimResources": [resource.to_document() for resource in self.claim_resources],
        }


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """What one container holds (the message ``ContainerResources``).

    `devices`: device plugin devices; `cpu_ids`: exclusive CPUs (the Static CPU manager
    policy); `memory`: memory and huge pages (the Static memory manager policy);
    `dynamic_resources`: the DRA claims and their devices. Each is empty when it has none.
    """

    name: str
    devices: tuple[ContainerDevices, ...] = ()
    cpu_ids: tuple[int, ...] = ()
    memory: tuple[ContainerMemory, ...] = ()
    dynamic_resources: tuple[DynamicResource, ...] = ()

    def to_document(self) -> dict[str, Any]:
        """``{"name", "devices", "cpuIDs", "memory", "dynamicResources"}``."""
        return {
            "name": self.name,
            "devices": [devices.to_document() for devices in self.devices],
            "cpuIDs": list(self.cpu_ids),
            "memory": [memory.to_document() for memory in self.memory],
            "dynamicResources": [claim.to_document() for claim in self.dynamic_resources],
        }


@dataclass(frozen=True, slots=True)
class PodResources:
    """One pod on the node and what each of its containers holds (the message ``PodResources``).

    `containers` lists the pod's containers in spec order, after its sidecars (restartable
    init containers); the kubelet leaves other init containers out.

    Examples:
        >>> from dra_metadata.podresources import ClaimResource, ContainerResources
        >>> from dra_metadata.podresources import DynamicResource, PodResources
        >>> gpu = ClaimResource("gpu.example.com", "node-1", "gpu-0", ("gpu.example.com/gpu=0",))
        >>> claim = DynamicResource("trainer-gpu-x7k2p", "ml", (gpu,))
        >>> main = ContainerResources("main", dynamic_resources=(claim,))
        >>> pod = PodResources("trainer", "ml", (main,))
        >>> [f"{c.name}: {r.driver}/{r.pool}/{r.device}" for c, _, r in pod.claim_resources()]
        ['main: gpu.example.com/node-1/gpu-0']
    """

    name: str
    namespace: str
    containers: tuple[ContainerResources, ...] = ()

    def claim_resources(
        self, *, driver: str | None = None
    ) -> tuple[tuple[ContainerResources, DynamicResource, ClaimResource], ...]:
        """Every DRA device of the pod, with its container and claim, in the kubelet's order.

        One entry per device a container holds (a claim two containers share is listed for
        each); ``driver`` keeps only that driver's devices.
        """
        return tuple(
            (container, claim, resource)
            for container in self.containers
            for claim in container.dynamic_resources
            for resource in claim.claim_resources
            if driver is None or resource.driver == driver
        )

    def to_document(self) -> dict[str, Any]:
        """``{"name", "namespace", "containers"}``: one entry of ``pod-resources -o json``."""
        return {
            "name": self.name,
            "namespace": self.namespace,
            "containers": [container.to_document() for container in self.containers],
        }


@dataclass(frozen=True, slots=True)
class AllocatableResources:
    """What the node has to give, as ``GetAllocatableResources`` answers it.

    Device plugin devices, CPUs and memory the kubelet can allocate (its capacity, not what is
    still free). DRA devices are not in it: a DRA driver publishes them in ResourceSlices.
    Empty where the node has no device plugins and the CPU and memory managers have the
    default policies.
    """

    devices: tuple[ContainerDevices, ...] = ()
    cpu_ids: tuple[int, ...] = ()
    memory: tuple[ContainerMemory, ...] = ()

    def to_document(self) -> dict[str, Any]:
        """``{"devices", "cpuIDs", "memory"}``: what ``dra-metadata pod-resources --allocatable
        -o json`` prints."""
        return {
            "devices": [devices.to_document() for devices in self.devices],
            "cpuIDs": list(self.cpu_ids),
            "memory": [memory.to_document() for memory in self.memory],
        }
