"""The dra-metadata command inside a real pod, on the files the upstream kubelet plugin library
wrote and CDI bind-mounted: a direct claim and a claim made from a template."""

from __future__ import annotations

import orjson
import pytest

from node_harness import DRIVER_NAME, NODE_NAME
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
