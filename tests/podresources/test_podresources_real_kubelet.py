"""Against a real kubelet: List, Get and GetAllocatableResources end to end, the asyncio twins,
the command, and the kubelet's own answer for a pod it does not run.

Runs on the real node (the ``node`` fixture: ``DRA_METADATA_NODE_ASSETS`` names the node's
assets), with a pod holding a DRA claim (podresources_node.py); skipped with the reason otherwise.
Whatever pods run there, the answers must agree with each other.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from dra_metadata import podresources

from helpers import run_command
from podresources_node import kubelet_fixture  # noqa: F401 - the fixture "kubelet"

pytestmark = [pytest.mark.real_node, pytest.mark.timeout(900)]


def test_list_get_and_allocatable_agree(kubelet: str) -> None:
    pods = podresources.list_pod_resources(socket=kubelet)
    assert pods, "a running node runs at least one pod"
    for pod in pods:
        assert podresources.get_pod_resources(pod.name, pod.namespace, socket=kubelet) == pod
        for _, claim, device in pod.claim_resources():
            assert claim.claim_name
            assert claim.claim_namespace == pod.namespace
            assert device.driver
            assert device.pool
            assert device.device
            assert device.cdi_devices
    assert isinstance(
        podresources.allocatable_resources(socket=kubelet), podresources.AllocatableResources
    )


def test_the_asyncio_twins_answer_the_same(kubelet: str) -> None:
    async def read() -> tuple[object, ...]:
        pods = await podresources.alist_pod_resources(socket=kubelet)
        first = await podresources.aget_pod_resources(
            pods[0].name, pods[0].namespace, socket=kubelet
        )
        return pods, first, await podresources.aallocatable_resources(socket=kubelet)

    pods, first, allocatable = asyncio.run(read())

    def by_name(answer: object) -> list[podresources.PodResources]:
        # the kubelet lists its pods in no fixed order from one call to the next
        assert isinstance(answer, list)
        return sorted(answer, key=lambda pod: (pod.namespace, pod.name))

    assert by_name(pods) == by_name(podresources.list_pod_resources(socket=kubelet))
    assert first == pods[0]  # type: ignore[index]
    assert allocatable == podresources.allocatable_resources(socket=kubelet)


def test_the_kubelet_does_not_know_a_pod_it_does_not_run(kubelet: str) -> None:
    with pytest.raises(podresources.PodNotFoundError) as caught:
        podresources.get_pod_resources("no-such-pod", "default", socket=kubelet)
    assert caught.value.code in {"UNKNOWN", "NOT_FOUND"}
    result = run_command(
        "pod-resources",
        "--pod",
        "no-such-pod",
        "--namespace",
        "default",
        "--socket",
        kubelet,
        root=None,
    )
    assert result.returncode == 1, result.stderr
    assert 'has no pod "no-such-pod" in namespace "default"' in result.stderr


def test_the_command_prints_what_list_answers(kubelet: str) -> None:
    result = run_command("pod-resources", "--socket", kubelet, "-o", "json", root=None)
    assert result.returncode == 0, result.stderr
    listed = podresources.list_pod_resources(socket=kubelet)

    def by_pod(documents: list[dict[str, object]]) -> list[dict[str, object]]:
        # Two List calls may order the pods differently (the kubelet walks a map).
        return sorted(
            documents, key=lambda document: (str(document["namespace"]), str(document["name"]))
        )

    assert by_pod(json.loads(result.stdout)) == by_pod([pod.to_document() for pod in listed])


def test_the_command_keeps_one_namespace_and_gets_one_pod(kubelet: str) -> None:
    listed = podresources.list_pod_resources(socket=kubelet)
    first = listed[0]
    result = run_command(
        "pod-resources",
        "--socket",
        kubelet,
        "--namespace",
        first.namespace,
        "-o",
        "json",
        root=None,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        pod.to_document() for pod in listed if pod.namespace == first.namespace
    ]
    result = run_command(
        "pod-resources",
        "--socket",
        kubelet,
        "--pod",
        first.name,
        "--namespace",
        first.namespace,
        "-o",
        "json",
        root=None,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [first.to_document()]


def test_the_command_shows_what_the_node_can_allocate(kubelet: str) -> None:
    result = run_command(
        "pod-resources", "--socket", kubelet, "--allocatable", "-o", "json", root=None
    )
    assert result.returncode == 0, result.stderr
    assert (
        json.loads(result.stdout)
        == podresources.allocatable_resources(socket=kubelet).to_document()
    )
