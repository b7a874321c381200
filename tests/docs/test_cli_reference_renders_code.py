"""Code in the help texts is written `so`: the command reference (generated from the parser)
shows it, and the options the texts name, as code, never as literal backticks; ``--help`` in a
terminal shows it in quotes, with no backtick at all."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from types import ModuleType

import pytest

from dra_metadata.cli._commands import command_names

from helpers import COMMAND, REPO


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "cli_reference", REPO / "tools" / "cli_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section(text: str, name: str) -> str:
    return text.split(f"## `dra-metadata {name}` {{#{name}}}", 1)[1].split("\n## ", 1)[0]


def test_code_in_help_texts_is_code_in_the_reference() -> None:
    text = _reference().markdown()
    assert "\\`" not in text
    env = _section(text, "env")
    assert "Print `export VAR=VALUE` lines for attributes" in env
    assert '(`eval "$(dra-metadata env ...)"` runs on after a failure: `eval ""` succeeds)' in env
    exec_ = _section(text, "exec")
    assert "Optionally wait as `wait` does (`--for`, or `--timeout` alone for the files)" in exec_
    assert "`--require` implies `--for` network-data" in exec_
    assert "`--runtime-config=resource.k8s.io/v1alpha3=true`" in _section(text, "pools")


def test_the_reference_renders_no_backtick_as_text() -> None:
    markdown = pytest.importorskip("markdown", reason="the docs extra (MkDocs) renders Markdown")
    html = markdown.markdown(_reference().markdown(), extensions=["tables", "attr_list"])
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL)
    outside_code = re.sub(r"<pre>.*?</pre>", "", outside_code, flags=re.DOTALL)
    assert "`" not in outside_code
    assert "<code>export VAR=VALUE</code>" in html


@pytest.mark.parametrize("name", ["", *command_names()])
def test_help_in_a_terminal_shows_code_in_quotes(name: str) -> None:
    result = subprocess.run(
        [COMMAND, *([name] if name else []), "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "100"},
    )
    assert "`" not in result.stdout
    if name == "env":
        assert "Print 'export VAR=VALUE' lines" in " ".join(result.stdout.split())
