"""Sessions for nox: the test suite on every Python the package supports, lint, type checks, docs.

    nox                      # every session: lint, typecheck, docs, tests-3.10 ... tests-3.13
    nox -s tests-3.12        # one session
    nox -s lint typecheck
    nox -s docs              # the documentation site, mkdocs build --strict
    python noxfile.py interpreters   # which interpreter each tests session would use

A missing interpreter is an error, never a silent skip, and no Python is ever downloaded in
place of one. Pythons installed with pyenv are found even when pyenv has not selected them.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nox

PYTHONS = ("3.10", "3.11", "3.12", "3.13")
"""Every version pyproject.toml claims (tests/packaging/test_project.py checks that they agree)."""

OLDEST = PYTHONS[0]
NEWEST = PYTHONS[-1]
ONE_INTERPRETER_MARK = "one_interpreter"
"""Tests so slow that they run on one interpreter only: the one that runs nox (and in CI the
README's test command); the tests sessions of the other interpreters deselect them."""

PURE_PYTHON_VARIABLE = "DRA_METADATA_PURE_PYTHON"
"""dra_metadata._decoding._convert.PURE_PYTHON_VARIABLE (tests/packaging/test_ci.py checks that they
agree)."""

nox.options.sessions = ["lint", "typecheck", "docs", "tests"]
nox.options.default_venv_backend = "venv"
nox.options.download_python = "never"
nox.options.error_on_missing_interpreters = True


def _running_python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _expose_pyenv_pythons() -> None:
    """Let pyenv's shims run every installed 3.10-3.13, not only the versions pyenv selected.

    Keeps the selection first (PYENV_VERSION, else pyenv's global version file), then adds the
    newest installed patch release of each supported version.
    """
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    versions = root / "versions"
    if not versions.is_dir():
        return
    if "PYENV_VERSION" in os.environ:
        selected = os.environ["PYENV_VERSION"].split(":")
    else:
        version_file = root / "version"
        text = version_file.read_text() if version_file.is_file() else ""
        selected = [line.strip() for line in text.splitlines() if line.strip()]
        selected = [name for name in selected if not name.startswith("#")] or ["system"]
    added = []
    for minor in PYTHONS:
        releases = [
            path.name
            for path in versions.iterdir()
            if re.fullmatch(rf"{re.escape(minor)}\.\d+", path.name)
            and (path / "bin" / f"python{minor}").is_file()
        ]
        if releases:
            added.append(max(releases, key=lambda name: int(name.rsplit(".", 1)[1])))
    os.environ["PYENV_ROOT"] = str(root)
    os.environ["PYENV_VERSION"] = ":".join(dict.fromkeys([*selected, *added]))


_expose_pyenv_pythons()


@nox.session(python=list(PYTHONS))
def tests(session: nox.Session) -> None:
    """The test suite, on the package as installed (a wheel, not the source tree).

    The decoder runs in pure Python here (DRA_METADATA_PURE_PYTHON=1), so that the other
    interpreters test the code of a build without a compiler, while the README's test command
    tests the compiled attribute check; tests/decoding/test_compiled_check.py compares the
    compiled module with its Python twin on every interpreter either way.
    """
    session.install(".[test]")
    session.env[PURE_PYTHON_VARIABLE] = "1"
    arguments = list(session.posargs)
    if session.python != _running_python():
        arguments = ["-m", f"not {ONE_INTERPRETER_MARK}", *arguments]
    session.run("pytest", *arguments)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint rules and formatting; import-linter: the layers of the package (pyproject.toml,
    [tool.importlinter]), read from the source tree."""
    session.install("ruff>=0.5", "import-linter>=2.1")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lint-imports")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict, for the newest Python and for the oldest one the package supports."""
    session.install("-e", ".[dev]")
    for target in dict.fromkeys((NEWEST, OLDEST)):
        session.run("mypy", "--python-version", target)


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site: mkdocs build --strict (any warning, such as a broken link, fails).

    Builds into the session's own directory, so that it leaves no site/ in the checkout.
    """
    session.install("-e", ".[docs]")
    session.env["NO_MKDOCS_2_WARNING"] = "1"  # Material's banner about its successor, not ours
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", str(Path(session.virtualenv.location) / "site")
    )


def _print_interpreters() -> None:
    """One line per supported version: the version and the interpreter nox would use, or -."""
    from python_discovery import get_interpreter  # noqa: PLC0415 - nox's own discovery

    for version in PYTHONS:
        found = get_interpreter(version)
        print(version, found.executable if found is not None else "-")  # noqa: T201


if __name__ == "__main__":
    if sys.argv[1:] != ["interpreters"]:
        sys.exit("usage: python noxfile.py interpreters")
    _print_interpreters()
