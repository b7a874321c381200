"""The Python API inside a real pod, and what the container sees of the files: read-only
single-file bind mounts whose bytes are the ones the driver wrote on the node."""

from __future__ import annotations

import textwrap
from pathlib import Path

import orjson
import pytest

import node_config
from node_config import NODE_NAME
from node_harness import DRIVER_NAME, Node
from node_pod import Pod

pytestmark = pytest.mark.timeout(900)

READS = textwrap.dedent(
    """
    import json
    import dra_metadata

    direct = dra_metadata.read_claim_metadata("claim-direct", "req-a", validate=True)
    template = dra_metadata.read_template_metadata("fromtmpl", "req-t", validate=True)
    print(json.dumps({
        "direct": [direct.name, direct.pod_claim_name, direct.generation,
                   [(d.driver, d.pool, d.name, d.attribute("device", type=str)) for d in direct.devices]],
        "template": [template.name, template.pod_claim_name, template.generation,
                     [(d.driver, d.pool, d.name) for d in template.devices]],
        "listed": sorted([c.kind, c.claim_name, c.request_name] for c in dra_metadata.list_claims()),
        "devices": len(dra_metadata.list_devices()),
    }))
    """
)


def test_python_reads_both_claims(pod: Pod) -> None:
    ran = pod.python(READS)
    assert ran.returncode == 0, ran.stderr
    answer = orjson.loads(ran.stdout)
    name, pod_claim, generation, ((driver, pool, device, attribute),) = answer["direct"]
    assert (name, pod_claim, generation) == ("claim-direct", None, 1)
    assert (driver, pool, attribute) == (DRIVER_NAME, NODE_NAME, device)
    generated, pod_claim, generation, ((driver, pool, _),) = answer["template"]
    assert generated.startswith("dra-meta-fromtmpl-")
    assert (pod_claim, generation, driver, pool) == ("fromtmpl", 1, DRIVER_NAME, NODE_NAME)
    assert answer["devices"] == 2
    assert [claim[1:] for claim in answer["listed"]] == [
        ["claim-direct", "req-a"],
        ["fromtmpl", "req-t"],
    ]


CONTAINER_FILES = {
    "direct claim": "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/claim-direct/"
    "req-a/test-driver.cdi.k8s.io-metadata.json",
    "template claim": "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/"
    "fromtmpl/req-t/test-driver.cdi.k8s.io-metadata.json",
}
PROBE = textwrap.dedent(
    """
    import errno, json, os, sys
    path = sys.argv[1]
    mounts = [line.split() for line in open("/proc/self/mountinfo")]
    (options,) = [fields[5] for fields in mounts if fields[4] == path]
    try:
        open(path, "r+b")
        refused = None
    except OSError as error:
        refused = errno.errorcode[error.errno]
    print(json.dumps({"options": options.split(","), "refused": refused,
                      "bytes": open(path, "rb").read().decode()}))
    """
)


def _host_file(container_path: str, uid: str, request: str) -> Path:
    """The file the driver wrote on the node, from the CDI spec that mounts it (the metadata
    CDI device of claim ``uid``'s ``request``)."""
    for spec in node_config.CDI_DIR.glob(f"{DRIVER_NAME}_metadata_*.json"):
        for device in orjson.loads(spec.read_bytes())["devices"]:
            if device["name"] != f"{uid}_{request}":
                continue
            for mount in device["containerEdits"]["mounts"]:
                if mount["containerPath"] == container_path:
                    return Path(mount["hostPath"])
    raise AssertionError(f"no CDI spec in {node_config.CDI_DIR} mounts {container_path}")


@pytest.mark.parametrize("which", list(CONTAINER_FILES))
def test_the_file_is_a_read_only_bind_mount_of_the_drivers_file(
    node: Node, pod: Pod, which: str
) -> None:
    path = CONTAINER_FILES[which]
    ran = pod.run(f"{pod.python_executable}", "-c", PROBE, path)
    assert ran.returncode == 0, ran.stderr
    seen = orjson.loads(ran.stdout)
    assert "ro" in seen["options"]
    assert seen["refused"] == "EROFS"
    written = orjson.loads(seen["bytes"])
    (request,) = [entry["name"] for entry in written["requests"]]
    host = _host_file(path, written["metadata"]["uid"], request)
    assert host.is_relative_to(node_config.kubelet_root(node.state))
    assert seen["bytes"] == host.read_text()  # what the driver wrote, not an older copy
