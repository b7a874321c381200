"""A real kubelet's PodResources answers (tests/data/node/), parsed into the project's own
messages and mapped to the models: every field, the documents, hashing."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from google.protobuf import json_format

from dra_metadata import podresources
from dra_metadata.podresources import (
    AllocatableResources,
    ClaimResource,
    ContainerDevices,
    ContainerMemory,
    ContainerResources,
    DynamicResource,
    NUMANode,
    PodResources,
    TopologyInfo,
    _mapping,
)
from dra_metadata.podresources._proto import api_pb2

from helpers import REPO

NODE = REPO / "tests" / "data" / "node"
DIRECT_UID = "332f917e-b918-4e23-aead-db07965936c8"
TEMPLATE_UID = "f23a2559-0eea-4f72-a095-6dd0fcead961"

DIRECT = DynamicResource(
    claim_name="claim-direct",
    claim_namespace="default",
    claim_resources=(
        ClaimResource(
            driver="test-driver.cdi.k8s.io",
            pool="e2e-node",
            device="device-00",
            cdi_devices=(
                f"test-driver.cdi.k8s.io/test=claim-{DIRECT_UID}-req-a",
                f"test-driver.cdi.k8s.io/metadata={DIRECT_UID}_req-a",
            ),
            share_id=None,
        ),
    ),
)
FROM_TEMPLATE = DynamicResource(
    claim_name="dra-meta-fromtmpl-wxrv9",
    claim_namespace="default",
    claim_resources=(
        ClaimResource(
            driver="test-driver.cdi.k8s.io",
            pool="e2e-node",
            device="device-01",
            cdi_devices=(
                f"test-driver.cdi.k8s.io/test=claim-{TEMPLATE_UID}-req-t",
                f"test-driver.cdi.k8s.io/metadata={TEMPLATE_UID}_req-t",
            ),
        ),
    ),
)
DRA_META = PodResources(
    name="dra-meta",
    namespace="default",
    containers=(
        ContainerResources(
            name="c",
            devices=(),
            cpu_ids=(),
            memory=(),
            dynamic_resources=(DIRECT, FROM_TEMPLATE),
        ),
    ),
)
PLAIN = PodResources(name="plain", namespace="default", containers=(ContainerResources("p"),))


def _answer(name: str, message: type[Any]) -> Any:
    document = json.loads((NODE / f"podresources-{name}.json").read_text())
    return json_format.ParseDict(document, message())


def test_the_list_answer_maps_to_every_pod_and_device() -> None:
    response = _answer("list", api_pb2.ListPodResourcesResponse)
    pods = [_mapping.pod_resources(pod) for pod in response.pod_resources]
    assert pods == [PLAIN, DRA_META]


def test_the_get_answer_maps_to_the_pod() -> None:
    response = _answer("get", api_pb2.GetPodResourcesResponse)
    assert _mapping.pod_resources(response.pod_resources) == DRA_META


def test_the_allocatable_answer_of_a_node_without_device_plugins_is_empty() -> None:
    response = _answer("allocatable", api_pb2.AllocatableResourcesResponse)
    assert _mapping.allocatable_resources(response) == AllocatableResources((), (), ())


def test_every_field_of_the_messages_is_carried_over() -> None:
    """The fields the real node left at their defaults: device plugins, CPUs, memory, NUMA."""
    topology = {"nodes": [{"ID": 0}, {"ID": 1}]}
    container = json_format.ParseDict(
        {
            "name": "trainer",
            "devices": [
                {"resource_name": "nvidia.com/gpu", "device_ids": ["GPU-a", "GPU-b"]},
                {"resource_name": "example.com/nic", "device_ids": ["nic0"], "topology": topology},
            ],
            "cpu_ids": [2, 3, 9],
            "memory": [
                {"memory_type": "memory", "size": str(2**34), "topology": topology},
                {"memory_type": "hugepages-1Gi", "size": "1073741824"},
            ],
            "dynamic_resources": [
                {
                    "claim_name": "shared",
                    "claim_namespace": "ml",
                    "claim_resources": [
                        {
                            "driver_name": "gpu.example.com",
                            "pool_name": "node-a/pool",
                            "device_name": "gpu-0",
                            "share_id": "6b6a9c5e-0000-4000-8000-000000000001",
                        },
                        {"driver_name": "gpu.example.com", "pool_name": "p", "share_id": ""},
                    ],
                }
            ],
        },
        api_pb2.ContainerResources(),
    )
    numa = TopologyInfo((NUMANode(0), NUMANode(1)))
    assert _mapping.container_resources(container) == ContainerResources(
        name="trainer",
        devices=(
            ContainerDevices("nvidia.com/gpu", ("GPU-a", "GPU-b"), None),
            ContainerDevices("example.com/nic", ("nic0",), numa),
        ),
        cpu_ids=(2, 3, 9),
        memory=(
            ContainerMemory("memory", 2**34, numa),
            ContainerMemory("hugepages-1Gi", 2**30, None),
        ),
        dynamic_resources=(
            DynamicResource(
                "shared",
                "ml",
                (
                    ClaimResource(
                        "gpu.example.com",
                        "node-a/pool",
                        "gpu-0",
                        (),
                        "6b6a9c5e-0000-4000-8000-000000000001",
                    ),
                    # share_id is optional in the proto: sent empty is not the same as unset
                    ClaimResource("gpu.example.com", "p", "", (), ""),
                ),
            ),
        ),
    )
    allocatable = json_format.ParseDict(
        {"devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["GPU-a"]}], "cpu_ids": [0]},
        api_pb2.AllocatableResourcesResponse(),
    )
    assert _mapping.allocatable_resources(allocatable) == AllocatableResources(
        devices=(ContainerDevices("nvidia.com/gpu", ("GPU-a",)),), cpu_ids=(0,), memory=()
    )


def test_the_models_carry_the_attribute_names_of_the_api() -> None:
    assert [f.name for f in dataclasses.fields(PodResources)] == ["name", "namespace", "containers"]
    assert [f.name for f in dataclasses.fields(ContainerResources)] == [
        "name",
        "devices",
        "cpu_ids",
        "memory",
        "dynamic_resources",
    ]
    assert [f.name for f in dataclasses.fields(DynamicResource)] == [
        "claim_name",
        "claim_namespace",
        "claim_resources",
    ]
    assert [f.name for f in dataclasses.fields(ClaimResource)][:4] == [
        "driver",
        "pool",
        "device",
        "cdi_devices",
    ]
    assert [f.name for f in dataclasses.fields(AllocatableResources)] == [
        "devices",
        "cpu_ids",
        "memory",
    ]
    assert [f.name for f in dataclasses.fields(ContainerDevices)] == [
        "resource_name",
        "device_ids",
        "topology",
    ]


def test_the_models_are_frozen_and_hashable() -> None:
    assert len({DRA_META, dataclasses.replace(DRA_META), PLAIN}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        DRA_META.name = "other"  # type: ignore[misc]
    for model in (DRA_META, PLAIN, AllocatableResources(), TopologyInfo((NUMANode(1),))):
        hash(model)


def test_claim_resources_lists_each_device_with_its_container_and_claim() -> None:
    rows = [
        (container.name, claim.claim_name, device.device)
        for container, claim, device in DRA_META.claim_resources()
    ]
    assert rows == [
        ("c", "claim-direct", "device-00"),
        ("c", "dra-meta-fromtmpl-wxrv9", "device-01"),
    ]
    assert DRA_META.claim_resources(driver="other.example.com") == ()
    assert PLAIN.claim_resources() == ()


def test_the_document_of_the_real_answer() -> None:
    document = DRA_META.to_document()
    assert document == {
        "name": "dra-meta",
        "namespace": "default",
        "containers": [
            {
                "name": "c",
                "devices": [],
                "cpuIDs": [],
                "memory": [],
                "dynamicResources": [
                    {
                        "claimName": "claim-direct",
                        "claimNamespace": "default",
                        "claimResources": [
                            {
                                "driver": "test-driver.cdi.k8s.io",
                                "pool": "e2e-node",
                                "device": "device-00",
                                "shareID": None,
                                "cdiDevices": [
                                    f"test-driver.cdi.k8s.io/test=claim-{DIRECT_UID}-req-a",
                                    f"test-driver.cdi.k8s.io/metadata={DIRECT_UID}_req-a",
                                ],
                            }
                        ],
                    },
                    FROM_TEMPLATE.to_document(),
                ],
            }
        ],
    }
    assert json.loads(json.dumps(document)) == document


def test_the_documents_of_every_model_have_every_key() -> None:
    numa = TopologyInfo((NUMANode(3),))
    assert ContainerDevices("r", ("a",), numa).to_document() == {
        "resourceName": "r",
        "deviceIDs": ["a"],
        "topology": {"nodes": [{"id": 3}]},
    }
    assert ContainerMemory("memory", 5).to_document() == {
        "memoryType": "memory",
        "size": 5,
        "topology": None,
    }
    assert AllocatableResources(cpu_ids=(1, 2)).to_document() == {
        "devices": [],
        "cpuIDs": [1, 2],
        "memory": [],
    }


def test_the_public_names_report_the_public_module() -> None:
    for name in podresources.__all__:
        value = getattr(podresources, name)
        if isinstance(value, type) and name != "PodResourcesError":
            assert value.__module__ == "dra_metadata.podresources", name
    assert podresources.PodResourcesError.__module__ == "dra_metadata"


def test_the_fixtures_are_the_shared_real_answers() -> None:
    shared = REPO.parent / "shared" / "fixtures" / "node"
    if not shared.is_dir():
        pytest.skip(f"{shared} is not here (a checkout without the shared fixtures)")
    for path in sorted(NODE.glob("podresources-*.json")):
        assert path.read_bytes() == (shared / path.name).read_bytes(), path.name
