"""Every list of subcommands in README.md and docs/ agrees with the parser: a run of three or
more subcommand names (`show`, `wait`, `exec`...) is found wherever it is, and each must be one
this file knows how to check (a new list fails until a check is added); the guide that "shows
every subcommand at work" shows each, and the README's documentation list names every guide."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path

from dra_metadata.cli import build_parser
from dra_metadata.cli._commands import command_names, load_command

from helpers import REPO

NAMES = command_names()
_WORD = r"`(?:dra-metadata )?({})(?: [^`]*)?`".format("|".join(NAMES))
_RUN = re.compile(rf"(?:{_WORD})(?:(?:,? and |, |/| or |,? )(?:{_WORD}))+")


def _parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _offering(*options: str) -> set[str]:
    return {
        name
        for name, parser in _parsers().items()
        if all(option in parser._option_string_actions for option in options)
    }


def _listing_code(code: int) -> set[str]:
    """The subcommands whose --help lists ``code`` among their exit codes."""
    listed = set()
    for name in NAMES:
        codes = load_command(name).exit_codes
        if re.search(rf"(?:^|[:,;]) ?(?:\d+/)?{code}(?:/\d+)? ", codes.partition("exit codes")[2]):
            listed.add(name)
    return listed


def _row_names(code: int) -> set[str]:
    page = (REPO / "docs" / "reference" / "exit-codes.md").read_text()
    (row,) = re.findall(rf"^\| {code} \|.*$", page, flags=re.MULTILINE)
    return set(re.findall(_WORD, row.rsplit("|", 2)[1]))


def _run_on_a_real_node() -> set[str]:
    """The subcommands the real-node tests run inside a pod."""
    sources = [path.read_text() for path in sorted((REPO / "tests" / "node").glob("*.py"))]
    return set(re.findall(r'"dra-metadata",\s*"([a-z-]+)"', "".join(sources)))


Check = Callable[[set[str]], bool]
CHECKS: dict[tuple[str, str], Check] = {
    # (page, a piece of the line the list is on): does the list found agree with the parser?
    ("reference/cli.md", "| `--pod` |"): lambda found: found == _offering("--pod", "--template"),
    ("reference/cli.md", "| `--root` |"): lambda found: found == set(NAMES) - _offering("--root"),
    ("reference/exit-codes.md", "--max-size SIZE` ("): lambda found: (
        found == _offering("--max-size")
    ),
    **{
        ("reference/exit-codes.md", f"| {code} |"): (
            lambda found, code=code: found >= _listing_code(code)
        )
        for code in (3, 4, 5, 6, 7)
    },
    ("reference/exit-codes.md", "A stale view is never reported"): lambda found: (
        found <= _row_names(4)
    ),
    ("reference/exit-codes.md", "whose output gates a start"): lambda found: found <= _row_names(4),
    ("explanation/stale-views.md", "command's `wait`, `exec` and `env` exit 4"): lambda found: (
        found <= _row_names(4)
    ),
    ("development.md", "`env`, `exec`, `ls`, `validate` and the Python"): lambda found: (
        found <= _run_on_a_real_node()
    ),
    ("development.md", "The command's API subcommands ("): lambda found: (
        found == {name for name in NAMES if load_command(name).needs_extra == "kube"}
    ),
}


def _lists() -> list[tuple[Path, int, str, set[str]]]:
    """Every run of three or more subcommand names: page, line number, line, names."""
    found = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = page.read_text()
        lines = text.splitlines()
        for match in _RUN.finditer(text):
            names = re.findall(_WORD, match.group(0))
            if len(names) >= 3:
                number = text.count("\n", 0, match.start())
                found.append((page, number + 1, lines[number], set(names)))
    return found


MEASURED = {"explanation/performance.md"}
"""Pages whose lists name the subcommands a measurement was about (its table says which), not
a set of the parser's: there the names only have to exist (the pattern finds no other)."""


def test_every_list_of_subcommands_agrees_with_the_parser() -> None:
    lists = _lists()
    assert len(lists) >= 8
    for page, number, line, names in lists:
        where = page.relative_to(REPO / "docs").as_posix() if "docs" in page.parts else page.name
        if where in MEASURED:
            continue
        checks = [
            check for (name, piece), check in CHECKS.items() if name == where and piece in line
        ]
        assert checks, f"{where}:{number}: a list of subcommands no test checks: {sorted(names)}"
        assert all(check(names) for check in checks), f"{where}:{number}: {sorted(names)}"


def test_the_union_of_the_stale_lists_is_row_4() -> None:
    pieces = ("A stale view is never reported", "whose output gates a start")
    stale = [names for _, _, line, names in _lists() if any(p in line for p in pieces)]
    assert set().union(*stale) == _row_names(4)


def test_the_guide_that_shows_every_subcommand_shows_each() -> None:
    readme = (REPO / "README.md").read_text()
    assert (
        "[Init containers and entrypoints](docs/guides/init-containers.md) shows every " in readme
    )
    guide = (REPO / "docs" / "guides" / "init-containers.md").read_text()
    blocks = "\n".join(re.findall(r"```sh\n(.*?)```", guide, flags=re.DOTALL))
    shown = set(re.findall(r"^(?:\S+=\$\()?dra-metadata ([\w-]+)", blocks, flags=re.MULTILINE))
    assert shown == set(NAMES)


def test_the_readme_documentation_list_names_every_page() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Documentation") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    linked = set(re.findall(r"\]\((docs/[^)#]+)\)", section))
    pages = {
        page.relative_to(REPO).as_posix()
        for folder in ("guides", "reference", "explanation")
        for page in (REPO / "docs" / folder).glob("*.md")
    }
    assert pages <= linked, sorted(pages - linked)
