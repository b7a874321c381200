"""Stale views through the command: every subcommand marks them and exits 4.

A stale view is what a container sees after the driver replaced a file on the host by rename:
its bind mount keeps the old, unlinked inode. Two ways to make one for real: a descriptor held
open by a process that names it through /proc/PID/fd/N, and a real single-file bind mount in a
private mount namespace (root and ``unshare -m``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dra_metadata import Device, DeviceAttribute, NetworkDeviceData
from dra_metadata.testing import MetadataTree

from helpers import COMMAND, can_unshare

# Opens the host file, makes the container's path a name of the open file, replaces the host
# file by rename (as the beta writer does), then runs the commands and reports their results.
PINNING_RUNNER = """
import json, os, subprocess, sys
from dataclasses import replace
from dra_metadata import read_metadata_file
from dra_metadata.writer import write_metadata_file
host, container, commands = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
descriptor = os.open(host, os.O_RDONLY)
os.symlink(f"/proc/{os.getpid()}/fd/{descriptor}", container)
old = read_metadata_file(host)
new = replace(old, metadata=replace(old.metadata, generation=old.generation + 1))
write_metadata_file(host, new, mode="atomic")
results = [
    subprocess.run(command, capture_output=True, text=True, pass_fds=(descriptor,))
    for command in commands
]
print(json.dumps([[r.returncode, r.stdout, r.stderr] for r in results]))
"""

# The same in a private mount namespace, with a real bind mount of the host file.
BIND_MOUNT_RUNNER = """
import json, subprocess, sys
from dataclasses import replace
from dra_metadata import read_metadata_file
from dra_metadata.writer import write_metadata_file
host, container, commands = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
subprocess.run(["mount", "--bind", host, container], check=True)
old = read_metadata_file(host)
new = replace(old, metadata=replace(old.metadata, generation=old.generation + 1))
write_metadata_file(host, new, mode="atomic")
results = [subprocess.run(command, capture_output=True, text=True) for command in commands]
print(json.dumps([[r.returncode, r.stdout, r.stderr] for r in results]))
"""


def device(*, network: bool) -> Device:
    return Device(
        name="nic-0",
        attributes={"resource.kubernetes.io/pciBusID": DeviceAttribute(string="0000:3b:02.1")},
        network_data=NetworkDeviceData("net1") if network else None,
    )


def commands(root: Path, marker: Path) -> dict[str, list[str]]:
    base = [COMMAND, "--root", str(root)]
    file = str(root / "resourceclaims" / "net" / "nic" / "nic.example.com-metadata.json")
    return {
        "show": [*base, "show", "net", "nic", "-o", "table"],
        "show json": [*base, "show", "net", "nic", "-o", "json"],
        "show file": [COMMAND, "show", "--file", file, "-o", "json"],
        "ls": [*base, "ls", "-o", "table"],
        "ls json": [*base, "ls", "-o", "json"],
        "validate": [*base, "validate", "-o", "table"],
        "validate file": [COMMAND, "validate", file, "-o", "json"],
        "env": [*base, "env", "net", "nic", "--attribute", "resource.kubernetes.io/pciBusID"],
        "wait": [*base, "wait", "net", "nic", "--timeout", "10s"],
        "wait network": [*base, "wait", "net", "nic", "--require", "ips", "--timeout", "10s"],
        "exec": [*base, "exec", "net", "nic", "--", "touch", str(marker)],
        "path": [*base, "path", "net", "nic"],  # no reading: no stale view to report
    }


def check(results: dict[str, tuple[int, str, str]], container: Path, marker: Path) -> None:
    for name, (code, _, stderr) in results.items():
        if name == "path":
            assert code == 0, stderr
            continue
        assert code == 4, (name, stderr)
        assert stderr.count("\n") == 1, (name, stderr)
        assert f"{container}" in stderr, (name, stderr)
        assert "restart the container" in stderr, (name, stderr)
    # What shows data marks the stale file; what gates a start prints nothing.
    assert "1 (STALE: restart the container)" in results["show"][1]
    assert json.loads(results["show json"][1])["files"][0]["stale"] is True
    assert json.loads(results["show file"][1])["files"][0]["stale"] is True
    assert "1 (STALE: restart the container)" in results["ls"][1]
    assert json.loads(results["ls json"][1])[0]["stale"] is True
    assert ": valid (metadata), STALE view: restart the container" in results["validate"][1]
    assert json.loads(results["validate file"][1])[0]["stale"] is True
    for gate in ("env", "wait", "wait network", "exec"):
        assert results[gate][1] == "", gate
    assert not marker.exists()


def make_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The host file, and a container tree whose metadata file is still to be bound to it."""
    tree = MetadataTree(tmp_path / "root")
    made = tree.add_claim("net", "nic", "nic.example.com", [device(network=True)])
    host = tmp_path / "host" / "metadata.json"
    host.parent.mkdir()
    made.replace(host)
    return tree.root, host, made


def test_a_pinned_view(tmp_path: Path) -> None:
    root, host, container = make_tree(tmp_path)
    marker = tmp_path / "ran"
    wanted = commands(root, marker)
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            PINNING_RUNNER,
            str(host),
            str(container),
            json.dumps(list(wanted.values())),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    check(dict(zip(wanted, json.loads(result.stdout), strict=True)), container, marker)


@pytest.mark.skipif(can_unshare() is not None, reason=str(can_unshare()))
def test_a_real_single_file_bind_mount(tmp_path: Path) -> None:
    root, host, container = make_tree(tmp_path)
    container.write_bytes(b"")  # the mount point
    marker = tmp_path / "ran"
    wanted = commands(root, marker)
    result = subprocess.run(
        [
            "unshare", "-m", "--propagation", "private", sys.executable, "-c", BIND_MOUNT_RUNNER,
            str(host), str(container), json.dumps(list(wanted.values())),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )  # fmt: skip
    check(dict(zip(wanted, json.loads(result.stdout), strict=True)), container, marker)
    assert container.read_bytes() == b""  # outside the namespace nothing was mounted


def test_an_in_place_update_is_no_stale_view(tmp_path: Path) -> None:
    """The alpha writer rewrites the file in place: the bound view follows, nothing is stale."""
    tree = MetadataTree(tmp_path, mode="in-place")
    path = tree.add_claim("net", "nic", "nic.example.com", [device(network=False)])
    tree.update("net", "nic", "nic.example.com", devices=[device(network=True)])
    assert path.stat().st_nlink == 1
    result = subprocess.run(
        [COMMAND, "--root", str(tmp_path), "show", "net", "nic", "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["files"][0]["stale"] is False
