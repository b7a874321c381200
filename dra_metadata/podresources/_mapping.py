"""The kubelet's answers (protobuf messages of ``_proto/api.proto``) -> the frozen models.

Every field of the messages is carried over: proto3 leaves a scalar it did not send at its
default (``""``, 0, empty), which is what the models hold too; a message field that was not
sent (``topology``) and the optional ``share_id`` become None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

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

if TYPE_CHECKING:
    from dra_metadata.podresources._proto import api_pb2

_In = TypeVar("_In")
_Out = TypeVar("_Out")


def _topology(message: api_pb2.ContainerDevices | api_pb2.ContainerMemory) -> TopologyInfo | None:
    if not message.HasField("topology"):
        return None
    return TopologyInfo(nodes=tuple(NUMANode(id=node.ID) for node in message.topology.nodes))


def container_devices(message: api_pb2.ContainerDevices) -> ContainerDevices:
    return ContainerDevices(
        resource_name=message.resource_name,
        device_ids=tuple(message.device_ids),
        topology=_topology(message),
    )


def container_memory(message: api_pb2.ContainerMemory) -> ContainerMemory:
    return ContainerMemory(
        memory_type=message.memory_type, size=message.size, topology=_topology(message)
    )


def claim_resource(message: api_pb2.ClaimResource) -> ClaimResource:
    return ClaimResource(
        driver=message.driver_name,
        pool=message.pool_name,
        device=message.device_name,
        cdi_devices=tuple(cdi.name for cdi in message.cdi_devices),
        share_id=message.share_id if message.HasField("share_id") else None,
    )


def dynamic_resource(message: api_pb2.DynamicResource) -> DynamicResource:
    return DynamicResource(
        claim_name=message.claim_name,
        claim_namespace=message.claim_namespace,
        claim_resources=tuple(claim_resource(claim) for claim in message.claim_resources),
    )


def container_resources(message: api_pb2.ContainerResources) -> ContainerResources:
    return ContainerResources(
        name=message.name,
        devices=_all(container_devices, message.devices),
        cpu_ids=tuple(message.cpu_ids),
        memory=_all(container_memory, message.memory),
        dynamic_resources=_all(dynamic_resource, message.dynamic_resources),
    )


def pod_resources(message: api_pb2.PodResources) -> PodResources:
    return PodResources(
        name=message.name,
        namespace=message.namespace,
        containers=_all(container_resources, message.containers),
    )


def allocatable_resources(message: api_pb2.AllocatableResourcesResponse) -> AllocatableResources:
    return AllocatableResources(
        devices=_all(container_devices, message.devices),
        cpu_ids=tuple(message.cpu_ids),
        memory=_all(container_memory, message.memory),
    )


def _all(convert: Callable[[_In], _Out], messages: Iterable[_In]) -> tuple[_Out, ...]:
    return tuple(convert(message) for message in messages)
