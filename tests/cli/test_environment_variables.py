"""exec's and env's variables: NUL values, empty commands and names that are not portable are
usage errors.

Subprocesses run the installed command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_metadata import Device
from dra_metadata.testing import MetadataTree

from helpers import run_command as run


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
