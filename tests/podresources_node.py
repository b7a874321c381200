"""The real node's kubelet for the PodResources tests: the ``kubelet`` fixture.

It runs on the real node of the ``node`` fixture (tests/conftest.py, node_harness.py: where
``DRA_METADATA_NODE_ASSETS`` names the node's assets), with a pod holding a DRA claim so that the
kubelet has something to answer; elsewhere the tests that use it are skipped with the reason.
"""

from __future__ import annotations

import pytest

from dra_metadata import podresources

from node_harness import ASSETS_VARIABLE, DRIVER_NAME, Node
from node_pod import prepare_namespace, start_pod

__all__ = ["ASSETS_VARIABLE", "kubelet_fixture"]
NAMESPACE = "default"
POD = "dra-meta"
"""The pod the node agents guide's examples name (docs/guides/node-agents.md)."""


@pytest.fixture(scope="module", name="kubelet")
def kubelet_fixture(node: Node) -> str:
    """The kubelet's PodResources socket, pod ``default/dra-meta`` (claim ``claim-direct``,
    request ``req-a``) running."""
    if node.get(f"/api/v1/namespaces/{NAMESPACE}/pods/{POD}") is None:
        prepare_namespace(node, NAMESPACE)
        node.create(
            f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaims",
            {
                "metadata": {"name": "claim-direct"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "req-a", "exactly": {"deviceClassName": DRIVER_NAME}}]
                    }
                },
            },
        )
        start_pod(node, NAMESPACE, POD, [{"name": "direct", "resourceClaimName": "claim-direct"}])
    socket = str(node.podresources_socket)
    podresources.list_pod_resources(socket=socket, timeout=10)  # answers, or the test fails
    return socket
