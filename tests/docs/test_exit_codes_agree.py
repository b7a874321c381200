"""The exit codes as the command lists them (``dra-metadata --help``, each subcommand's
``--help``) and as docs/reference/exit-codes.md documents them: the same codes, and each
subcommand whose --help names a code is in that code's row of the page."""

from __future__ import annotations

import re

from dra_metadata.cli import _exit, build_parser
from dra_metadata.cli._commands import command_names, load_command

from helpers import REPO

PAGE = REPO / "docs" / "reference" / "exit-codes.md"


def _codes(text: str) -> set[int]:
    """The codes a list such as "exit codes: 0 ok, 1 not ready, 126/127 exec: ..." names."""
    listed = text.split("exit codes", 1)[1]
    return {
        int(code)
        for item in re.findall(r"(?:^|[:,;]) ?(\d+(?:/\d+)?) ", listed)
        for code in item.split("/")
    }


def _rows() -> dict[int, str]:
    """Each code of the page's table, and its Subcommands column."""
    rows = {}
    for codes, subcommands in re.findall(
        r"^\| ([\d, ]+) \| .* \| ([^|]+) \|$", PAGE.read_text(), flags=re.MULTILINE
    ):
        for code in re.findall(r"\d+", codes):
            rows[int(code)] = subcommands
    return rows


def test_the_command_s_help_lists_the_codes_the_page_documents() -> None:
    constants = {
        value
        for name, value in vars(_exit).items()
        if name.startswith("EXIT_") and isinstance(value, int)
    }
    assert _codes(_exit.EXIT_CODES_HELP) == set(_rows()) == constants
    assert _exit.EXIT_CODES_HELP in (build_parser().epilog or "")


def test_each_subcommand_s_codes_are_in_their_rows() -> None:
    rows = _rows()
    for name in command_names():
        command = load_command(name)
        if not command.exit_codes:
            continue
        for code in _codes(command.exit_codes):
            column = rows[code]
            assert column.strip().startswith("all") or f"`{name}" in column, (name, code)


def test_a_missing_extra_has_its_own_code_where_it_can_happen() -> None:
    assert _exit.EXIT_NOT_INSTALLED == 7
    assert "7 a part of the install is missing" in _exit.EXIT_CODES_HELP
    for name in command_names():
        command = load_command(name)
        if command.needs_extra is not None or name in {"wait", "exec"}:
            assert 7 in _codes(command.exit_codes), name
            assert f"`{name}" in _rows()[7], name
