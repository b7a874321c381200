"""Device health read from inside a real pod with its ServiceAccount under the example's
least-privilege Role, as the kubelet reports it from the driver's health stream."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from node_harness import DRIVER_NAME, Node
from node_pod import Pod

pytestmark = pytest.mark.timeout(900)

DIRECT_CLAIM = "claim-direct"
READER = "system:serviceaccount:dra-meta:dra-metadata-reader"


def _allowed(node: Node, verb: str, resource: str, group: str = "") -> bool:
    review = node.create(
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": READER,
                "groups": ["system:serviceaccounts", "system:serviceaccounts:dra-meta"],
                "resourceAttributes": {
                    "namespace": "dra-meta",
                    "verb": verb,
                    "group": group,
                    "resource": resource,
                },
            },
        },
    )
    return bool(review["status"].get("allowed"))


def test_the_pods_service_account_may_read_its_pod_and_claims_and_no_more(
    node: Node, pod: Pod
) -> None:
    assert pod.get()["spec"]["serviceAccountName"] == READER.rpartition(":")[2]
    assert _allowed(node, "get", "pods")
    assert _allowed(node, "get", "resourceclaims", "resource.k8s.io")
    assert _allowed(node, "watch", "pods")
    assert not _allowed(node, "list", "pods")
    assert not _allowed(node, "update", "pods")
    assert not _allowed(node, "list", "resourceclaims", "resource.k8s.io")


def _health(pod: Pod) -> dict[str, tuple[str, str]]:
    """``dra-metadata health`` in the pod: pod claim name -> (health, message)."""
    shown = pod.run("dra-metadata", "health", "-o", "json")
    assert shown.returncode == 0, shown.stderr
    rows = orjson.loads(shown.stdout)
    assert {row["container"] for row in rows} == {"c"}
    return {row["podClaimName"]: (row["health"], row["message"]) for row in rows}


def _allocated_devices(node: Node, pod: Pod) -> dict[str, tuple[str, str, str]]:
    """Pod claim name -> (driver, pool, device) of its claim's allocation, read as the admin."""
    status = pod.get()["status"]
    names = {"direct": DIRECT_CLAIM} | {
        entry["name"]: entry["resourceClaimName"] for entry in status["resourceClaimStatuses"]
    }
    devices = {}
    for pod_claim, claim in names.items():
        path = f"/apis/resource.k8s.io/v1/namespaces/{pod.namespace}/resourceclaims/{claim}"
        (result,) = node.request("GET", path)["status"]["allocation"]["devices"]["results"]
        devices[pod_claim] = (result["driver"], result["pool"], result["device"])
    return devices


def test_health_names_each_device_from_the_pods_claims(node: Node, pod: Pod) -> None:
    shown = pod.run("dra-metadata", "health", "-o", "json")
    assert shown.returncode == 0, shown.stderr
    named = {
        row["podClaimName"]: (row["driver"], row["pool"], row["device"])
        for row in orjson.loads(shown.stdout)
    }
    assert named == _allocated_devices(node, pod)
    assert {driver for driver, _, _ in named.values()} == {DRIVER_NAME}


def _probe(pod: Pod) -> int:
    """``dra-metadata health --fail-on unhealthy`` in the pod, as a liveness probe runs it."""
    return pod.run("dra-metadata", "health", "--fail-on", "unhealthy").returncode


def _kubelet_reports(pod: Pod) -> dict[str, tuple[str, str]]:
    status: dict[str, Any] = pod.get()["status"]
    return {
        entry["name"].removeprefix("claim:"): (resource["health"], resource.get("message", ""))
        for container in status.get("containerStatuses", [])
        for entry in container.get("allocatedResourcesStatus", [])
        for resource in entry["resources"]
    }


def test_health_reads_every_device_from_inside_the_pod(node: Node, pod: Pod) -> None:
    if node.health_controllable:
        expected = ("Healthy", "set by the node harness")
        node.wait_for("Healthy devices", lambda: set(_kubelet_reports(pod).values()) == {expected})
        assert _health(pod) == {"direct": expected, "fromtmpl": expected}
    else:  # the upstream driver reports no device: the kubelet says Unknown after 30 s
        assert set(_health(pod)) <= {"direct", "fromtmpl"}


def _report(node: Node, pod: Pod, health: str, message: str) -> float:
    """Make the driver report every device ``health``; the seconds until the pod shows it."""
    node.device_health_file.write_text(f"{health} {message}\n")
    return _until_the_kubelet_reports(node, pod, health, message)


def test_health_follows_the_device_unhealthy_then_healthy_again(node: Node, pod: Pod) -> None:
    if not node.health_controllable:
        pytest.skip(
            "the driver in $DRA_METADATA_NODE_ASSETS/bin reports no device health: put "
            "test-driver-health (the e2e test driver with --device-health-file) beside it"
        )
    try:
        node.timings["kubelet reports Unhealthy"] = _report(node, pod, "Unhealthy", "ECC errors")
        assert _health(pod) == {
            "direct": ("Unhealthy", "ECC errors"),
            "fromtmpl": ("Unhealthy", "ECC errors"),
        }
        assert _probe(pod) == 1
        node.timings["kubelet reports Healthy"] = _report(node, pod, "Healthy", "recovered")
        assert _health(pod) == {
            "direct": ("Healthy", "recovered"),
            "fromtmpl": ("Healthy", "recovered"),
        }
    finally:
        _report(node, pod, "Healthy", "set by the node harness")


def _until_the_kubelet_reports(node: Node, pod: Pod, health: str, message: str) -> float:
    """The seconds until the kubelet shows every device of the pod ``health`` with ``message``."""
    started = time.monotonic()
    node.wait_for(
        f"the kubelet to report {health}",
        lambda: set(_kubelet_reports(pod).values()) == {(health, message)},
        timeout=120,
    )
    return time.monotonic() - started


def test_health_follows_a_driver_restarted_unhealthy_then_healthy(node: Node, pod: Pod) -> None:
    if not node.health_controllable:
        pytest.skip(
            "the driver in $DRA_METADATA_NODE_ASSETS/bin reports no device health: put "
            "test-driver-health (the e2e test driver with --device-health-file) beside it"
        )
    try:
        node.restart_driver("Unhealthy restarted on a failed device")
        node.timings["kubelet reports Unhealthy after a driver restart"] = (
            _until_the_kubelet_reports(node, pod, "Unhealthy", "restarted on a failed device")
        )
        assert _health(pod) == {
            "direct": ("Unhealthy", "restarted on a failed device"),
            "fromtmpl": ("Unhealthy", "restarted on a failed device"),
        }
        assert _probe(pod) == 1
        node.restart_driver("Healthy restarted after the repair")
        node.timings["kubelet reports Healthy after a driver restart"] = _until_the_kubelet_reports(
            node, pod, "Healthy", "restarted after the repair"
        )
        assert _health(pod) == {
            "direct": ("Healthy", "restarted after the repair"),
            "fromtmpl": ("Healthy", "restarted after the repair"),
        }
        assert _probe(pod) == 0
    finally:
        _report(node, pod, "Healthy", "set by the node harness")


def _snapshots(path: Path) -> list[dict[str, tuple[str, str]]]:
    if not path.exists():
        return []
    return [
        {row["podClaimName"]: (row["health"], row["message"]) for row in orjson.loads(line)}
        for line in path.read_text().splitlines()
        if line.endswith("]")  # whole lines only: the watch may be writing the next one
    ]


def test_health_watch_prints_a_snapshot_per_change(node: Node, pod: Pod) -> None:
    if not node.health_controllable:
        pytest.skip(
            "the driver in $DRA_METADATA_NODE_ASSETS/bin reports no device health: put "
            "test-driver-health (the e2e test driver with --device-health-file) beside it"
        )
    output = pod.exchange / "watch.jsonl"
    started = pod.run(
        "/bin/sh", "-c",
        "dra-metadata health --watch -o json --timeout 120s "
        "> /exchange/watch.jsonl 2> /exchange/watch.stderr &",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    healthy = ("Healthy", "set by the node harness")
    node.wait_for("the watch's first snapshot", lambda: bool(_snapshots(output)))
    assert _snapshots(output)[0] == {"direct": healthy, "fromtmpl": healthy}
    try:
        _report(node, pod, "Unhealthy", "fell off the bus")
        seen = time.monotonic()
        unhealthy = {"direct": ("Unhealthy", "fell off the bus")} | {
            "fromtmpl": ("Unhealthy", "fell off the bus")
        }
        node.wait_for("the Unhealthy snapshot", lambda: unhealthy in _snapshots(output), 60)
        node.timings["pod status -> watch snapshot"] = time.monotonic() - seen
    finally:
        _report(node, pod, *healthy)
    node.wait_for(
        "the Healthy snapshot",
        lambda: _snapshots(output)[-1] == {"direct": healthy, "fromtmpl": healthy},
        60,
    )
    snapshots = _snapshots(output)
    assert snapshots.index(unhealthy) > 0
    assert (pod.exchange / "watch.stderr").read_text() == ""
