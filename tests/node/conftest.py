"""The real node (node_harness.py) and the pod the in-pod tests run their commands in.

The node is session-scoped and machine-wide (one bridge, one state directory, a lock): one
process owns it, so these tests run with ``-n 0`` (or one xdist worker). Under several workers
(the suite's ``-n auto``) they are skipped saying so: each worker would start its own node after
the previous one's whole session ended, so the later workers' tests would wait on the others'
unrelated tests (docs/development.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import node_harness
from node_harness import DRIVER_NAME, Node
from node_pod import REPO, Pod, start_pod

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


@pytest.fixture(scope="session")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    folder = node_harness.assets()
    if folder is None:
        pytest.skip(node_harness.missing_assets())
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        pytest.skip(
            "the real node runs in one process: run these tests with -n 0 "
            f"({node_harness.ASSETS_VARIABLE}=... python -m pytest tests/node -n 0)"
        )
    with node_harness.running(folder, tmp_path_factory.mktemp("node-logs")) as running:
        yield running


def _request(name: str) -> dict[str, object]:
    return {"name": name, "exactly": {"deviceClassName": DRIVER_NAME}}


def _apply_reader_rbac(node: Node, namespace: str) -> None:
    """The project's example ServiceAccount, Role and RoleBinding (examples/kubernetes)."""
    documents = yaml.safe_load_all(
        (REPO / "examples" / "kubernetes" / "api-reader-rbac.yaml").read_text()
    )
    collections = {
        "ServiceAccount": f"/api/v1/namespaces/{namespace}/serviceaccounts",
        "Role": f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles",
        "RoleBinding": f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
    }
    for document in documents:
        if document["kind"] == "RoleBinding":
            document["subjects"][0]["namespace"] = namespace
        node.create(collections[document["kind"]], document)


@pytest.fixture(scope="session")
def pod(node: Node) -> Pod:
    """Pod ``dra-meta`` with the direct claim ``claim-direct`` (pod claim ``direct``) and the
    template claim ``fromtmpl``, running under the example's least-privilege ServiceAccount."""
    node.create("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    node.create(
        f"/api/v1/namespaces/{NAMESPACE}/configmaps",
        {"metadata": {"name": "api-ca"}, "data": {"ca.crt": node.api_ca.read_text()}},
    )
    _apply_reader_rbac(node, NAMESPACE)
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
