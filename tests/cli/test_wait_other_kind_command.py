"""``dra-metadata wait`` for a claim mounted as the other kind (named, or from a template).

It says so on stderr as soon as it starts (whatever -q says: it is no progress line), and its
timeout line says it again, with the flag to use and the claims that are mounted.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from dra_metadata import Device, NetworkDeviceData
from dra_metadata.testing import MetadataTree

from helpers import COMMAND, run_command

MOUNTED = (
    "claims referenced by name: fast-net; claims made from templates (pod claim names): accelerator"
)


def tree(root: Path) -> Path:
    metadata_tree = MetadataTree(root)
    nic = Device(name="nic-0", network_data=NetworkDeviceData("net1"))
    metadata_tree.add_claim("fast-net", "vf", "sriov.example.com", [nic])
    metadata_tree.add_template_claim("accelerator", "gpu", "gpu.example.com", [nic])
    return root


CASES = [
    (
        ["accelerator", "gpu/low-memory"],
        "resourceclaims/accelerator/gpu",
        (
            "no claim accelerator referenced by name has metadata, but accelerator is the pod claim "
            f"name of a claim made from a template: add --template; {MOUNTED}"
        ),
    ),
    (
        ["--template", "fast-net", "vf"],
        "resourceclaimtemplates/fast-net/vf",
        (
            "no claim made from a template has the pod claim name fast-net, but claim fast-net is "
            f"referenced by name: leave out --template; {MOUNTED}"
        ),
    ),
]


@pytest.mark.parametrize(("names", "directory", "notice"), CASES)
def test_it_says_so_at_once(tmp_path: Path, names: list[str], directory: str, notice: str) -> None:
    root = tree(tmp_path)
    # A wait of two minutes: its first line on stderr must come long before it ends.
    with subprocess.Popen(
        [COMMAND, "--root", str(root), "wait", *names, "--timeout", "120s", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as waiting:
        try:
            assert waiting.stderr is not None
            first = waiting.stderr.readline()
            still_waiting = waiting.poll() is None
        finally:
            waiting.send_signal(signal.SIGTERM)
            waiting.communicate(timeout=60)
    assert still_waiting, first
    assert first == f"dra-metadata: {root / directory}: this wait is likely in vain: {notice}\n"


@pytest.mark.parametrize(("names", "directory", "notice"), CASES)
def test_its_timeout_says_so(tmp_path: Path, names: list[str], directory: str, notice: str) -> None:
    root = tree(tmp_path)
    result = run_command("wait", *names, "--timeout", "1s", "--for", "network-data", root=root)
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    path = root / directory
    assert result.stderr.splitlines() == [
        f"dra-metadata: {path}: this wait is likely in vain: {notice}",
        (
            f"dra-metadata: timed out: {path}: not ready after 1 s: no *-metadata.json file in "
            f"{path} yet; {notice}"
        ),
    ]


def test_a_wait_of_the_right_kind_says_nothing_of_it(tmp_path: Path) -> None:
    root = tree(tmp_path)
    result = run_command("wait", "--template", "accelerator", "gpu", "--timeout", "60s", root=root)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith("ready: the metadata files: 1 device(s)")
