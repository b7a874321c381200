"""No line of a code block in the docs is wider than the site shows without scrolling.

A reader of the home page or the getting-started guide copies commands off the page; a line
cut off at the edge of its block (Material scrolls it) hides the end of the command. Every
fenced block of the Markdown pages, and every file a page includes into one (``--8<--``), keeps
its lines to CODE_BLOCK_WIDTH characters (site_browser.py says how it was measured;
test_site_in_a_browser.py checks it against the theme): long commands are continued with ``\\``,
long Python is formatted to that width. The references made from the parser and from the
docstrings are left out here (their own generators decide their width).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from site_browser import CODE_BLOCK_WIDTH, REPO

PAGES = sorted((REPO / "docs").rglob("*.md"))
_FENCE = re.compile(r"^\s*(```+|~~~+)")
_SNIPPET = re.compile(r'^\s*--8<-- "([^"]+)"\s*$')


def code_lines(page: Path) -> list[tuple[str, str]]:
    """(where, line) for every line inside a fenced block of ``page``, included files too."""
    found: list[tuple[str, str]] = []
    fence: str | None = None
    name = page.relative_to(REPO) if page.is_relative_to(REPO) else page
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        opening = _FENCE.match(line)
        if fence is None:
            fence = opening.group(1) if opening else None
            continue
        if opening and line.strip() == fence:
            fence = None
            continue
        included = _SNIPPET.match(line)
        if included:
            source = REPO / included.group(1)
            for offset, text in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
                found.append((f"{included.group(1)}:{offset} (in {page.name})", text))
        else:
            found.append((f"{name}:{number}", line))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_no_code_line_is_wider_than_the_column(page: Path) -> None:
    wide = [
        f"{where}: {len(line)} characters: {line}"
        for where, line in code_lines(page)
        if len(line.expandtabs()) > CODE_BLOCK_WIDTH
    ]
    assert wide == [], "\n".join(wide)


def test_the_blocks_and_includes_are_found(tmp_path: Path) -> None:
    included = tmp_path / "included.yaml"
    included.write_text("a: 1\n" + "b" * 90 + "\n")
    page = tmp_path / "page.md"
    page.write_text(
        f'text\n\n```sh\necho one\n```\n\nno code\n\n```yaml\n--8<-- "{included}"\n```\n'
    )
    lines = [line for _, line in code_lines(page)]
    assert lines == ["echo one", "a: 1", "b" * 90]
    assert sum(len(code_lines(page)) for page in PAGES) > 400


def test_ruff_formats_the_examples_to_the_width() -> None:
    """``ruff format`` (which formats the pages' Python blocks too) keeps them to the width."""
    config = (REPO / "docs" / ".ruff.toml").read_text(encoding="utf-8")
    found = re.search(r"^line-length = (\d+)$", config, re.MULTILINE)
    assert found is not None
    assert int(found[1]) == CODE_BLOCK_WIDTH
