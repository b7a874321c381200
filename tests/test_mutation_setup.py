"""The mutation testing setup (issue #18) stays usable: its files agree with each other.

Running mutmut takes tens of minutes, so the suite only checks what would make the documented
command fail or score the wrong thing.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conftest import REPO

SCRIPT = REPO / "tools" / "mutation_score.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_score", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_score"] = module  # dataclasses look their module up while being made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["mutation_score"]
    return module


@pytest.fixture(scope="module")
def mutmut_config() -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    config: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mutmut"]
    return config


def test_every_equivalent_names_a_measured_module(
    script: ModuleType, mutmut_config: dict[str, Any]
) -> None:
    prefixes = [
        pattern.removesuffix(".py").replace("/", ".").partition("*")[0]
        for pattern in mutmut_config["only_mutate"]
    ]
    for entry in script.load_equivalents():
        assert entry.reason.strip(), entry
        assert any(entry.mutant.startswith(prefix) for prefix in prefixes), entry


def test_a_malformed_equivalent_is_refused(script: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "equivalents.txt"
    path.write_text(
        "# comment\n\ndra_metadata._paths.x_f__mutmut_1 0123456789ab the reason\n"
        "dra_metadata._paths.x_f__mutmut_2 0123456789ab\n"
    )
    with pytest.raises(ValueError, match=r"equivalents.txt:4: expected '<mutant name>"):
        script.load_equivalents(path)
    path.write_text("dra_metadata._paths.x_f__mutmut_1 0123456789ab the reason, in words\n")
    (entry,) = script.load_equivalents(path)
    assert (entry.function, entry.fingerprint, entry.reason) == (
        "dra_metadata._paths.x_f",
        "0123456789ab",
        "the reason, in words",
    )


def test_the_fingerprint_ignores_the_diff_header(script: ModuleType) -> None:
    body = "     if x:\n-        return 1\n+        return 2\n"
    first = script.fingerprint(f"--- a.py\n+++ a.py\n@@ -3,2 +3,2 @@\n{body}")
    assert first == script.fingerprint(f"--- b.py\n+++ b.py\n@@ -9,2 +9,2 @@\n{body}")
    assert first != script.fingerprint(body.replace("return 2", "return 3"))
    assert len(first) == 12


def test_the_selected_tests_exist_and_run_in_process(mutmut_config: dict[str, Any]) -> None:
    selected = mutmut_config["pytest_add_cli_args_test_selection"]
    assert selected
    for name in selected:
        path = REPO / name
        assert path.is_file(), name
        # Mutants live in this process: a test that runs the code in a subprocess cannot see
        # them, and only slows every run down.
        assert "test_cli" not in name


def test_the_command_is_documented() -> None:
    readme = (REPO / "README.md").read_text()
    development = readme.partition("## Development")[2]
    assert "tools/mutation_score.py" in development
    assert "tools/mutation-equivalents.txt" in development
    assert "mutmut" not in (REPO / ".ci" / "run").read_text()
