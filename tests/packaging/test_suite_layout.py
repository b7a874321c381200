"""The test suite reads as the specification: one folder per stage, files named after behaviour.

The folders mirror the package's stages (docs/development.md shows the tree). Test files are
imported by their basename (pytest's prepend import mode, ``pythonpath = ["tests"]``), so a name
used twice would make one folder's module shadow another's; tests import what they share from
helpers.py, never from a conftest.py, since several conftest.py files cannot all be "conftest".
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from helpers import REPO, TESTS

STAGES = {
    "reading",
    "decoding",
    "validation",
    "models",
    "watching",
    "writing",
    "cli",
    "kube",
    "podresources",
    "node",
    "docs",
    "packaging",
}
SUPPORT = {
    "conftest.py",
    "helpers.py",
    "kube_harness.py",
    "kube_pools_harness.py",
    "podresources_node.py",
    "fault_children.py",
    "node_config.py",
    "node_harness.py",
    "node_machine.py",
    "node_pod.py",
}
TEST_FILES = sorted(TESTS.rglob("test_*.py"))


def test_every_test_file_is_in_the_folder_of_a_stage() -> None:
    assert TEST_FILES
    for path in TEST_FILES:
        relative = path.relative_to(TESTS)
        if relative.parts[0] in {"data", "typing"}:
            continue
        assert len(relative.parts) == 2, f"{relative}: put it in the folder of its stage"
        assert relative.parts[0] in STAGES, f"{relative}: {relative.parts[0]} is no stage"
    beside = {path.name for path in TESTS.glob("*.py")}
    assert beside <= SUPPORT, f"only support modules stand in tests/ itself: {beside - SUPPORT}"


def test_test_file_names_are_unique() -> None:
    counts = Counter(path.name for path in TEST_FILES if "data" not in path.parts)
    assert [name for name, count in counts.items() if count > 1] == []


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda path: str(path.relative_to(TESTS)))
def test_no_test_imports_a_conftest(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert "conftest" not in imported, "import it from helpers.py"


def test_no_file_name_says_how_its_tests_were_found() -> None:
    how = re.compile(r"pinned|rough_edges|whole_truth|regression|mutation_found|issue")
    assert [path.name for path in TEST_FILES if how.search(path.stem)] == []


INTERNAL_ISSUE = re.compile(r"\bissues? ?#?[0-9]+\b|\bfound in issue\b", re.IGNORECASE)
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".yml", ".yaml", ".c", ".cfg", ".ini", ""}


def _repository_text_files() -> list[Path]:
    tops = ["dra_metadata", "tests", "tools", "benchmarks", "docs", "examples", ".ci"]
    files = [path for path in REPO.glob("*") if path.is_file() and path.suffix in TEXT_SUFFIXES]
    for top in tops:
        files += [
            path
            for path in (REPO / top).rglob("*")
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts
        ]
    return sorted(files)


def test_no_file_names_an_internal_issue_number() -> None:
    found = []
    for path in _repository_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if INTERNAL_ISSUE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == [], "say what the test or the code pins, not where it came from"
