"""What a real-node run changes on the machine outside its state directory, and its removal:
the bridge the node IP is on, leftover processes and mounts, the kubelet's cgroups, the CDI
specs. ``wipe`` runs before every start (a run that was killed left these) and after every stop.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import node_config
from node_config import BRIDGE, BRIDGE_ADDRESS, DRIVER_NAME

CGROUP_ROOT = Path("/sys/fs/cgroup")


def machine_paths() -> list[Path]:
    """What a run may create outside its state directory: the CDI folder, the folder of
    containerd 1.7's shim sockets (there whatever the state) and the kubelet's cgroups."""
    paths = [node_config.CDI_DIR, Path("/run/containerd")]
    if CGROUP_ROOT.is_dir():
        paths += [hierarchy / "kubepods" for hierarchy in CGROUP_ROOT.iterdir()]
    return paths


def bridge_up() -> None:
    subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True)
    subprocess.run(
        ["ip", "addr", "add", f"{BRIDGE_ADDRESS}/{node_config.BRIDGE_PREFIX}", "dev", BRIDGE],
        check=True,
    )
    subprocess.run(["ip", "link", "set", BRIDGE, "up"], check=True)


def _mounts_under(folder: Path) -> list[str]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == str(folder) or point.startswith(f"{folder}/"):
            points.append(point)
    return sorted(points, key=len, reverse=True)


def _kill_leftovers(state: Path) -> None:
    """Processes of an earlier run (its recorded PIDs, and shims and containers whose command
    line names the state directory), by PID."""
    pids = state / "pids"
    candidates = set()
    if pids.is_dir():
        candidates |= {int(p.read_text()) for p in pids.iterdir() if p.read_text().isdigit()}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if str(state).encode() in (entry / "cmdline").read_bytes():
                    candidates.add(int(entry.name))
    candidates.discard(os.getpid())
    for pid in candidates:
        with contextlib.suppress(OSError):
            if str(state).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)


def _remove_cgroup(path: Path) -> None:
    if not path.is_dir():
        return
    for child in path.iterdir():
        if child.is_dir():
            _remove_cgroup(child)
    with contextlib.suppress(OSError):
        path.rmdir()


def wipe(state: Path, made: list[Path] | None = None) -> None:
    """Remove what a run left: processes, mounts, the bridge, the state directory, and the
    machine paths in ``made`` (those the run created)."""
    _kill_leftovers(state)
    for point in _mounts_under(state):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)
    if Path(f"/sys/class/net/{BRIDGE}").exists():
        subprocess.run(["ip", "link", "del", BRIDGE], check=True)
    shutil.rmtree(state, ignore_errors=True)
    for spec in node_config.CDI_DIR.glob(f"{DRIVER_NAME}*"):  # the driver's, if it left any
        spec.unlink()
    for path in made or ():
        if path.is_relative_to(CGROUP_ROOT):
            _remove_cgroup(path)
        else:
            shutil.rmtree(path, ignore_errors=True)


def unix_answers(path: Path) -> bool:
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True
