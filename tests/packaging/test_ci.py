"""The CI set-up: nox tests every Python that pyproject.toml claims, and .ci/run uses it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from typing import Any

import pytest

from dra_metadata._decoding import _convert as convert_module

from helpers import REPO


def noxfile_constant(name: str) -> Any:
    """A constant of noxfile.py, read without importing nox (not installed in nox's sessions)."""
    tree = ast.parse((REPO / "noxfile.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            name
        ]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"noxfile.py has no constant {name}")


def test_nox_tests_every_python_that_pyproject_claims() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    claimed = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject)
    pythons = noxfile_constant("PYTHONS")
    assert list(pythons) == claimed
    assert f'requires-python = ">={pythons[0]}"' in pyproject


def test_nox_asks_for_pure_python_by_the_variable_the_package_reads() -> None:
    assert noxfile_constant("PURE_PYTHON_VARIABLE") == convert_module.PURE_PYTHON_VARIABLE


def test_the_one_interpreter_mark_is_registered_and_used() -> None:
    mark = noxfile_constant("ONE_INTERPRETER_MARK")
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"{mark}: ' in pyproject
    marked = sorted(
        path.name
        for path in (REPO / "tests").rglob("test_*.py")
        if f"@pytest.mark.{mark}" in path.read_text(encoding="utf-8")
    )
    assert marked == ["test_install.py", "test_watch.py"]


def test_ci_runs_the_readme_command_first_then_the_other_pythons() -> None:
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    readme_command = next(index for index, line in enumerate(lines) if "-m pytest" in line)
    nox_runs = [
        index for index, line in enumerate(lines) if line.strip().startswith(".venv/bin/nox")
    ]
    assert nox_runs
    assert readme_command < min(nox_runs)
    assert any("SKIPPED tests-$version" in line for line in lines)


def test_interpreters_are_listed_by_version() -> None:
    pytest.importorskip("nox", reason="nox comes with the dev extra, not the test extra")
    result = subprocess.run(
        [sys.executable, str(REPO / "noxfile.py"), "interpreters"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    rows = [line.split(" ", 1) for line in result.stdout.splitlines()]
    assert [version for version, _ in rows] == list(noxfile_constant("PYTHONS"))
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert all(interpreter.strip() for _, interpreter in rows)
    if running in dict(rows):
        assert dict(rows)[running] != "-"  # the interpreter running this test is found
