"""No "valid" over what could not be read: every path the command could not read is reported,
no finding is dropped, and read errors have their own exit code.

Subprocesses run the installed command; FIFOs, symlink loops and unreadable directories are
real, and "unreadable" is tested as an unprivileged user (setpriv as user nobody when this runs
as root), skipped with the reason where the machine does not allow it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import dra_metadata

from helpers import COMMAND, SAMPLE, running_as_root
from helpers import run_command as run

GPU_DIR = Path("resourceclaims/training-gpus/gpu")
LOCKED_DIR = Path("resourceclaimtemplates/accelerator/gpu")


def _as_nobody() -> list[str]:
    """The prefix that runs a command as an unprivileged user (nothing when not root)."""
    if not running_as_root():
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv (util-linux) is not installed to drop it")
    probe = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", COMMAND, "--version"],
        capture_output=True,
        check=False,
        cwd="/",
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot run the command as user nobody here: {probe.stderr!r}")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _as_nobody_run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_as_nobody(), COMMAND, *arguments],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
        timeout=60,
    )


@pytest.fixture
def hostile_tree() -> Iterator[Path]:
    """The sample tree, plus a FIFO, a directory and a symlink loop named *-metadata.json in a
    request directory, and a request directory nobody but its owner may list. In a directory
    every user can reach (pytest's tmp_path is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="dra-metadata-truth-"))
    base.chmod(0o755)
    root = base / "tree"
    shutil.copytree(SAMPLE, root)
    gpu = root / GPU_DIR
    os.mkfifo(gpu / "x-metadata.json")
    (gpu / "y-metadata.json").mkdir()
    (gpu / "z-metadata.json").symlink_to("z-metadata.json")
    (root / LOCKED_DIR).chmod(0o700)
    yield root
    (root / LOCKED_DIR).chmod(0o755)
    shutil.rmtree(base)


def _reasons(reports: list[dict[str, object]]) -> dict[str, object]:
    return {str(report["path"]): report["error"] for report in reports if report["error"]}


def test_validate_reports_every_path_it_could_not_read(hostile_tree: Path) -> None:
    result = _as_nobody_run("validate", "--strict", "--root", str(hostile_tree), "-o", "json")
    assert result.returncode == 6, result.stderr
    reports = json.loads(result.stdout)
    gpu = hostile_tree / GPU_DIR
    assert _reasons(reports) == {
        str(gpu / "x-metadata.json"): "open metadata file: it is not a regular file",
        str(gpu / "y-metadata.json"): "open metadata file: it is a directory",
        str(gpu / "z-metadata.json"): "open metadata file: Too many levels of symbolic links",
        str(hostile_tree / LOCKED_DIR): "cannot list the directory: Permission denied",
    }
    assert [report["status"] for report in reports].count("valid") == 3
    assert "4 paths could not be read (" in result.stderr
    assert "check the permissions" in result.stderr
    table = _as_nobody_run("validate", "--strict", "--root", str(hostile_tree), "-o", "table")
    assert table.returncode == 6
    lines = table.stdout.splitlines()
    fifo = f"{gpu / 'x-metadata.json'}: cannot be read: open metadata file: it is not a regular"
    assert f"{fifo} file" in lines
    locked = f"{hostile_tree / LOCKED_DIR}: cannot be read: cannot list the directory"
    assert f"{locked}: Permission denied" in lines


def test_ls_lists_every_path_it_could_not_read(hostile_tree: Path) -> None:
    result = _as_nobody_run("--root", str(hostile_tree), "ls", "-o", "json")
    assert result.returncode == 6, result.stderr
    problems = {
        (entry["driver"], entry["status"], entry["error"])
        for entry in json.loads(result.stdout)
        if entry["error"]
    }
    assert problems == {
        ("x", "unreadable", "open metadata file: it is not a regular file"),
        ("y", "unreadable", "open metadata file: it is a directory"),
        ("z", "unreadable", "open metadata file: Too many levels of symbolic links"),
        (None, "unreadable", "list metadata files: Permission denied"),
    }
    table = _as_nobody_run("--root", str(hostile_tree), "ls", "-o", "table")
    assert table.returncode == 6
    assert "x                  -           error: open metadata file: it is not a regular" in (
        table.stdout
    )


def test_list_devices_reports_each_entry_through_on_error(hostile_tree: Path) -> None:
    (hostile_tree / LOCKED_DIR).chmod(0o755)  # in-process as root: only the entries count
    problems: list[dra_metadata.DeviceMetadataError] = []
    mounted = dra_metadata.list_devices(root=hostile_tree, on_error=problems.append)
    assert {problem.path.name for problem in problems if problem.path} == {
        "x-metadata.json",
        "y-metadata.json",
        "z-metadata.json",
    }
    assert len(mounted) == len(dra_metadata.list_devices(root=SAMPLE))
    with pytest.raises(dra_metadata.MetadataReadError, match="x-metadata.json"):
        dra_metadata.list_devices(root=hostile_tree)
    skipped: list[dra_metadata.MetadataReadError] = []
    claims = dra_metadata.list_claims(root=hostile_tree, on_error=skipped.append)
    assert len(skipped) == 3
    listed = {path.name for claim in claims for path in claim.paths}
    assert listed == {
        path.name for claim in dra_metadata.list_claims(root=SAMPLE) for path in claim.paths
    }


def test_validate_keeps_the_findings_of_every_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad-metadata.json"
    bad.write_text("{")
    empty = tmp_path / "emptydir"
    empty.mkdir()
    fifo = tmp_path / "fifo-metadata.json"
    os.mkfifo(fifo)
    loop = tmp_path / "loop-metadata.json"
    loop.symlink_to(loop.name)
    good = SAMPLE / GPU_DIR / "gpu.example.com-metadata.json"
    result = run("validate", str(bad), str(empty), str(fifo), str(loop), str(good), root=None)
    reports = json.loads(result.stdout)  # whole JSON on stdout (not a TTY: JSON)
    assert [(report["path"], report["status"]) for report in reports] == [
        (str(bad), "undecodable"),
        (str(empty), "not-found"),
        (str(fifo), "unreadable"),
        (str(loop), "unreadable"),
        (str(good), "valid"),
    ]
    assert result.returncode == 6
    without_unreadable = run("validate", str(bad), str(empty), "-o", "json", root=None)
    assert without_unreadable.returncode == 1
    assert len(json.loads(without_unreadable.stdout)) == 2


def test_read_errors_have_their_own_exit_code_and_say_what_to_check(
    hostile_tree: Path,
) -> None:
    result = _as_nobody_run("--root", str(hostile_tree), "show", "--template", "accelerator", "gpu")
    assert result.returncode == 6, result.stderr
    assert "Permission denied; check the permissions of it and of its directories" in (
        result.stderr
    )
    io_error = run("show", "--file", "/proc/self/mem", root=None)  # reading it is EIO
    assert io_error.returncode == 6
    assert "Input/output error; an I/O error: check the volume" in io_error.stderr
