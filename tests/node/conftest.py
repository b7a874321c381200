"""The pod the in-pod tests run their commands in, on the real node (the ``node`` fixture,
tests/conftest.py); every test here is marked ``real_node``."""

from __future__ import annotations

from pathlib import Path

import pytest

from node_harness import DRIVER_NAME, Node
from node_pod import Pod, prepare_namespace, start_pod

NAMESPACE = "dra-meta"
POD = "dra-meta"
DIRECT_CLAIM = "claim-direct"
"""The direct claim (request ``req-a``); the pod's claim ``fromtmpl`` is made from a template
(request ``req-t``), as in the real answers of the fixtures."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(item.path).is_relative_to(here):
            item.add_marker(pytest.mark.real_node)


def _request(name: str) -> dict[str, object]:
    return {"name": name, "exactly": {"deviceClassName": DRIVER_NAME}}


@pytest.fixture(scope="session")
def pod(node: Node) -> Pod:
    """Pod ``dra-meta`` with the direct claim ``claim-direct`` (pod claim ``direct``) and the
    template claim ``fromtmpl``, running under the example's least-privilege ServiceAccount."""
    prepare_namespace(node, NAMESPACE)
    node.create(
        f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaims",
        {
            "metadata": {"name": DIRECT_CLAIM},
            "spec": {"devices": {"requests": [_request("req-a")]}},
        },
    )
    node.create(
        f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaimtemplates",
        {
            "metadata": {"name": "tmpl"},
            "spec": {"spec": {"devices": {"requests": [_request("req-t")]}}},
        },
    )
    return start_pod(
        node,
        NAMESPACE,
        POD,
        [
            {"name": "direct", "resourceClaimName": DIRECT_CLAIM},
            {"name": "fromtmpl", "resourceClaimTemplateName": "tmpl"},
        ],
    )
