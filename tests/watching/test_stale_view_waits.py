"""One rule for stale views, in Python and in the command: a wait never returns one.

A stale view is what a container sees after the driver replaced a file on the host by rename:
its bind mount keeps the old, unlinked inode, and no update can reach it. Every wait ends at
once with StaleMetadataError (the command: exit 4, "restart the container"), whether or not
its condition holds in the old view; the error carries the metadata last read and why it was
not ready (None: the condition held). Made for real: a single-file bind mount in a private
mount namespace (root and ``unshare -m``), and, where that is not allowed, a descriptor held
open by a process that names it through /proc/PID/fd/N.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dra_metadata import Device, DeviceAttribute, NetworkDeviceData
from dra_metadata.testing import MetadataTree

from helpers import COMMAND, can_unshare

# Makes the container's file a view of the host file (a bind mount, or a name of a descriptor
# held open), waits once while the view is fresh, replaces the host file by rename (as the beta
# writer does), then waits in Python and through the command; prints what each wait did.
RUNNER = """
import asyncio, json, os, subprocess, sys
from dataclasses import replace
import dra_metadata
from dra_metadata import read_metadata_file
from dra_metadata.writer import write_metadata_file

how, host, container, root, command = sys.argv[1:6]
fds = ()
if how == "bind":
    subprocess.run(["mount", "--bind", host, container], check=True)
else:
    descriptor = os.open(host, os.O_RDONLY)
    os.unlink(container)
    os.symlink(f"/proc/{os.getpid()}/fd/{descriptor}", container)
    fds = (descriptor,)


def python_wait(call):
    try:
        metadata = call()
    except dra_metadata.StaleMetadataError as error:
        seen = error.metadata
        return {
            "raised": "StaleMetadataError",
            "message": str(error),
            "path": str(error.path),
            "reason": getattr(error, "reason", "(no reason attribute)"),
            "generation": None if seen is None else seen.generation,
            "stale": None if seen is None else [s.stale for s in seen.sources],
        }
    return {"returned": metadata.generation, "stale": [s.stale for s in metadata.sources]}


def waits(*, stale):
    options = {"root": root, "timeout": 30}
    results = {
        "network data": python_wait(
            lambda: dra_metadata.wait_for_network_data("net", "nic", **options)
        ),
        "await network data": python_wait(
            lambda: asyncio.run(dra_metadata.await_for_network_data("net", "nic", **options))
        ),
        "wait_for": python_wait(
            lambda: dra_metadata.wait_for(lambda d: True, "net", "nic", **options)
        ),
    }
    if stale:  # fresh, generation 1 is all there is: this one would wait for its timeout
        results["generation 2"] = python_wait(
            lambda: dra_metadata.wait_until(lambda m: m.generation >= 2, "net", "nic", **options)
        )
    return results


def commands():
    base = [command, "--root", root, "wait", "net", "nic", "--timeout", "30s"]
    results = {}
    for name, extra in {
        "command": [],
        "command network data": ["--for", "network-data"],
        "command generation 2": ["--for", "generation=2"],
    }.items():
        done = subprocess.run([*base, *extra], capture_output=True, text=True, pass_fds=fds)
        results[name] = [done.returncode, done.stdout, done.stderr]
    return results


fresh = waits(stale=False)
old = read_metadata_file(host)
new = replace(old, metadata=replace(old.metadata, generation=old.generation + 1))
write_metadata_file(host, new, mode="atomic")
print(json.dumps({"fresh": fresh, "stale": waits(stale=True), "commands": commands()}))
"""


def make_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The container's tree, its metadata file (still to be made a view) and the host file."""
    tree = MetadataTree(tmp_path / "root")
    device = Device(
        name="nic-0",
        attributes={"resource.kubernetes.io/pciBusID": DeviceAttribute(string="0000:3b:02.1")},
        network_data=NetworkDeviceData("net1"),
    )
    container = tree.add_claim("net", "nic", "nic.example.com", [device])
    host = tmp_path / "host" / "metadata.json"
    host.parent.mkdir()
    host.write_bytes(container.read_bytes())
    container.write_bytes(b"")  # the mount point
    return tree.root, container, host


def run(how: str, tmp_path: Path) -> dict[str, Any]:
    root, container, host = make_tree(tmp_path)
    prefix = ["unshare", "-m", "--propagation", "private"] if how == "bind" else []
    done = subprocess.run(
        [*prefix, sys.executable, "-c", RUNNER, how, str(host), str(container), str(root), COMMAND],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    results["container"] = str(container)
    return results


def check(results: dict[str, Any]) -> None:
    container = results["container"]
    # While the view is fresh the waits return what they waited for.
    for name in ("network data", "await network data", "wait_for"):
        assert results["fresh"][name] == {"returned": 1, "stale": [False]}, name
    # Stale: every wait raises, ready or not, with the metadata last read, marked.
    for name in ("network data", "await network data", "wait_for"):
        outcome = results["stale"][name]
        assert outcome["raised"] == "StaleMetadataError", (name, outcome)
        assert outcome["path"] == container
        assert (outcome["generation"], outcome["stale"]) == (1, [True])
        assert outcome["reason"] is None  # the condition held in the old view
        assert outcome["message"] == (
            f"{container}: the driver replaced {container} on the host and this container "
            "keeps seeing the old file (in which the condition holds); restart the container "
            "to see the new one"
        )
    not_ready = results["stale"]["generation 2"]
    assert not_ready["raised"] == "StaleMetadataError"
    assert not_ready["reason"] == "the condition returned False"
    assert (not_ready["generation"], not_ready["stale"]) == (1, [True])
    assert "(the condition returned False); restart the container" in not_ready["message"]
    # The command: exit 4, nothing on stdout, one line saying to restart the container.
    for name, (code, stdout, stderr) in results["commands"].items():
        assert code == 4, (name, stderr)
        assert stdout == "", name
        assert stderr.count("\n") == 1, (name, stderr)
        assert container in stderr, (name, stderr)
        assert "restart the container" in stderr, (name, stderr)


@pytest.mark.skipif(can_unshare() is not None, reason=str(can_unshare()))
def test_a_real_single_file_bind_mount(tmp_path: Path) -> None:
    results = run("bind", tmp_path)
    check(results)
    assert (tmp_path / "root" / "resourceclaims" / "net" / "nic").is_dir()


def test_a_pinned_view(tmp_path: Path) -> None:
    check(run("pin", tmp_path))
