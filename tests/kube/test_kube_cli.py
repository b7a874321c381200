"""The command's Kubernetes API parts as real subprocesses against a real kube-apiserver.

Skipped without KUBEBUILDER_ASSETS (see kube_harness.py). Each subprocess finds the server
through a kubeconfig file ($KUBECONFIG), as a user's shell or a pod without a ServiceAccount
token would.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.config.models import Cluster, User

from dra_metadata.kube import read_claim_status, read_device_health

import kube_harness
from helpers import COMMAND, REPO
from kube_harness import (
    ADMIN_TOKEN,
    ApiServer,
    allocated_claim,
    apply_example_rbac,
    network_status,
    report_unhealthy_gpu,
    template_pod,
)

pytestmark = pytest.mark.skipif(kube_harness.assets() is None, reason=kube_harness.SKIP_REASON)


@pytest.fixture
def kubeconfig(server: ApiServer, tmp_path: Path) -> Path:
    return server.write_kubeconfig(tmp_path / "kubeconfig")


def environment(kubeconfig: Path, **more: str) -> dict[str, str]:
    """No ServiceAccount and no metadata root of this machine: only the kubeconfig."""
    kept = {key: value for key, value in os.environ.items() if not key.startswith("POD_")}
    kept.pop("DRA_METADATA_ROOT", None)
    return {**kept, "KUBECONFIG": str(kubeconfig), **more}


def command(*arguments: str, kubeconfig: Path, **more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environment(kubeconfig, **more),
    )


def admin(server: ApiServer) -> Client:
    return Client(
        config=KubeConfig.from_one(
            cluster=Cluster(server=server.url, certificate_auth=str(server.ca_file)),
            user=User(token=ADMIN_TOKEN),
        )
    )


def test_wait_source_api(server: ApiServer, namespace: str, kubeconfig: Path) -> None:
    path = allocated_claim(server, namespace, "rdma-nics")
    wait = ["wait", "rdma-nics", "nics", "--source", "api", "--namespace", namespace]
    result = command(*wait, "--for", "network-data", "--timeout", "2", kubeconfig=kubeconfig)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "dra-metadata: timed out: not ready after 2 s: claim status has no networkData for "
        f"device nic-0 (resourceclaim {namespace}/rdma-nics, resourceVersion "
    )
    assert result.stderr.count("\n") == 1
    # Waiting: the driver publishes while the command waits (or before its first read).
    with subprocess.Popen(
        [COMMAND, *wait, "--require", "interface-name,ips", "--timeout", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(kubeconfig),
    ) as waiting:
        server.patch_status(path, network_status("nic-0"))
        stdout, stderr = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, stderr
    assert stdout.startswith(
        "ready: network data (interface_name, ips) on every device: 1 device(s), resourceclaim "
        f"{namespace}/rdma-nics, resourceVersion "
    )
    # Without --for: the claim is allocated; -o json is the document of show, without files.
    document = json.loads(command(*wait, "-o", "json", kubeconfig=kubeconfig).stdout)
    assert document["files"] == []
    assert document["requests"][0]["devices"][0]["networkData"] == {
        "interfaceName": "rdma0",
        "ips": ["10.128.0.17/24"],
        "hardwareAddress": "0a:58:0a:80:00:10",
    }


def test_wait_source_auto_and_exec(
    server: ApiServer, namespace: str, kubeconfig: Path, tmp_path: Path
) -> None:
    path = allocated_claim(server, namespace, "rdma-nics")
    server.patch_status(path, network_status("nic-0"))
    root = tmp_path / "root"
    root.mkdir()  # mounted, but no request directory of this claim: auto takes the API
    result = command(
        "wait",
        "rdma-nics",
        "nics",
        "--source",
        "auto",
        "--root",
        str(root),
        "--namespace",
        namespace,
        "--for",
        "network-data",
        kubeconfig=kubeconfig,
    )
    assert result.returncode == 0, result.stderr
    assert "resourceclaim" in result.stdout
    ran = command(
        "exec",
        "rdma-nics",
        "nics",
        "--source",
        "api",
        "--namespace",
        namespace,
        "--for",
        "network-data",
        "--timeout",
        "10s",
        "--",
        "sh",
        "-c",
        "echo started",
        kubeconfig=kubeconfig,
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "started\n", "")


def test_status(server: ApiServer, namespace: str, kubeconfig: Path) -> None:
    path = allocated_claim(server, namespace, "rdma-nics", "nic-0", "nic-1")
    server.patch_status(path, network_status("nic-0"))
    result = command(
        "status", "rdma-nics", "--namespace", namespace, "-o", "json", kubeconfig=kubeconfig
    )
    assert result.returncode == 0, result.stderr
    with admin(server) as client:
        expected = read_claim_status("rdma-nics", namespace=namespace, client=client)
    assert json.loads(result.stdout) == expected.to_document()
    document = json.loads(result.stdout)
    assert set(document) == {
        "name", "namespace", "uid", "resourceVersion", "podClaimName", "allocated", "requests",
        "devices",
    }  # fmt: skip
    assert document["devices"][0] == {
        "request": "nics",
        "driver": "dra.net",
        "pool": "node-7",
        "name": "nic-0",
        "shareID": None,
        "networkData": {
            "interfaceName": "rdma0",
            "ips": ["10.128.0.17/24"],
            "hardwareAddress": "0a:58:0a:80:00:10",
        },
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "NetworkDeviceReady",
                "message": "",
                "lastTransitionTime": "2026-11-30T13:29:34Z",
                "observedGeneration": None,
            }
        ],
        "data": None,
    }
    assert document["devices"][1]["networkData"] is None
    table = command(
        "status", "rdma-nics", "--namespace", namespace, "-o", "table", kubeconfig=kubeconfig
    )
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].startswith(f"claim {namespace}/rdma-nics, resourceVersion ")
    assert lines[2].split() == [
        "REQUEST", "DRIVER", "POOL", "DEVICE", "SHARE", "ID", "INTERFACE", "IPS", "MAC", "CONDITIONS",
    ]  # fmt: skip
    assert lines[3].split() == [
        "nics", "dra.net", "node-7", "nic-0", "-", "rdma0", "10.128.0.17/24", "0a:58:0a:80:00:10",
        "Ready=True",
    ]  # fmt: skip
    assert lines[4].split() == ["nics", "dra.net", "node-7", "nic-1", "-", "-", "-", "-", "-"]
    # A template claim of this pod, named by the downward API's variables.
    generated = template_pod(server, namespace)
    result = command(
        "status", "--template", "accelerator", "-o", "json", kubeconfig=kubeconfig,
        POD_NAME="trainer-0", POD_NAMESPACE=namespace,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (json.loads(result.stdout)["name"], json.loads(result.stdout)["podClaimName"]) == (
        generated,
        "accelerator",
    )
    missing = command("status", "no-such-claim", "--namespace", namespace, kubeconfig=kubeconfig)
    assert missing.returncode == 1
    assert missing.stderr == (
        f'dra-metadata: resourceclaim "no-such-claim" in namespace "{namespace}" not found: '
        "check the claim's name (spec.resourceClaims of the pod) and the namespace\n"
    )


def test_health(server: ApiServer, namespace: str, kubeconfig: Path) -> None:
    generated = template_pod(server, namespace)
    pod = ["--pod", "trainer-0", "--namespace", namespace]
    empty = command("health", *pod, "-o", "table", kubeconfig=kubeconfig)
    assert (empty.returncode, empty.stdout) == (
        0,
        "no device health reported for the containers (yet)\n",
    )
    assert json.loads(command("health", *pod, "-o", "json", kubeconfig=kubeconfig).stdout) == []
    report_unhealthy_gpu(server, namespace)
    result = command("health", *pod, "--container", "trainer", "-o", "json", kubeconfig=kubeconfig)
    assert result.returncode == 0, result.stderr
    with admin(server) as client:
        expected = read_device_health(pod_name="trainer-0", namespace=namespace, client=client)
    assert json.loads(result.stdout) == [entry.to_document() for entry in expected]
    assert json.loads(result.stdout) == [
        {
            "container": "trainer",
            "podClaimName": "accelerator",
            "request": "gpu",
            "driver": "gpu.example.com",
            "pool": "rack-1/node-7",
            "device": "gpu-3",
            "health": "Unhealthy",
            "message": "XID 79",
            "resourceName": "claim:accelerator/gpu",
            "resourceID": "gpu.example.com/rack-1/node-7/gpu-3",
            "claimName": generated,
            "unresolved": None,
        }
    ]
    table = command("health", *pod, "-o", "table", kubeconfig=kubeconfig).stdout.splitlines()
    assert table[0].split() == [
        "CONTAINER", "CLAIM", "REQUEST", "DRIVER", "POOL", "DEVICE", "HEALTH", "MESSAGE",
    ]  # fmt: skip
    assert table[1].split() == [
        "trainer", "accelerator", "gpu", "gpu.example.com", "rack-1/node-7", "gpu-3", "Unhealthy",
        "XID", "79",
    ]  # fmt: skip
    unknown = command("health", *pod, "--container", "sidecar", kubeconfig=kubeconfig)
    assert unknown.returncode == 1
    assert 'has no container "sidecar"; its containers: trainer' in unknown.stderr


def test_refusals_exit_5_with_one_line(server: ApiServer, namespace: str, tmp_path: Path) -> None:
    """A ServiceAccount the example Role does not cover here: 403, one line, no traceback."""
    token = apply_example_rbac(server, namespace)
    other = server.namespace(f"{namespace}-other")
    allocated_claim(server, other, "rdma-nics")
    reader = server.write_kubeconfig(tmp_path / "reader", token)
    results = {
        "status": command("status", "rdma-nics", "--namespace", other, kubeconfig=reader),
        "health": command("health", "--pod", "trainer-0", "--namespace", other, kubeconfig=reader),
        "wait": command(
            "wait",
            "rdma-nics",
            "nics",
            "--source",
            "api",
            "--namespace",
            other,
            "--timeout",
            "10",
            kubeconfig=reader,
        ),
    }
    for name, result in results.items():
        assert result.returncode == 5, (name, result.stderr)
        assert result.stderr.count("\n") == 1, name
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith(
            "dra-metadata: the Kubernetes API server refused to get "
        ), name
        assert result.stderr.endswith(
            "see the example Role in examples/kubernetes/api-reader-rbac.yaml in the "
            "dra-metadata sources\n"
        ), name
    stranger = server.write_kubeconfig(tmp_path / "stranger", "not-a-token")
    result = command("status", "rdma-nics", "--namespace", other, kubeconfig=stranger)
    assert result.returncode == 5
    assert "the token is unknown, expired or revoked" in result.stderr
    debug = command("--debug", "status", "rdma-nics", "--namespace", other, kubeconfig=reader)
    assert "Traceback" in debug.stderr
    assert "KubeAPIError" in debug.stderr


def test_the_dranet_examples_init_container(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    """The command of examples/kubernetes/dranet-pod.yaml, with its downward API variables."""
    documents = list(yaml.safe_load_all((REPO / "examples/kubernetes/dranet-pod.yaml").read_text()))
    pod = next(document for document in documents if document["kind"] == "Pod")
    (init,) = pod["spec"]["initContainers"]
    program, *arguments = init["command"]
    assert program == "dra-metadata"
    path = allocated_claim(server, namespace, "rdma-nics", "nic-0", "nic-1")
    server.patch_status(path, network_status("nic-0", "nic-1"))
    result = command(
        *arguments, kubeconfig=kubeconfig, POD_NAMESPACE=namespace, POD_NAME=pod["metadata"]["name"]
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        "ready: network data (interface_name, ips) on every device: 2 device(s), resourceclaim "
    )
