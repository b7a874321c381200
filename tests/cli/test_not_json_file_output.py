"""A metadata file that is not JSON at all, as the command reports it: Go's words, then that the
file is not JSON and how it begins, in show's one line, validate's and ls's listings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_command as run

GO_TEXT = (
    "read metadata object from stream: object 1: invalid character 'o' in literal null "
    "(expecting 'u') at byte 1"
)
EXPLAINED = f"{GO_TEXT} (the file is not JSON: it begins with 'not json at all\\n')"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "resourceclaims" / "c" / "r"
    directory.mkdir(parents=True)
    (directory / "d.example.com-metadata.json").write_text("not json at all\n")
    return tmp_path


def test_show_says_the_file_is_not_json(root: Path) -> None:
    result = run("show", "c", "r", root=root)
    assert result.returncode == 3
    file = root / "resourceclaims" / "c" / "r" / "d.example.com-metadata.json"
    assert result.stderr == f"dra-metadata: {file}: {EXPLAINED}\n"
    assert result.stdout == ""


def test_validate_and_ls_say_it_too(root: Path) -> None:
    (report,) = json.loads(run("validate", str(root), "-o", "json", root=None).stdout)
    assert (report["status"], report["error"]) == ("undecodable", EXPLAINED)
    table = run("validate", str(root), "-o", "table", root=None)
    assert f": cannot be decoded: {EXPLAINED}\n" in table.stdout
    (entry,) = json.loads(run("ls", "-o", "json", root=root).stdout)
    assert (entry["status"], entry["error"]) == ("undecodable", EXPLAINED)
