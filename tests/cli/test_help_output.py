"""The command's help, built with less at start-up, is what argparse would print."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

import pytest

from dra_metadata.cli import build_parser
from dra_metadata.cli._arguments import terminal_columns

from helpers import COMMAND


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


@pytest.mark.parametrize(
    "arguments",
    [
        ["--help"],
        [],
        ["bogus"],
        ["--root"],
        ["--debug", "-h", "show"],
        ["--version", "show"],
        ["--", "--help"],
        ["--root", "show"],
    ],
)
def test_the_commands_own_help_and_errors_are_the_full_parsers(arguments: list[str]) -> None:
    # The command's --help and its own errors list the subcommands with their summaries only:
    # what they print is what the parser of every subcommand in full prints.
    full = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from dra_metadata.cli import build_parser as b; b().parse_args(sys.argv[1:])",
            *arguments,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        check=False,
    )
    command = subprocess.run(
        [COMMAND, *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        check=False,
    )
    assert (command.returncode, command.stdout, command.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )
