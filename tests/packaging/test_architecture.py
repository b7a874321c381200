"""The package's shape (README, Design notes): no import circle among its modules, counting the
imports inside functions too (everything that runs, ``if TYPE_CHECKING:`` blocks left out), no
module over 500 lines, and every part of it placed in a layer of the import-linter contract
(pyproject.toml), which ``nox -s lint`` checks.

The walk is over the source with the standard library's ast, so that it runs in every test
environment; import-linter (dev extra) checks the same graph, plus the layers, with grimp.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers import REPO

PACKAGE = REPO / "dra_metadata"
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` (also ``typing.TYPE_CHECKING`` and an alias ``_TYPE_CHECKING``)."""
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
    return name.endswith("TYPE_CHECKING")


class _Imports(ast.NodeVisitor):
    """The package's modules that one module imports, at module level or in a function."""

    def __init__(self, name: str, path: Path) -> None:
        self.package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):  # never runs: only its else branch is looked at
            for statement in node.orelse:
                self.visit(statement)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names if alias.name in MODULES)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:  # relative: from the package, or from a parent of it
            parts = self.package.split(".")
            base = parts[: len(parts) - node.level + 1]
            module = ".".join([*base, *([node.module] if node.module else [])])
        else:
            module = node.module or ""
        for alias in node.names:  # `from package import module` imports that module
            if f"{module}.{alias.name}" in MODULES:
                self.found.add(f"{module}.{alias.name}")
            elif module in MODULES:
                self.found.add(module)


def _imported(name: str, path: Path) -> set[str]:
    visitor = _Imports(name, path)
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    visitor.found.discard(name)
    return visitor.found


def _graph() -> dict[str, set[str]]:
    return {name: _imported(name, path) for name, path in MODULES.items()}


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    pending = list(graph[start])
    while pending:
        module = pending.pop()
        if module not in seen:
            seen.add(module)
            pending.extend(graph[module])
    return seen


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import each other (directly or not), sorted."""
    reach = {module: _reachable(graph, module) for module in graph}
    groups = {
        tuple(sorted(other for other in reach[module] if module in reach[other]))
        for module in graph
        if module in reach[module]
    }
    return sorted(list(group) for group in groups)


def test_the_walk_sees_imports_inside_functions_and_not_type_checking_blocks() -> None:
    graph = _graph()
    # DeviceMetadata.to_wire imports the export lazily; the decoder imports validation lazily
    # (decode_stream(validate=...)), and only for types under TYPE_CHECKING.
    assert "dra_metadata._model._export" in graph["dra_metadata._model._metadata"]
    assert "dra_metadata._validation._validate" in graph["dra_metadata._decoding._decode"]
    assert "dra_metadata.kube._wait" in graph["dra_metadata._watch._sources"]
    assert "lightkube" not in str(graph["dra_metadata._watch._sources"])


def test_no_import_circle_among_the_modules() -> None:
    assert _cycles(_graph()) == []


def test_only_the_command_imports_the_package_itself() -> None:
    # The package's __init__ holds the layers of the import-linter contract and is in none of
    # them: this places it above everything but the command (and __main__, which runs it).
    importers = {name for name, imported in _graph().items() if "dra_metadata" in imported}
    assert importers
    assert {name for name in importers if not name.startswith("dra_metadata.cli")} == set()


def test_a_circle_is_found() -> None:
    # The check itself: a graph with a circle through a lazy import, as the package had one.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_module_over_500_lines() -> None:
    sources = [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.c")]
    lengths = {
        str(path.relative_to(REPO)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sources
    }
    assert {path: lines for path, lines in lengths.items() if lines > MAX_LINES} == {}


def test_every_part_of_the_package_is_in_a_layer_of_the_contract() -> None:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [contract for contract in contracts if contract["type"] == "layers"]
    assert layers["containers"] == ["dra_metadata"]
    named = {
        part.strip() for layer in layers["layers"] for part in layer.replace(":", "|").split("|")
    }
    parts = {
        path.stem if path.suffix == ".py" else path.name
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py")
        or (path.is_dir() and (path / "__init__.py").is_file())
    }
    assert parts == named
