"""The command's usage messages say what to do: the subcommand's help, the separator of exec.

Subprocesses run the installed command.
"""

from __future__ import annotations

from pathlib import Path

from helpers import run_command as run


class TestMessages:
    def test_an_unknown_option_points_to_the_subcommands_help(self) -> None:
        result = run("show", "training-gpus", "gpu", "--temp")
        assert result.returncode == 2
        assert result.stderr == (
            "dra-metadata show: unrecognized arguments: --temp (see dra-metadata show --help)\n"
        )

    def test_exec_says_to_put_the_separator_before_the_command(self) -> None:
        result = run("exec", "training-gpus", "gpu", "env")
        assert result.returncode == 2
        assert "put -- before it: dra-metadata exec CLAIM REQUEST [options] -- env" in (
            result.stderr
        )

    def test_grammar(self, tmp_path: Path) -> None:
        single = run("wait", "c", "r", "--namespace", "ml", root=None)
        assert "--namespace only applies to the Kubernetes API" in single.stderr
        path = tmp_path / "n-metadata.json"
        path.write_text('{"kind": "DeviceMetadata", "apiVersion": 5}')
        result = run("validate", str(path), "-o", "table", root=None)
        assert 'has an "apiVersion" that is the number 5' in result.stdout
