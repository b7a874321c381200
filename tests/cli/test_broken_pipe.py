"""A reader that goes away ends the command with 141, as a shell's own commands end.

Subprocesses run the installed command.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import COMMAND, SAMPLE

GPU_DIR = Path("resourceclaims/training-gpus/gpu")


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
