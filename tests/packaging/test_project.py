"""The project's own promises: public API surface, README commands, CI script, benchmarks."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import dra_metadata

import kube_harness
from helpers import REPO


def test_all_is_sorted_and_complete() -> None:
    # Sorted as ruff's RUF022 keeps it: CONSTANTS, then Classes, then functions.
    def kind(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert dra_metadata.__all__ == sorted(dra_metadata.__all__, key=kind)
    for name in dra_metadata.__all__:
        assert hasattr(dra_metadata, name), name
    # ("@py_builtins" and the like: pytest rewrites the package, which ships a pytest plugin)
    public = {name for name in vars(dra_metadata) if not name.startswith(("_", "@"))}
    modules = {"writer", "strategies", "testing", "cli", "kube", "podresources"}
    assert public - modules == set(dra_metadata.__all__)


_LAZY_MODULES = ("_reading._listing", "_validation._schema", "_validation._validate", "_watch")


def _run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout


def test_dir_shows_every_public_name_without_importing_it() -> None:
    code = (
        "import sys, dra_metadata\n"
        "names = dir(dra_metadata)\n"
        "print(sorted(set(dra_metadata.__all__) - set(names)))\n"
        "print('__version__' in names, names == sorted(names))\n"
        f"print([m for m in {_LAZY_MODULES!r} if 'dra_metadata.' + m in sys.modules])\n"
        "print('pydantic' in sys.modules, 'asyncio' in sys.modules)\n"
    )
    assert _run_python(code).splitlines() == ["[]", "True True", "[]", "False False"]
    assert set(dra_metadata._LAZY) <= set(dra_metadata.__all__)  # what dir() adds is public


def test_help_documents_every_public_name() -> None:
    # pydoc documents each name dir() lists, which needs the object: help() imports the lazy
    # modules (not pydantic, which only json_schema() imports when it is called).
    code = (
        "import pydoc, sys, dra_metadata\n"
        "text = pydoc.render_doc(dra_metadata, renderer=pydoc.plaintext)\n"
        "print(sorted(name for name in dra_metadata.__all__ if name not in text))\n"
        "import re\n"
        "signature = re.search(r'wait_for_network_data\\(\\s*claim_name', text)\n"
        "print(signature is not None, 'class MountedClaim' in text)\n"
        "print('pydantic' in sys.modules)\n"
    )
    assert _run_python(code).splitlines() == ["[]", "True True", "False"]


def test_version() -> None:
    assert re.match(r"\d+\.\d+", dra_metadata.__version__)
    with pytest.raises(AttributeError):
        _ = dra_metadata.no_such_name  # type: ignore[attr-defined]


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    commands = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL)
    test_command = next(command for command in commands if "pytest" in command)
    assert test_command in ci.splitlines()


def test_getting_started_has_the_readme_commands() -> None:
    readme = (REPO / "README.md").read_text()
    page = (REPO / "docs" / "getting-started.md").read_text()
    try_it = readme[readme.index("## Try it") : readme.index("## Install")]
    commands = re.findall(r"```sh\n(.*?)\n```", try_it, flags=re.DOTALL)
    assert len(commands) == 3  # install and run, the command from the venv, the tests
    shown = [  # the page continues long lines with "\" (tests/docs/test_code_block_width.py)
        re.sub(r" \\\n\s*", " ", block)
        for block in re.findall(r"```sh\n(.*?)\n```", page, flags=re.DOTALL)
    ]
    for command in commands:
        assert command in shown


def test_readme_run_command_works() -> None:
    readme = (REPO / "README.md").read_text()
    run = next(
        c for c in re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL) if "examples" in c
    )
    # The install part needs the network; the part that runs must work as written.
    runs_example = run.split(" && ", 2)[-1]
    command = runs_example.replace(".venv/bin/python", sys.executable)
    result = subprocess.run(  # noqa: S602 - the README's command, as a user types it
        command, shell=True, cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    assert "GPUs for training" in result.stdout


NEEDS_AN_API_SERVER = {"bench_health.py"}
"""Benchmarks all of whose measurements go through a kube-apiserver (the others measure their
in-process parts without one)."""


@pytest.mark.parametrize("script", sorted(p.name for p in (REPO / "benchmarks").glob("bench_*.py")))
def test_benchmarks_run(script: str) -> None:
    if script in NEEDS_AN_API_SERVER and kube_harness.assets() is None:
        pytest.skip(kube_harness.SKIP_REASON)
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "x" in result.stdout
