"""The command's help is as wide as argparse would make it, found without shutil."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess

import pytest

from dra_metadata.cli import build_parser
from dra_metadata.cli._arguments import terminal_columns

from conftest import COMMAND


@pytest.mark.parametrize("columns", [None, "40", "200", "0", "-3", "wide"])
def test_the_width_is_shutils(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


@pytest.mark.parametrize("columns", ["50", "160"])
def test_help_is_argparses_own(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    parser = build_parser("show").subcommand("show")
    ours = parser.format_help()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    assert ours == parser.format_help()
    result = subprocess.run(
        [COMMAND, "show", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": columns},
        check=True,
    )
    assert result.stdout == ours
