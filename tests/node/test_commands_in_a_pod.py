"""The dra-metadata command inside a real pod, on the files the upstream kubelet plugin library
wrote and CDI bind-mounted: a direct claim and a claim made from a template."""

from __future__ import annotations

import orjson
import pytest

from node_config import NODE_NAME
from node_harness import DRIVER_NAME
from node_pod import Pod

pytestmark = pytest.mark.timeout(900)

CLAIMS = [
    pytest.param(("claim-direct", "req-a", ()), id="direct claim"),
    pytest.param(("fromtmpl", "req-t", ("--template",)), id="template claim"),
]


@pytest.mark.parametrize("claim", CLAIMS)
def test_show_prints_the_device_the_driver_published(
    pod: Pod, claim: tuple[str, str, tuple[str, ...]]
) -> None:
    name, request, options = claim
    shown = pod.run("dra-metadata", "show", name, request, *options, "-o", "json")
    assert shown.returncode == 0, shown.stderr
    document = orjson.loads(shown.stdout)
    assert document["namespace"] == "dra-meta"
    (file,) = document["files"]
    assert file["driver"] == DRIVER_NAME
    assert file["apiVersion"] == "metadata.resource.k8s.io/v1alpha1"
    assert not file["stale"]
    ((shown_request, (device,)),) = [(r["name"], r["devices"]) for r in document["requests"]]
    assert shown_request == request
    assert (device["driver"], device["pool"]) == (DRIVER_NAME, NODE_NAME)
    assert device["attributes"] == {
        "device": {"string": device["name"]},
        "driverName": {"string": DRIVER_NAME},
        "pool": {"string": NODE_NAME},
    }


@pytest.mark.parametrize("claim", CLAIMS)
def test_wait_returns_at_once_for_a_mounted_request(
    pod: Pod, claim: tuple[str, str, tuple[str, ...]]
) -> None:
    name, request, options = claim
    waited = pod.run("dra-metadata", "wait", name, request, *options, "--timeout", "60s")
    assert waited.returncode == 0, waited.stderr


@pytest.mark.parametrize(
    ("claim", "others"),
    [
        pytest.param(("claim-direct", ()), "req-a", id="direct claim"),
        pytest.param(("fromtmpl", ("--template",)), "req-t", id="template claim"),
    ],
)
def test_wait_for_a_request_that_is_not_mounted_exits_1_with_the_hint(
    pod: Pod, claim: tuple[str, tuple[str, ...]], others: str
) -> None:
    name, options = claim
    waited = pod.run("dra-metadata", "wait", name, "req-missing", *options, "--timeout", "2s")
    assert waited.returncode == 1, waited.stderr
    assert "req-missing" in waited.stderr
    assert f"its requests: {others}" in waited.stderr
    assert "dra-metadata ls" in waited.stderr


@pytest.mark.parametrize("claim", CLAIMS)
def test_env_prints_the_attributes_as_export_lines(
    pod: Pod, claim: tuple[str, str, tuple[str, ...]]
) -> None:
    name, request, options = claim
    printed = pod.run(
        "dra-metadata", "env", name, request, *options,
        "--attribute", "device", "--attribute", "pool=DEVICE_POOL",
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[1] == f"export DEVICE_POOL={NODE_NAME}"
    assert lines[0] in {f"export DEVICE=device-0{index}" for index in range(4)}


@pytest.mark.parametrize("claim", CLAIMS)
def test_exec_runs_the_command_with_the_attributes_set(
    pod: Pod, claim: tuple[str, str, tuple[str, ...]]
) -> None:
    name, request, options = claim
    ran = pod.run(
        "dra-metadata", "exec", name, request, *options, "--timeout", "60s",
        "--attribute", "driverName=DRIVER", "--", "/bin/sh", "-c", 'echo "$DRIVER $$"',
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    driver, _ = ran.stdout.split()
    assert driver == DRIVER_NAME


def test_ls_lists_both_claims_fresh(pod: Pod) -> None:
    listed = pod.run("dra-metadata", "ls", "-o", "json")
    assert listed.returncode == 0, listed.stderr
    rows = {(row["kind"], row["claim"], row["request"]): row for row in orjson.loads(listed.stdout)}
    assert set(rows) == {("claim", "claim-direct", "req-a"), ("template", "fromtmpl", "req-t")}
    for row in rows.values():
        assert (row["driver"], row["status"], row["stale"]) == (DRIVER_NAME, "ok", False)
        assert row["apiVersion"] == "metadata.resource.k8s.io/v1alpha1"
        assert row["generation"] == 1


def test_validate_finds_every_file_valid(pod: Pod) -> None:
    validated = pod.run("dra-metadata", "validate", "--strict", "-o", "json")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    results = orjson.loads(validated.stdout)
    assert len(results) == 2
    assert all(result["valid"] and result["errors"] == [] for result in results), results
