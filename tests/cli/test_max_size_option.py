"""--max-size: every reading subcommand takes it, the error names it, sizes are parsed strictly.

Subprocesses run the installed command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import dra_metadata

from helpers import SAMPLE
from helpers import run_command as run

GPU_DIR = Path("resourceclaims/training-gpus/gpu")


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
