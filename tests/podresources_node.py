"""The real node's kubelet for the PodResources tests: the ``kubelet`` fixture.

It runs on the real node of the ``node`` fixture (tests/conftest.py, node_harness.py: where
``DRA_METADATA_NODE_ASSETS`` names the node's assets), with a pod holding a DRA claim so that the
kubelet has something to answer; elsewhere the tests that use it are skipped with the reason.
"""

from __future__ import annotations

import pytest

from dra_metadata import podresources

from node_harness import DRIVER_NAME, Node
from node_pod import prepare_namespace, start_pod

NAMESPACE = "podresources"


@pytest.fixture(scope="module", name="kubelet")
def kubelet_fixture(node: Node) -> str:
    """The kubelet's PodResources socket, pod ``holder`` (claim ``gpu``, request ``one``)
    running in namespace ``podresources``."""
    if node.get(f"/api/v1/namespaces/{NAMESPACE}") is None:
        prepare_namespace(node, NAMESPACE)
        node.create(
            f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaims",
            {
                "metadata": {"name": "gpu"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "one", "exactly": {"deviceClassName": DRIVER_NAME}}]
                    }
                },
            },
        )
        start_pod(node, NAMESPACE, "holder", [{"name": "gpu", "resourceClaimName": "gpu"}])
    socket = str(node.podresources_socket)
    podresources.list_pod_resources(socket=socket, timeout=10)  # answers, or the test fails
    return socket
