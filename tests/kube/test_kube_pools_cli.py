"""``dra-metadata pools`` as real subprocesses against kube-apiserver and kube-controller-manager.

Skipped without KUBEBUILDER_ASSETS, and (the tests that need an answer) without
kube-controller-manager there (see kube_harness.py, kube_pools_harness.py). Each subprocess
finds the server through a kubeconfig file ($KUBECONFIG).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

import kube_harness
from helpers import COMMAND
from kube_harness import ApiServer
from kube_pools_harness import (
    ControllerManager,
    answer_by_hand,
    four_pools,
    incomplete_pool,
    requests_of,
    wait_for_request,
)

pytestmark = pytest.mark.skipif(kube_harness.assets() is None, reason=kube_harness.SKIP_REASON)
_drivers = itertools.count()


@pytest.fixture
def kubeconfig(server: ApiServer, tmp_path: Path) -> Path:
    return server.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def driver() -> str:
    return f"gpu-{next(_drivers)}.pools-cli.example.com"


def environment(kubeconfig: Path) -> dict[str, str]:
    kept = {key: value for key, value in os.environ.items() if not key.startswith("POD_")}
    kept.pop("DRA_METADATA_ROOT", None)
    return {**kept, "KUBECONFIG": str(kubeconfig)}


def pools(*arguments: str, kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, "pools", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environment(kubeconfig),
    )


def test_table_as_kubectl_get_prints_it(
    server: ApiServer,
    namespace: str,
    driver: str,
    kubeconfig: Path,
    controller: ControllerManager,
) -> None:
    four_pools(server, namespace, driver)
    result = pools(driver, "-o", "table", kubeconfig=kubeconfig)
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines == [
        "POOL      NODE     SLICES   TOTAL   ALLOCATED   AVAILABLE   UNAVAILABLE   ERROR",
        "cluster   <none>   1        2       0           2           0             <none>",
        "node-a    node-a   1        4       1           3           0             <none>",
        "node-d    node-d   2        5       0           5           0             <none>",
        "rolling   node-e   1        3       0           3           0             <none>",
    ]
    truncated = pools(driver, "--limit", "2", "-o", "table", kubeconfig=kubeconfig)
    assert truncated.returncode == 0, truncated.stderr
    assert truncated.stdout.splitlines()[1:] == [
        "cluster   <none>   1        2       0           2           0             <none>",
        "node-a    node-a   1        4       1           3           0             <none>",
        "Showing 2 of 4 pools: the list was truncated; raise --limit (at most 1000) to see more.",
    ]
    nothing = pools("fpga.pools-cli.example.com", "-o", "table", kubeconfig=kubeconfig)
    assert (nothing.returncode, nothing.stdout) == (
        0,
        "No pools found for driver fpga.pools-cli.example.com.\n",
    )
    assert requests_of(server, driver) == []


def test_json_document_and_keep(
    server: ApiServer,
    namespace: str,
    driver: str,
    kubeconfig: Path,
    controller: ControllerManager,
) -> None:
    four_pools(server, namespace, driver)
    result = pools(driver, "--pool", "node-a", "--keep", kubeconfig=kubeconfig)  # not a tty
    assert (result.returncode, result.stderr) == (0, "")
    document = json.loads(result.stdout)
    assert set(document) == {
        "requestName",
        "completedAt",
        "poolCount",
        "truncated",
        "pools",
        "conditions",
    }
    assert (document["poolCount"], document["truncated"]) == (1, False)
    (pool,) = document["pools"]
    assert pool["poolName"] == "node-a"
    assert (pool["totalDevices"], pool["allocatedDevices"], pool["availableDevices"]) == (4, 1, 3)
    (kept,) = requests_of(server, driver)
    assert kept["metadata"]["name"] == document["requestName"]
    server.request(
        "DELETE",
        f"/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests/{kept['metadata']['name']}",
    )


def test_a_pool_with_a_validation_error_shows_it(
    server: ApiServer, driver: str, kubeconfig: Path
) -> None:
    """kube-controller-manager 1.36 never writes validationError; written here as 1.37 may."""
    incomplete_pool(server, driver)
    child = subprocess.Popen(
        [COMMAND, "pools", driver, "-o", "table", "--timeout", "60s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(kubeconfig),
    )
    try:
        request = wait_for_request(server, driver)
        entry = {"driver": driver, "poolName": "node-x", "generation": 1, "nodeName": "node-x"}
        answer_by_hand(
            server,
            request["metadata"]["name"],
            {
                "poolCount": 1,
                "pools": [{**entry, "validationError": "1 of 2 ResourceSlices published"}],
                "conditions": [
                    {
                        "type": "Complete",
                        "status": "True",
                        "reason": "CalculationComplete",
                        "message": "Calculated status for 1 pools",
                        "lastTransitionTime": "2026-12-01T13:30:00Z",
                    }
                ],
            },
        )
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, err) == (0, "")
    assert out.splitlines() == [
        "POOL     NODE     SLICES   TOTAL    ALLOCATED   AVAILABLE   UNAVAILABLE   ERROR",
        (
            "node-x   node-x   <none>   <none>   <none>      <none>      <none>        "
            "1 of 2 ResourceSlices published"
        ),
    ]
    assert requests_of(server, driver) == []


def test_errors_exit_5_with_one_line(
    server: ApiServer,
    namespace: str,
    driver: str,
    kubeconfig: Path,
    tmp_path: Path,
    controller: ControllerManager,
) -> None:
    stranger = server.write_kubeconfig(
        tmp_path / "stranger", server.service_account_token(namespace, "no-rights")
    )
    refused = pools(driver, kubeconfig=stranger)
    assert refused.returncode == 5
    assert refused.stderr.count("\n") == 1
    assert refused.stderr.startswith(
        "dra-metadata: the Kubernetes API server refused to create resourcepoolstatusrequests "
        "(HTTP 403 Forbidden: "
    )
    assert refused.stderr.endswith(
        "examples/kubernetes/pool-status-rbac.yaml in the dra-metadata sources\n"
    )
    incomplete_pool(server, driver)
    late = pools(driver, "--timeout", "1s", kubeconfig=kubeconfig)
    assert late.returncode == 5
    assert late.stderr.count("\n") == 1
    assert "within 1 s: kube-controller-manager answers these requests only when" in late.stderr
    assert "--feature-gates=DRAResourcePoolStatus=true" in late.stderr
    assert late.stderr.endswith("was deleted\n")
    assert requests_of(server, driver) == []


def test_usage_errors_exit_2_before_anything_is_sent(server: ApiServer, kubeconfig: Path) -> None:
    for arguments, message in [
        (["GPU_example!"], "DRIVER 'GPU_example!': a driver name is a DNS subdomain"),
        (["gpu.example.com", "--pool", "Node 1//x"], "--pool 'Node 1//x': segment 0 ('Node 1')"),
        (
            ["gpu.example.com", "--limit", "1001"],
            "argument --limit: 1001: the limit must be from 1",
        ),
        (["gpu.example.com", "--timeout", "0"], "argument --timeout: '0': the timeout must be"),
        (["gpu.example.com", "--namespace", "x"], "unrecognized arguments: --namespace x"),
    ]:
        result = pools(*arguments, kubeconfig=kubeconfig)
        assert result.returncode == 2, arguments
        assert message in result.stderr, (arguments, result.stderr)
        assert result.stderr.count("\n") == 1
    assert requests_of(server, "gpu.example.com") == []


def test_ctrl_c_deletes_the_request_and_exits_130(
    server: ApiServer, driver: str, kubeconfig: Path
) -> None:
    incomplete_pool(server, driver)
    child = subprocess.Popen(
        [COMMAND, "pools", driver, "--timeout", "60s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(kubeconfig),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    try:
        request = wait_for_request(server, driver)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, out) == (130, "")
    assert requests_of(server, driver) == []
    assert request["metadata"]["name"].startswith("dra-metadata-")
