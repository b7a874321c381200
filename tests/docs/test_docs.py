"""The documentation site keeps its promises: its examples run, its references are complete.

Every Python example of ``docs/`` (and of the README) runs here: the examples of a page in order,
in one namespace, on a copy of the sample tree ``examples/tree`` (``DRA_METADATA_ROOT``) in a
scratch directory; a ``text`` block right after an example is what the example prints. An
asyncio example is a whole program, run as a user would paste it into a file (``python
example.py``: ``asyncio.run(main())``, no ``await`` outside a coroutine). A block
preceded by ``<!-- docs-test: pytest -->`` is a test module, run by pytest; one preceded by
``<!-- docs-test: kube -->`` runs against a real kube-apiserver (KUBEBUILDER_ASSETS), one preceded
by ``<!-- docs-test: pools -->`` with kube-controller-manager beside it. The
``dra-metadata`` commands of the pages run on the sample tree, but those that need a cluster.
The Python API reference has an entry, and the built site an anchor, for every public name;
the command reference lists every subcommand and option of the parser.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import doctest
import importlib
import importlib.util
import inspect
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType

import pytest

import kube_harness
from helpers import REPO
from kube_pools_harness import four_pools

DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
PUBLIC_MODULES = (
    "dra_metadata",
    "dra_metadata.writer",
    "dra_metadata.kube",
    "dra_metadata.podresources",
    "dra_metadata.testing",
    "dra_metadata.strategies",
)
_MARKER = re.compile(r"<!-- docs-test: (\w+) -->")
_FENCE = re.compile(r"^```(\w*)")


@dataclass(frozen=True)
class Block:
    """A fenced code block of a page."""

    path: Path
    line: int
    """The line of its opening fence (1-based)."""
    language: str
    code: str
    marker: str | None
    """What the ``<!-- docs-test: ... -->`` comment right before it says, if any."""

    @property
    def name(self) -> str:
        where = self.path.relative_to(REPO) if self.path.is_relative_to(REPO) else self.path
        return f"{where}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a page, in order."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        end = lines.index("```", index + 1)
        previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
        marker = _MARKER.fullmatch(previous.strip())
        found.append(
            Block(
                path,
                index + 1,
                fence.group(1),
                "\n".join(lines[index + 1 : end]) + "\n",
                marker.group(1) if marker else None,
            )
        )
        index = end + 1
    return found


def _python_pages() -> list[Path]:
    return [
        page
        for page in [REPO / "README.md", *PAGES]
        if any(block.language == "python" and block.marker is None for block in blocks(page))
    ]


def _marked(marker: str) -> list[Block]:
    return [
        block
        for page in [REPO / "README.md", *PAGES]
        for block in blocks(page)
        if block.language == "python" and block.marker == marker
    ]


@pytest.fixture
def sample_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of examples/tree as the root, and a scratch directory as the working directory."""
    root = tmp_path / "tree"
    shutil.copytree(REPO / "examples" / "tree", root)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("DRA_METADATA_ROOT", str(root))
    monkeypatch.chdir(work)
    return root


_ASYNC_NODES = (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith)


def uses_asyncio(block: Block) -> bool:
    """Whether the example is asyncio code (imports asyncio, awaits, defines a coroutine)."""
    for node in ast.walk(ast.parse(block.code)):
        if isinstance(node, _ASYNC_NODES):
            return True
        if isinstance(node, ast.Import) and any(a.name == "asyncio" for a in node.names):
            return True
    return False


def run_as_a_file(block: Block) -> str:
    """What an asyncio example prints, run as ``python example.py`` in the working directory
    with this environment: no event loop around it, no namespace of the examples before it."""
    with tempfile.TemporaryDirectory(prefix="dra-metadata-docs-") as scratch:
        script = Path(scratch) / "example.py"
        script.write_text(block.code, encoding="utf-8")
        result = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
    assert result.returncode == 0, f"{block.name} fails as a file:\n{result.stderr[-3000:]}"
    return result.stdout


def run_examples(page_blocks: list[Block], namespace: dict[str, object]) -> None:
    """Run each python block in order in one namespace (an asyncio one as a file of its own);
    check a text block that follows one."""
    for index, block in enumerate(page_blocks):
        if block.language != "python" or block.marker is not None:
            continue
        if uses_asyncio(block):
            printed = run_as_a_file(block)
        else:
            code = compile(block.code, block.name, "exec")
            output = io.StringIO()
            with contextlib.redirect_stdout(output):
                exec(code, namespace)  # noqa: S102 - the page's own example
            printed = output.getvalue()
        following = page_blocks[index + 1] if index + 1 < len(page_blocks) else None
        if following is not None and following.language == "text":
            assert printed == following.code, f"{block.name} prints otherwise"


@pytest.mark.parametrize("page", _python_pages(), ids=lambda page: str(page.relative_to(REPO)))
def test_python_examples_run(page: Path, sample_tree: Path) -> None:
    run_examples(blocks(page), {"__name__": "__docs__"})


def test_a_broken_example_fails(tmp_path: Path, sample_tree: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint(1)\n```\n\n```text\n2\n```\n\n"
        '```python\nimport dra_metadata\ndra_metadata.read_claim_metadata("no-such", "gpu")\n```\n'
    )
    first, text, second = blocks(page)
    with pytest.raises(AssertionError, match="prints otherwise"):
        run_examples([first, text], {})
    with pytest.raises(FileNotFoundError, match="no-such"):
        run_examples([second], {})


def test_an_asyncio_example_runs_as_pasted_into_a_file(tmp_path: Path, sample_tree: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nimport asyncio\n\n\nasync def main() -> None:\n    print(1)\n\n\n"
        "asyncio.run(main())\n```\n\n```text\n1\n```\n\n"
        "```python\nimport asyncio\n\nawait asyncio.sleep(0)\n```\n\n"
        "```python\nimport dra_metadata\n```\n\n"
        "```python\nasync def main() -> None:\n    print(dra_metadata.__name__)\n\n\n"
        "__import__('asyncio').run(main())\n```\n"
    )
    runs, text, top_level_await, imports, needs_the_import = blocks(page)
    run_examples([runs, text], {})
    with pytest.raises(AssertionError, match="'await' outside function"):
        run_examples([top_level_await], {})
    with pytest.raises(AssertionError, match="name 'dra_metadata' is not defined"):
        run_examples([imports, needs_the_import], {})  # a file of its own: no earlier imports
    with pytest.raises(SyntaxError, match="'await' outside function"):
        compile(top_level_await.code, top_level_await.name, "exec")


_WALL_CLOCK_FREE_PROFILE = """\
from hypothesis import HealthCheck, settings

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")
"""


@pytest.mark.parametrize("block", _marked("pytest"), ids=lambda block: block.name)
def test_pytest_examples_pass(block: Block, tmp_path: Path) -> None:
    module = tmp_path / "test_example.py"
    module.write_text(block.code, encoding="utf-8")
    # Run as the suite's own tests are, without Hypothesis' two wall-clock checks, which a
    # busy machine fails for any code (tests/conftest.py says why); what the strategies cost is
    # checked on the CPU clock by models/test_strategies.py. An example's own profile wins.
    (tmp_path / "conftest.py").write_text(_WALL_CLOCK_FREE_PROFILE, encoding="utf-8")
    tests = len(re.findall(r"^def test_", block.code, flags=re.MULTILINE))
    assert tests
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"{tests} passed" in result.stdout


@pytest.mark.parametrize("block", _marked("kube"), ids=lambda block: block.name)
def test_kube_examples_run(
    block: Block, sample_tree: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kube_harness.assets() is None:
        pytest.skip(kube_harness.SKIP_REASON)
    server = request.getfixturevalue("server")
    namespace = request.getfixturevalue("namespace")
    claim = kube_harness.allocated_claim(server, namespace, "rdma-nics", "nic-0")
    server.patch_status(claim, kube_harness.network_status("nic-0"))
    kube_harness.template_pod(server, namespace)
    kube_harness.report_unhealthy_gpu(server, namespace)
    monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(sample_tree.parent / "config")))
    monkeypatch.setenv("POD_NAMESPACE", namespace)
    monkeypatch.setenv("POD_NAME", "trainer-0")
    run_examples([block.__class__(**{**vars(block), "marker": None})], {"__name__": "__docs__"})


@pytest.mark.parametrize("block", _marked("pools"), ids=lambda block: block.name)
def test_pool_status_examples_run(
    block: Block, sample_tree: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against kube-controller-manager too: the pools of the guide's table, then its example."""
    if kube_harness.assets() is None:
        pytest.skip(kube_harness.SKIP_REASON)
    server = request.getfixturevalue("server")
    request.getfixturevalue("controller")
    slices = server.request("GET", "/apis/resource.k8s.io/v1/resourceslices")["items"]
    if not any(item["spec"]["driver"] == "gpu.example.com" for item in slices):
        # Once per server: the slices are cluster-scoped, shared by the page's examples.
        four_pools(server, request.getfixturevalue("namespace"), "gpu.example.com")
    monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(sample_tree.parent / "config")))
    page = blocks(block.path)
    following = page[page.index(block) + 1 :][:1]  # the text block of what it prints
    assert [text.language for text in following] == ["text"], block.name
    run_examples([replace(block, marker=None), *following], {"__name__": "__docs__"})


def test_every_marker_is_known() -> None:
    """A misspelt marker would leave its example neither run with the others nor on its own."""
    markers = {block.marker for page in [REPO / "README.md", *PAGES] for block in blocks(page)}
    assert markers <= {None, "pytest", "kube", "pools", "podresources"}


def _docstring_examples() -> list[doctest.DocTest]:
    """The examples (``>>>``) of every public name's docstring, methods included."""
    import dra_metadata  # noqa: PLC0415

    finder = doctest.DocTestFinder(exclude_empty=True)
    seen: set[int] = set()
    tests: list[doctest.DocTest] = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if not (inspect.isclass(value) or inspect.isroutine(value)) or id(value) in seen:
                continue
            seen.add(id(value))
            globs = {"dra_metadata": dra_metadata, "asyncio": asyncio}
            found = finder.find(value, f"{module_name}.{name}", module=False, globs=globs)
            tests += [test for test in found if test.examples]
    return sorted(tests, key=lambda test: test.name)


def test_docstring_examples_run_on_the_sample_tree(sample_tree: Path) -> None:
    tests = _docstring_examples()
    assert len(tests) >= 20
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    output = io.StringIO()
    for test in tests:
        runner.run(test, out=output.write)
    assert runner.summarize(verbose=False).failed == 0, output.getvalue()


# The commands of the pages ---------------------------------------------------------------------

_COMMAND = re.compile(r"(?:^|[\s$(])dra-metadata\s")
_NEEDS_A_CLUSTER = re.compile(r"--source api|dra-metadata (?:status|health|pools|pod-resources)\b")


def _commands() -> list[tuple[str, str]]:
    found = []
    for page in [REPO / "README.md", *PAGES]:
        for block in blocks(page):
            if block.language != "sh":
                continue
            logical = block.code.replace("\\\n", " ").splitlines()
            for offset, line in enumerate(logical, start=1):
                if _COMMAND.search(line):
                    found.append((f"{block.name}+{offset}", line))
    return found


@pytest.mark.parametrize(("where", "command"), _commands(), ids=[w for w, _ in _commands()])
def test_commands_run_on_the_sample_tree(where: str, command: str) -> None:
    if _NEEDS_A_CLUSTER.search(command):
        pytest.skip(f"{where} needs a Kubernetes API server: {command}")
    bin_directory = Path(sys.executable).parent
    environment = {
        **os.environ,
        "DRA_METADATA_ROOT": "examples/tree",
        "PATH": f"{bin_directory}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    result = subprocess.run(  # noqa: S602 - the page's command, as a user types it
        command,
        shell=True,
        executable=shutil.which("bash") or "/bin/sh",
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, f"{where}: {command}\n{result.stderr}"


def test_the_commands_are_found() -> None:
    commands = [command for _, command in _commands()]
    for subcommand in ("show", "wait", "exec", "env", "ls", "path", "validate"):
        assert any(f"dra-metadata {subcommand} " in f"{c} " for c in commands), subcommand


# The references --------------------------------------------------------------------------------


def _reference_entries() -> set[str]:
    entries: set[str] = set()
    for page in (DOCS / "reference" / "python").glob("*.md"):
        entries |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(), flags=re.MULTILINE))
    return entries


def _public_names() -> set[str]:
    names = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names |= {f"{module_name}.{name}" for name in module.__all__}
    return names


def test_the_api_reference_has_an_entry_for_every_public_name() -> None:
    assert _reference_entries() == _public_names()


def _load_tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _options(parser: argparse.ArgumentParser) -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        yield from action.option_strings or [str(action.metavar or action.dest)]


def test_the_command_reference_lists_every_subcommand_and_option() -> None:
    from dra_metadata.cli import build_parser  # noqa: PLC0415

    reference = _load_tool("cli_reference")
    text = reference.markdown()
    parser = build_parser()
    commands = reference.subcommands(parser)
    assert set(commands) >= {"show", "wait", "exec", "env", "validate", "ls", "path"}
    for option in _options(parser):
        assert f"`{option}" in text or f", {option}" in text, option
    for name, subparser in commands.items():
        section = text.split(f"## `dra-metadata {name}` {{#{name}}}", 1)[1].split("\n## ", 1)[0]
        for option in _options(subparser):
            assert f"`{option}" in section or f", {option}" in section, (name, option)
    page = (DOCS / "reference" / "cli.md").read_text()
    assert page.count(reference.MARKER) == 1
    assert "tools/mkdocs_hooks.py" in (REPO / "mkdocs.yml").read_text()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `mkdocs build --strict` builds it (the docs extra, in the dev extra)."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (extra docs, in the dev extra): nox -s docs builds it")
    directory = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(directory)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-5000:]
    return directory


def test_the_site_has_an_anchor_for_every_public_name(site: Path) -> None:
    anchors: set[str] = set()
    for page in (site / "reference" / "python").rglob("index.html"):
        anchors |= set(re.findall(r'id="(dra_metadata[\w.]*)"', page.read_text()))
    assert _public_names() <= anchors, sorted(_public_names() - anchors)


def test_the_site_documents_every_subcommand(site: Path) -> None:
    from dra_metadata.cli import build_parser  # noqa: PLC0415

    page = (site / "reference" / "cli" / "index.html").read_text()
    for name in _load_tool("cli_reference").subcommands(build_parser()):
        assert f'id="{name}"' in page, name


# Pages that reference tables of the code -------------------------------------------------------


def test_every_exit_code_is_documented() -> None:
    from dra_metadata.cli import _exit  # noqa: PLC0415

    page = (DOCS / "reference" / "exit-codes.md").read_text()
    rows = " ".join(re.findall(r"^\| ([\d, ]+) \|", page, flags=re.MULTILINE))
    documented = {int(code) for code in re.findall(r"\d+", rows)}
    codes = {
        value
        for name, value in vars(_exit).items()
        if name.startswith("EXIT_") and isinstance(value, int)
    }
    assert documented == codes


def test_every_environment_variable_is_documented() -> None:
    read = set()
    for path in [*(REPO / "dra_metadata").rglob("*.py"), REPO / "hatch_build.py"]:
        text = path.read_text(encoding="utf-8")
        read |= set(re.findall(r'^\w*VARIABLE = "(\w+)"', text, flags=re.MULTILINE))
        read |= set(re.findall(r'^\w*BUILD\w* = "(\w+)"', text, flags=re.MULTILINE))
        read |= set(re.findall(r'environ\.get\("(\w+)"', text))
    assert {"DRA_METADATA_ROOT", "DRA_METADATA_BUILD_PURE", "POD_NAME"} <= read
    page = (DOCS / "reference" / "environment.md").read_text()
    documented = set(re.findall(r"^\| `(\w+)` \|", page, flags=re.MULTILINE))
    assert read <= documented, sorted(read - documented)


def test_the_readme_is_a_front_page() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links
    for link in links:
        assert (REPO / link).is_file(), link


def test_the_readme_pod_is_the_example_manifest() -> None:
    readme = (REPO / "README.md").read_text()
    (snippet,) = re.findall(r"```yaml\n(.*?)```", readme, flags=re.DOTALL)
    assert snippet in (REPO / "examples" / "kubernetes" / "ml-gpu-pod.yaml").read_text()


def test_every_python_example_compiles() -> None:
    """Also those that run only against a cluster or in a subprocess."""
    examples = [
        block
        for page in [REPO / "README.md", *PAGES]
        for block in blocks(page)
        if block.language == "python"
    ]
    assert len(examples) >= 15
    for block in examples:
        compile(block.code, block.name, "exec")  # no await outside a coroutine


def test_the_documented_show_document_has_the_keys_of_the_real_one() -> None:
    page = (DOCS / "reference" / "cli.md").read_text()
    documents = [
        json.loads(block.code)
        for block in blocks(DOCS / "reference" / "cli.md")
        if block.language == "json"
    ]
    assert len(documents) == 3
    documented = documents[0]
    result = subprocess.run(
        [sys.executable, "-m", "dra_metadata", "show", "training-gpus", "gpu", "-o", "json"],
        cwd=REPO,
        env={**os.environ, "DRA_METADATA_ROOT": "examples/tree"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    real = json.loads(result.stdout)
    assert documented.keys() == real.keys()
    assert documented["files"][0].keys() == real["files"][0].keys()
    assert documented["requests"][0].keys() == real["requests"][0].keys()
    device = documented["requests"][0]["devices"][0]
    assert device.keys() == real["requests"][0]["devices"][0].keys()
    assert "`show -o json` and `wait -o json` print one stable document" in page
