"""The mutation testing setup (tools/mutation_score.py) stays usable: its files agree with each other.

Running mutmut takes tens of minutes, so the suite only checks what would make the documented
command fail or score the wrong thing.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from dra_metadata import CONTAINER_DIR
from dra_metadata._decoding import _convert as convert_module

from helpers import REPO

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
        "# comment\n\ndra_metadata._reading._paths.x_f__mutmut_1 0123456789ab the reason\n"
        "dra_metadata._reading._paths.x_f__mutmut_2 0123456789ab\n"
    )
    with pytest.raises(ValueError, match=r"equivalents.txt:4: expected '<mutant name>"):
        script.load_equivalents(path)
    path.write_text(
        "dra_metadata._reading._paths.x_f__mutmut_1 0123456789ab the reason, in words\n"
    )
    (entry,) = script.load_equivalents(path)
    assert (entry.function, entry.fingerprint, entry.reason) == (
        "dra_metadata._reading._paths.x_f",
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
        # them, and only slows every run down (the command's tests, the API's).
        assert not name.startswith(("tests/cli/", "tests/kube/")), name


def test_the_command_is_documented() -> None:
    development = (REPO / "docs" / "development.md").read_text()
    assert "tools/mutation_score.py" in development
    assert "tools/mutation-equivalents.txt" in development
    assert "mutmut" not in (REPO / ".ci" / "run").read_text()


def test_the_guarded_root_is_the_container_default(script: ModuleType) -> None:
    assert Path(CONTAINER_DIR) == script.CONTAINER_ROOT


def test_mutants_run_with_the_python_attribute_check(script: ModuleType) -> None:
    assert script.PURE_PYTHON_VARIABLE == convert_module.PURE_PYTHON_VARIABLE


def test_the_tmpfs_covers_the_deepest_existing_directory(
    script: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "run").symlink_to(tmp_path / "run")
    root = tmp_path / "var" / "run" / "kubernetes.io" / "dra-device-attributes"
    assert script.guarded_directory(root) == tmp_path / "run"
    assert script.first_missing(root) == tmp_path / "run" / "kubernetes.io"
    (tmp_path / "run" / "kubernetes.io").mkdir()
    assert script.guarded_directory(root) == tmp_path / "run" / "kubernetes.io"
    assert script.first_missing(root) == tmp_path / "run" / "kubernetes.io" / root.name
    (tmp_path / "run" / "kubernetes.io" / root.name).mkdir()
    assert script.first_missing(root) is None


def test_what_a_run_made_on_the_way_to_the_root_is_removed(
    script: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "kubernetes.io"
    script.check_container_root(missing)  # nothing made: nothing said
    assert capsys.readouterr().out == ""
    (missing / "dra-device-attributes" / "resourceclaims").mkdir(parents=True)
    script.check_container_root(missing)
    assert not missing.exists()
    assert (
        capsys.readouterr().out
        == f"WARNING: the mutation run made {missing} on this machine: removed\n"
    )
    assert tmp_path.is_dir()


def test_a_read_only_tmpfs_keeps_mutants_from_writing_to_the_machine(
    script: ModuleType, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    (run / "lock").mkdir(parents=True)
    (run / "lock" / "kept").write_text("seen through the tmpfs")
    original = tmp_path / "original"
    original.mkdir()
    prefix = script.private_namespace_prefix(run)
    if isinstance(prefix, str):
        pytest.skip(f"no private mount namespace on this machine: {prefix}")
    code = f"""
import errno, importlib.util, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("mutation_score", {str(SCRIPT)!r})
module = importlib.util.module_from_spec(spec)
sys.modules["mutation_score"] = module
spec.loader.exec_module(module)
run = Path({str(run)!r})
module.cover_with_tmpfs(run, Path({str(original)!r}))
(run / "lock" / "written").write_text("through the symlink")
print((run / "lock" / "kept").read_text())
try:
    (run / "kubernetes.io").mkdir()
except OSError as error:
    print(errno.errorcode[error.errno])
print(sorted(entry.name for entry in run.iterdir()))
"""
    result = subprocess.run(
        [*prefix, sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines() == ["seen through the tmpfs", "EROFS", "['lock']"]
    assert sorted(entry.name for entry in run.iterdir()) == ["lock"]  # outside: untouched
    assert (run / "lock" / "written").read_text() == "through the symlink"
    assert list(original.iterdir()) == []


def test_never_active_entries_are_not_measured_rather_than_equivalent(
    script: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    equivalent = script.Equivalent("m.x_f__mutmut_2", "0123456789ab", "a change no test sees", 1)
    import_time = script.Equivalent(
        "m.x_f__mutmut_3", "0123456789ab", "never active: runs at import; test_x kills it", 2
    )
    assert not equivalent.never_active
    assert import_time.never_active
    module = script.Module("m", Path("m.py"))
    module.statuses = {
        "m.x_f__mutmut_1": "killed",
        "m.x_f__mutmut_2": "survived",
        "m.x_f__mutmut_3": "survived",
        "m.x_f__mutmut_4": "survived",
    }
    module.equivalent = {"m.x_f__mutmut_2": equivalent}
    module.not_measured = {"m.x_f__mutmut_3": import_time}
    module.survivors = {"m.x_f__mutmut_4": "fedcba987654"}
    assert module.score == 50.0  # 1 killed of the 2 measured and not equivalent
    script.report([module], show=False)
    printed = capsys.readouterr().out
    header, row = printed.strip().splitlines()[:2]
    assert header.split() == [
        *("module", "mutants", "killed", "survived", "equiv.", "not", "run", "score", "time")
    ]
    assert row.split() == ["m", "4", "1", "1", "1", "1", "50.0%", "-"]
    assert "not run: mutants of code that runs at import" in printed
    assert "not measured, left out of the score (not equivalent" in printed


def test_every_never_active_entry_names_the_test_that_kills_it(script: ModuleType) -> None:
    for entry in script.load_equivalents():
        if entry.never_active:
            assert re.search(r"applied by hand, test_\w+ kills it", entry.reason), entry
