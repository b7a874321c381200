"""``dra-metadata exec``: wait if asked, set the variables, become COMMAND; or fail before it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dra_metadata import Device, DeviceAttribute, NetworkDeviceData
from dra_metadata.testing import MetadataTree

from helpers import COMMAND, SAMPLE, wait_until_watching
from helpers import run_command as run


@pytest.fixture
def tree(tmp_path: Path) -> MetadataTree:
    return MetadataTree(tmp_path / "root", mode="in-place")


def test_sets_the_variables_and_becomes_the_command() -> None:
    with subprocess.Popen(
        [
            COMMAND, "--root", str(SAMPLE), "exec", "training-gpus", "gpu", "--driver",
            "gpu.example.com", "--attribute", "uuid=UUIDS", "--attribute",
            "resource.kubernetes.io/pciBusID=BUS", "--join", ";", "--",
            "sh", "-c", 'printf "%s %s|%s" "$$" "$UUIDS" "$BUS"',
        ],
        stdout=subprocess.PIPE,
        text=True,
    ) as process:  # fmt: skip
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    pid, values = output.split(" ", 1)
    assert int(pid) == process.pid  # the same process: replaced, not a child
    assert values == (
        "GPU-5b3c1d2e-8f41-4c55-9a1e-0c6f2b7d9e10;GPU-a9e77c02-3d1b-4f7a-b2c4-51d0e8f6a3b2|"
        "0000:1b:00.0;0000:9c:00.0"
    )


def test_no_shell_and_the_commands_own_options(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    result = run(
        "exec", "fast-net", "vf", "--", "printf", "%s\\n", f"$(touch {marker})", "--timeout", "5"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"$(touch {marker})\n--timeout\n5\n"
    assert not marker.exists()


def test_the_environment_is_kept() -> None:
    environment = {**os.environ, "KEPT": "yes"}
    result = run("exec", "fast-net", "vf", "--", "sh", "-c", "printf %s $KEPT", env=environment)
    assert result.stdout == "yes"


def test_signals_are_as_the_command_expects() -> None:
    # Python ignores SIGPIPE and SIGXFSZ; ignored signals would stay ignored across exec.
    result = run("exec", "fast-net", "vf", "--", "grep", "^SigIgn", "/proc/self/status")
    ignored = int(result.stdout.split()[1], 16)
    for number in (13, 25):  # SIGPIPE, SIGXFSZ
        assert not ignored & (1 << (number - 1)), result.stdout


def _exec_once_waiting(tree: MetadataTree, writer: str, *arguments: str) -> tuple[int, str, str]:
    """``dra-metadata exec ARGUMENTS``, with ``writer`` (Python code) run in another process once
    the command waits on the files: its exit code, stdout and stderr."""
    with subprocess.Popen(
        [COMMAND, "--root", str(tree.root), "exec", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as waiting:
        wait_until_watching(waiting, "dra-metadata exec")
        subprocess.run([sys.executable, "-c", writer, str(tree.root)], check=True, timeout=60)
        stdout, stderr = waiting.communicate(timeout=60)
    return waiting.returncode, stdout, stderr


def test_waits_then_runs(tree: MetadataTree) -> None:
    tree.add_template_claim("nic", "vf", "sriov.example.com", ["vf-0"])
    code = (
        "import sys\n"
        "from dra_metadata import Device, NetworkDeviceData\n"
        "from dra_metadata.testing import MetadataTree\n"
        "MetadataTree(sys.argv[1], mode='in-place').update('nic', 'vf', 'sriov.example.com', "
        "template=True, devices=[Device(name='vf-0', network_data=NetworkDeviceData('net1')), "
        "])\n"
    )
    code_, stdout, stderr = _exec_once_waiting(
        tree, code, "--template", "nic", "vf", "--for", "network-data", "--timeout", "60s",
        "-q", "--", "sh", "-c", "echo started",
    )  # fmt: skip
    assert code_ == 0, stderr
    assert stdout == "started\n"
    assert stderr == ""


def test_timeout_alone_waits_for_the_files(tree: MetadataTree) -> None:
    code = (
        "import sys\n"
        "from dra_metadata.testing import MetadataTree\n"
        "MetadataTree(sys.argv[1]).add_claim('c', 'r', 'd.example.com', ['n'])\n"
    )
    code_, stdout, stderr = _exec_once_waiting(
        tree, code, "c", "r", "--timeout", "60s", "--", "echo", "ran"
    )
    assert (code_, stdout) == (0, "ran\n"), stderr


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (["nope", "gpu"], 1, "no claim nope referenced by name has metadata"),
        (["training-gpus", "gpu", "--attribute", "uuid=UUIDS"], 1, "add --driver gpu.example.com"),
        (["training-gpus", "gpu", "--attribute", "pciBusID"], 1, "did you mean"),
        (["--template", "accelerator", "gpu/low-memory"], 1, "allocated as gpu/high-memory"),
        (["fast-net", "vf", "--for", "attribute=uuid", "--timeout", "0.2s"], 1, "timed out"),
        (["fast-net", "vf", "--for", "generation=3", "--timeout", "0"], 1, "(waiting for 3)"),
        (["fast-net", "vf", "--validate", "strict"], 0, None),
        (["fast-net", "vf", "--poll-interval", "1s"], 2, "--poll-interval only applies to a wait"),
        (["fast-net", "vf", "--for", "file", "--require", "ips"], 2, "--require only goes with"),
    ],
)
def test_any_failure_ends_before_the_command(
    tmp_path: Path, arguments: list[str], code: int, message: str | None
) -> None:
    marker = tmp_path / "ran"
    result = run("exec", *arguments, "--", "touch", str(marker))
    assert result.returncode == code, result.stderr
    assert marker.exists() == (code == 0)
    if message is not None:
        assert message in result.stderr
        assert result.stderr.count("\n") == 1


def test_invalid_data_exits_3_before_the_command(tree: MetadataTree, tmp_path: Path) -> None:
    tree.add_claim("c", "r", "d", [Device(name="GPU-0")])
    marker = tmp_path / "ran"
    for waiting in ([], ["--for", "file"]):
        result = run(
            "exec", "c", "r", "--validate", "metadata", *waiting, "--", "touch", str(marker),
            root=tree.root,
        )  # fmt: skip
        assert result.returncode == 3
        assert "requests[0].devices[0].name: Invalid value" in result.stderr
    assert not marker.exists()


def test_a_command_that_cannot_run(tmp_path: Path) -> None:
    result = run("exec", "fast-net", "vf", "--", "no-such-command-here")
    assert result.returncode == 127
    assert result.stderr == "dra-metadata: exec no-such-command-here: command not found\n"
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\necho hi\n")  # not executable
    result = run("exec", "fast-net", "vf", "--", str(script))
    assert result.returncode == 126
    assert result.stderr == f"dra-metadata: exec {script}: Permission denied\n"


def test_values_reach_the_command_exactly(tree: MetadataTree) -> None:
    hostile = "a'b\"c $(x) `y` \\ \n\t é \x1b[31m"
    tree.add_claim(
        "c",
        "r",
        "d",
        [
            Device(
                name="n",
                attributes={"note": DeviceAttribute(string=hostile)},
                network_data=NetworkDeviceData("net1"),
            )
        ],
    )
    result = run(
        "exec", "c", "r", "--attribute", "note=NOTE", "--", "sh", "-c", 'printf %s "$NOTE"',
        root=tree.root,
    )  # fmt: skip
    assert result.stdout == hostile
