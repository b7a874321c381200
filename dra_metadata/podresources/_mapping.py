"""The kubelet's answers (protobuf messages of ``_proto/api.proto``) -> the frozen models.

Every field of the messages is carried over: proto3 leaves a scalar it did not send at its
default (``""``, 0, empty), which is what the models hold too; a message field that was not
sent (``topology``) and the optional ``share_id`` become None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def _topology(message: api_pb2.ContainerDevices | api_pb2.ContainerMemory) -> TopologyInfo | None:
    if not message.HasField("topology"):
        return None
    return TopologyInfo(tuple([NUMANode(node.ID) for node in message.topology.nodes]))


# The models are built with positional arguments (in their fields' order) and lists turned into
# tuples: a List of a full node maps about 1,200 messages, and that is a quarter faster than
# keywords and generators (benchmarks/bench_podresources.py).


def container_devices(message: api_pb2.ContainerDevices) -> ContainerDevices:
    return ContainerDevices(message.resource_name, tuple(message.device_ids), _topology(message))


def container_memory(message: api_pb2.ContainerMemory) -> ContainerMemory:
    return ContainerMemory(message.memory_type, message.size, _topology(message))


def claim_resource(message: api_pb2.ClaimResource) -> ClaimResource:
    return ClaimResource(
        message.driver_name,
        message.pool_name,
        message.device_name,
        tuple([cdi.name for cdi in message.cdi_devices]),
        message.share_id if message.HasField("share_id") else None,
    )


def dynamic_resource(message: api_pb2.DynamicResource) -> DynamicResource:
    return DynamicResource(
        message.claim_name,
        message.claim_namespace,
        tuple([claim_resource(claim) for claim in message.claim_resources]),
    )


def container_resources(message: api_pb2.ContainerResources) -> ContainerResources:
    return ContainerResources(
        message.name,
        tuple([container_devices(devices) for devices in message.devices]),
        tuple(message.cpu_ids),
        tuple([container_memory(memory) for memory in message.memory]),
        tuple([dynamic_resource(claim) for claim in message.dynamic_resources]),
    )


def pod_resources(message: api_pb2.PodResources) -> PodResources:
    return PodResources(
        message.name,
        message.namespace,
        tuple([container_resources(container) for container in message.containers]),
    )


def allocatable_resources(message: api_pb2.AllocatableResourcesResponse) -> AllocatableResources:
    return AllocatableResources(
        tuple([container_devices(devices) for devices in message.devices]),
        tuple(message.cpu_ids),
        tuple([container_memory(memory) for memory in message.memory]),
    )
