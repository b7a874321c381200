"""Every command tells the whole truth (issue 23): no "valid" over what could not be read, no
finding dropped, documented exit codes, --max-size, broken pipes, and exec/env's variables
(the other rough edges are in test_cli_rough_edges.py).

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
from dra_metadata import Device
from dra_metadata.testing import MetadataTree

from conftest import COMMAND, SAMPLE, running_as_root
from conftest import run_command as run

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


class TestMaxSize:
    @pytest.fixture
    def large(self, tmp_path: Path) -> Path:
        """A valid request directory whose file is 5 MiB (trailing whitespace)."""
        directory = tmp_path / "resourceclaims" / "c" / "r"
        directory.mkdir(parents=True)
        path = directory / "d.example.com-metadata.json"
        content = (SAMPLE / GPU_DIR / "gpu.example.com-metadata.json").read_bytes()
        path.write_bytes(content + b" " * (5 * 1024 * 1024) + b"\n")
        return tmp_path

    def test_the_error_names_the_option(self, large: Path) -> None:
        result = run("show", "c", "r", root=large)
        assert result.returncode == 3
        assert "give --max-size SIZE (e.g. --max-size 16MiB) to raise the limit" in (result.stderr)
        with pytest.raises(dra_metadata.MetadataTooLargeError, match="pass max_size= to"):
            dra_metadata.read_claim_metadata("c", "r", root=large)

    @pytest.mark.parametrize(
        "arguments",
        [
            ["show", "c", "r", "-o", "json"],
            ["validate", "-o", "json"],
            ["ls", "-o", "json"],
            ["env", "c", "r", "--attribute", "index=I"],
            ["wait", "c", "r", "--timeout", "30s"],
            ["exec", "c", "r", "--timeout", "30s"],
        ],
    )
    def test_every_reading_subcommand_takes_it(self, large: Path, arguments: list[str]) -> None:
        command = ["--", "true"] if arguments[0] == "exec" else []
        result = run(*arguments, "--max-size", "16MiB", *command, root=large)
        assert result.returncode == 0, result.stderr

    @pytest.mark.parametrize(
        ("size", "expected"),
        [("4194304", 4194304), ("10M", 10 << 20), ("16MiB", 16 << 20), ("500KB", 500_000)],
    )
    def test_sizes(self, size: str, expected: int) -> None:
        from dra_metadata.cli._arguments import parse_size  # noqa: PLC0415

        assert parse_size(size) == expected

    @pytest.mark.parametrize("size", ["", "1.5M", "10X", "-1", "iB"])
    def test_bad_sizes_are_usage_errors(self, size: str) -> None:
        result = run("show", "training-gpus", "gpu", "--max-size", size)
        assert result.returncode == 2
        assert "--max-size" in result.stderr


@pytest.fixture(scope="module")
def large_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough claims that every output is larger than a pipe holds (64 KiB)."""
    root = tmp_path_factory.mktemp("large")
    source = (SAMPLE / GPU_DIR / "gpu.example.com-metadata.json").read_bytes()
    for index in range(1000):
        directory = root / "resourceclaims" / f"claim-{index}" / "gpu"
        directory.mkdir(parents=True)
        (directory / "gpu.example.com-metadata.json").write_bytes(source)
    return root


@pytest.mark.parametrize("output", ["json", "table"])
@pytest.mark.parametrize("command", ["ls", "validate"])
def test_a_reader_that_goes_away_ends_it_with_141(
    large_tree: Path, command: str, output: str
) -> None:
    with subprocess.Popen(
        [COMMAND, "--root", str(large_tree), command, "-o", output],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None
        assert process.stdout.read(1)  # as head -c 1 does
        process.stdout.close()
        assert process.wait(120) == 141
        assert process.stderr is not None
        assert process.stderr.read() == b""


class TestEnvironmentVariables:
    @pytest.fixture
    def nul_tree(self, tmp_path: Path) -> Path:
        MetadataTree(tmp_path).add_claim(
            "c", "r", "d.example.com", [Device(name="n", attributes={"v": "a\0b", "ü": "x"})]
        )
        return tmp_path

    @pytest.mark.parametrize("command", [["env"], ["exec"]])
    def test_a_nul_value_is_a_usage_error(self, nul_tree: Path, command: list[str]) -> None:
        tail = ["--", "true"] if command == ["exec"] else []
        result = run(*command, "c", "r", "--attribute", "v=V", *tail, root=nul_tree)
        assert result.returncode == 2
        assert "holds a NUL character, which no environment variable can hold" in result.stderr
        assert result.stdout == ""

    def test_an_empty_command_is_a_usage_error(self, nul_tree: Path) -> None:
        result = run("exec", "c", "r", "--", "", root=nul_tree)
        assert result.returncode == 2
        assert "COMMAND after -- is empty" in result.stderr

    @pytest.mark.parametrize("attribute", ["ü", "v=_", "v=É"])
    def test_names_must_be_portable_and_not_underscore(
        self, nul_tree: Path, attribute: str
    ) -> None:
        result = run("env", "c", "r", "--attribute", attribute, root=nul_tree)
        assert result.returncode == 2
        assert "is not a shell variable name" in result.stderr
        if attribute != "v=É":  # É is no ASCII letter; the others become _
            assert "the shell overwrites it after every command" in result.stderr
