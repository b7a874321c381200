"""The node agents' guide and its manifest say what the code does: the table and the JSON shown
are the command's output for the real answers, the agent of the DaemonSet uses the API as it
is, and the Python examples run against a real kubelet (skipped without one)."""

from __future__ import annotations

import ast
import io
import json
from typing import Any

import pytest
import yaml
from google.protobuf import json_format

from dra_metadata import podresources
from dra_metadata.cli import build_parser
from dra_metadata.cli._commands import pod_resources
from dra_metadata.cli._output import Output
from dra_metadata.podresources import _mapping
from dra_metadata.podresources._proto import api_pb2

from helpers import REPO
from podresources_node import ASSETS_VARIABLE, kubelet_fixture  # noqa: F401 - the fixture "kubelet"
from test_docs import blocks, run_examples

GUIDE = REPO / "docs" / "guides" / "node-agents.md"
MANIFEST = REPO / "examples" / "kubernetes" / "node-agent-daemonset.yaml"


def _real_pods() -> list[podresources.PodResources]:
    document = json.loads((REPO / "tests" / "data" / "node" / "podresources-list.json").read_text())
    response = json_format.ParseDict(document, api_pb2.ListPodResourcesResponse())
    return [_mapping.pod_resources(pod) for pod in response.pod_resources]


def test_the_guides_table_is_the_commands_for_the_real_answer() -> None:
    page = blocks(GUIDE)
    (table,) = [block for block in page if block.language == "text"]
    arguments = build_parser("pod-resources").parse_args(["pod-resources", "-o", "table"])
    stream = io.StringIO()
    out = Output(stream)
    pod_resources.show(_real_pods(), arguments, out)
    out.flush()
    assert stream.getvalue() == table.code


def _keys(value: Any) -> Any:
    """The shape of a document: its keys, nested, with lists reduced to their first item."""
    if isinstance(value, dict):
        return {key: _keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_keys(value[0])] if value else []
    return None


def test_the_guides_json_has_the_keys_of_the_real_document() -> None:
    (shown,) = [json.loads(b.code) for b in blocks(GUIDE) if b.language == "json"]
    real = [pod.to_document() for pod in _real_pods() if pod.name == "dra-meta"]
    assert _keys(shown) == _keys(real)
    claim = real[0]["containers"][0]["dynamicResources"][0]
    assert shown[0]["containers"][0]["dynamicResources"][0] == claim


def test_the_daemonset_mounts_the_kubelets_directory_and_runs_as_root() -> None:
    config_map, daemon_set = yaml.safe_load_all(MANIFEST.read_text())
    pod = daemon_set["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    (volume,) = [v for v in pod["volumes"] if "hostPath" in v]
    assert volume["hostPath"] == {"path": "/var/lib/kubelet/pod-resources", "type": "Directory"}
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert mount["mountPath"] == volume["hostPath"]["path"]
    assert podresources.DEFAULT_SOCKET.startswith(mount["mountPath"] + "/")
    assert container["securityContext"]["runAsUser"] == 0
    assert pod["automountServiceAccountToken"] is False
    assert '--8<-- "examples/kubernetes/node-agent-daemonset.yaml"' in GUIDE.read_text()
    agent = ast.parse(config_map["data"]["agent.py"])
    used = {
        node.attr
        for node in ast.walk(agent)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "podresources"
    }
    assert used == {"list_pod_resources", "PodResourcesError"}
    assert all(hasattr(podresources, name) for name in used)


@pytest.mark.parametrize(
    "block",
    [b for b in blocks(GUIDE) if b.language == "python" and b.marker == "podresources"],
    ids=lambda block: block.name,
)
def test_the_guides_examples_run_on_a_real_node(
    block: Any, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile(block.code, block.name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    socket = request.getfixturevalue("kubelet")  # skips without a real node
    monkeypatch.setenv(podresources.SOCKET_ENVIRONMENT_VARIABLE, socket)
    pods = podresources.list_pod_resources()
    if not any(pod.name == "dra-meta" and pod.namespace == "default" for pod in pods):
        pytest.skip(f"the real node ({ASSETS_VARIABLE}) runs no pod default/dra-meta")
    run_examples([block.__class__(**{**vars(block), "marker": None})], {"__name__": "__docs__"})
