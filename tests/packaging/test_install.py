"""The package as a user installs it: a wheel built from the source tree, installed into a fresh
virtual environment outside the checkout, where nothing can come from the source tree.

Offline: the wheel is built with the hatchling of the test environment, and the dependencies
are installed from wheels packed from the distributions this environment already has.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import dra_metadata

from helpers import REPO, compiler_and_headers

SAMPLE = REPO / "examples" / "tree"
_THIS_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
_NOT_PASSED = {
    *("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DRA_METADATA_ROOT"),
    "DRA_METADATA_PURE_PYTHON",  # the installed package decodes as a user's does
}
_COMPILED_MODULE = "dra_metadata/_decoding/_speedups.abi3.so"
_PLATFORM = sysconfig.get_platform().replace("-", "_").replace(".", "_")
_ABI3_TAG = f"cp310-abi3-{_PLATFORM}"
"""One wheel for every supported CPython: the limited API of 3.10 (Py_LIMITED_API)."""
_OTHER_PYTHONS = [minor for minor in ("3.10", "3.11", "3.12", "3.13") if minor != _THIS_PYTHON]


def _environment(**added: str) -> dict[str, str]:
    """This process's environment without what would point a command at the checkout."""
    return {
        **{key: value for key, value in os.environ.items() if key not in _NOT_PASSED},
        **added,
    }


def _run(
    *command: str | Path, cwd: Path, added: dict[str, str] | None = None, **options: object
) -> str:
    """The output of ``command``, run with ``added`` to the environment; it must succeed."""
    result = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=_environment(**(added or {})),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        **options,  # type: ignore[call-overload]
    )
    assert result.returncode == 0, f"{command}: {result.stderr[-3000:]}"
    return str(result.stdout)


def _dependencies(name: str) -> set[str]:
    """The distributions ``name`` needs here (markers evaluated, no extras), recursively."""
    needed: set[str] = set()
    pending = [name]
    while pending:
        for text in importlib.metadata.requires(pending.pop()) or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                dependency = importlib.metadata.distribution(requirement.name).name
                if dependency not in needed:
                    needed.add(dependency)
                    pending.append(dependency)
    return needed


def _pack_installed(name: str, wheelhouse: Path) -> None:
    """A wheel of an installed distribution: its files as RECORD lists them, its first tag."""
    distribution = importlib.metadata.distribution(name)
    tags = [
        line.partition(":")[2].strip()
        for line in (distribution.read_text("WHEEL") or "").splitlines()
        if line.startswith("Tag:")
    ]
    project = re.sub(r"[-_.]+", "_", distribution.name).lower()
    wheel = wheelhouse / f"{project}-{distribution.version}-{tags[0]}.whl"
    site = Path(str(distribution.locate_file("")))
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in distribution.files or []:
            if file.parts[0] != ".." and "__pycache__" not in file.parts:
                archive.write(site / file, file.as_posix())


def _build_wheel(directory: Path, **environment: str) -> tuple[Path, str]:
    """A wheel of the source tree, built with ``environment`` added; and pip's verbose output
    (both streams), which holds what the build hook said."""
    command = [
        *(sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps"),
        *("--no-build-isolation", "--no-index", "--wheel-dir", str(directory), str(REPO)),
    ]
    result = subprocess.run(
        command,
        cwd=directory.parent,
        env=_environment(**environment),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"{command}: {result.stdout[-3000:]}"
    (wheel,) = directory.glob("dra_metadata-*.whl")
    return wheel, result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built, _ = _build_wheel(tmp_path_factory.mktemp("build") / "dist")
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    work = tmp_path_factory.mktemp("install")
    wheelhouse = work / "wheelhouse"
    wheelhouse.mkdir()
    for dependency in _dependencies("dra-metadata"):
        _pack_installed(dependency, wheelhouse)
    environment = work / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", environment, cwd=work)
    _run(
        sys.executable,
        *("-m", "pip", "--python", environment / "bin" / "python", "install", "--quiet"),
        *("--no-index", "--find-links", wheelhouse, wheel),
        cwd=work,
    )
    return environment


def test_the_command_prints_its_version(venv: Path) -> None:
    output = _run(venv / "bin" / "dra-metadata", "--version", cwd=venv)
    assert output == f"dra-metadata {importlib.metadata.version('dra-metadata')}\n"


def test_the_command_reads_the_sample_tree(venv: Path) -> None:
    output = _run(
        venv / "bin" / "dra-metadata",
        *("--root", SAMPLE, "show", "training-gpus", "gpu", "-o", "json"),
        cwd=venv,
    )
    expected = dra_metadata.read_claim_metadata("training-gpus", "gpu", root=SAMPLE)
    assert json.loads(output) == expected.to_document()


def test_the_library_comes_from_the_virtual_environment(venv: Path) -> None:
    code = (
        "import json, sys, dra_metadata\n"
        "metadata = dra_metadata.read_template_metadata('accelerator', 'gpu', root=sys.argv[1])\n"
        "print(dra_metadata.__file__)\n"
        "print(json.dumps([metadata.to_wire(), dra_metadata.validate(metadata, profile='strict'),"
        " sorted(dra_metadata.json_schema())]))\n"
    )
    location, exported = _run(venv / "bin" / "python", "-c", code, SAMPLE, cwd=venv).splitlines()
    assert Path(location).is_relative_to(venv)
    assert not Path(location).is_relative_to(REPO)
    expected = dra_metadata.read_template_metadata("accelerator", "gpu", root=SAMPLE)
    wire, errors, schema_keys = json.loads(exported)
    assert wire == expected.to_wire()
    assert errors == []
    assert "$schema" in schema_keys


def test_the_documented_installs_use_the_source_tree_or_a_wheel() -> None:
    # `pip install dra-metadata` cannot work until the package is published.
    page = (REPO / "docs" / "getting-started.md").read_text()
    section = page[page.index("## Install") : page.index("## The first read")]
    readme = (REPO / "README.md").read_text()
    front = readme[readme.index("## Install") : readme.index("## Read your devices")]
    assert front.split("```sh\n", 1)[1].split("```")[0] in section  # the README's, word for word
    dockerfile = (REPO / "examples" / "kubernetes" / "Dockerfile.init").read_text()
    installed = [
        match.group(1)
        for text in (section, dockerfile)
        for match in re.finditer(
            r"pip install(?: --?[\w-]+)*\s+((?:\"[^\"]*\"|'[^']*'|[^\s`])+)", text
        )
    ]
    assert installed == [
        ".",
        "dist/dra_metadata-*.whl",
        "'.[kube]'",
        "'dist/dra_metadata-*.whl[kube]'",
        "'.[podresources]'",
        "'dist/dra_metadata-*.whl[podresources]'",
        '"$(echo /wheels/*.whl)[kube]"',
    ]


def test_the_wheel_holds_the_compiled_check_for_every_python(wheel: Path, venv: Path) -> None:
    cannot = compiler_and_headers()
    if cannot is not None:
        pytest.skip(f"{cannot}: the wheel is built without its compiled module")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        tags = archive.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
    assert _COMPILED_MODULE in names
    assert not [name for name in names if "_speedups.cpython" in name]
    assert not [name for name in names if name.endswith(".c")]
    assert "Root-Is-Purelib: false" in tags
    assert [line for line in tags.splitlines() if line.startswith("Tag:")] == [f"Tag: {_ABI3_TAG}"]
    assert wheel.name.endswith(f"-{_ABI3_TAG}.whl")
    code = "import dra_metadata._decoding._convert as convert; print(convert.COMPILED)"
    assert _run(venv / "bin" / "python", "-c", code, cwd=venv) == "True\n"


@pytest.mark.parametrize(
    ("environment", "said"),
    [
        pytest.param(
            {"CC": "false"},
            "the compiled attribute check was not built (false",
            id="the compiler fails",
        ),
        pytest.param(
            {"DRA_METADATA_BUILD_PURE": "1"},
            "DRA_METADATA_BUILD_PURE is set: building without the compiled module",
            id="asked for",
        ),
    ],
)
def test_a_wheel_without_the_compiled_check_is_pure_and_says_why(
    tmp_path: Path, environment: dict[str, str], said: str
) -> None:
    built, output = _build_wheel(tmp_path / "dist", **environment)
    assert said in output
    assert built.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(built) as archive:
        assert not [name for name in archive.namelist() if "_speedups" in name]


def test_the_dockerfile_builds_the_wheel_with_the_python_it_installs_it_into() -> None:
    # The image that installs the wheel runs the Python that built it (an abi3 wheel would
    # also serve a newer one).
    dockerfile = (REPO / "examples" / "kubernetes" / "Dockerfile.init").read_text()
    images = re.findall(r"^FROM python:(\S+)", dockerfile, flags=re.MULTILINE)
    assert images == ["3.12", "3.12-slim"], "the wheel stage needs a compiler: the full image"


def _decode_in(venv: Path, prelude: str, **environment: str) -> list[str]:
    """COMPILED, and the outcome of decoding each file of the sample tree, in the installed
    package."""
    script = (
        f"{prelude}\n"
        "import json, pathlib, sys\n"
        "import dra_metadata, dra_metadata._decoding._convert as convert\n"
        "print(convert.COMPILED)\n"
        "for path in sorted(pathlib.Path(sys.argv[1]).rglob('*.json')):\n"
        "    result = dra_metadata.decode_stream(path.read_bytes())\n"
        "    print(json.dumps(result.metadata.to_document(), sort_keys=True))\n"
    )
    return _run(
        venv / "bin" / "python", "-c", script, SAMPLE, cwd=venv, added=environment
    ).splitlines()


@pytest.mark.parametrize(
    ("prelude", "environment"),
    [
        pytest.param("", {"DRA_METADATA_PURE_PYTHON": "1"}, id="asked for Python"),
        pytest.param(
            "import sys; sys.modules['dra_metadata._decoding._speedups'] = None",
            {},
            id="built without it",
        ),
    ],
)
def test_without_the_compiled_check_the_installed_package_decodes_the_same(
    venv: Path, prelude: str, environment: dict[str, str]
) -> None:
    with_it = _decode_in(venv, "")
    without = _decode_in(venv, prelude, **environment)
    assert with_it[0] == str(compiler_and_headers() is None)
    assert without[0] == "False"
    assert len(without) > 1
    assert without[1:] == with_it[1:]


def _python(minor: str) -> Path | None:
    """The newest pyenv-installed CPython ``minor`` (as noxfile.py finds them), or None."""
    versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = [
        path / "bin" / f"python{minor}"
        for path in (versions.iterdir() if versions.is_dir() else [])
        if re.fullmatch(rf"{re.escape(minor)}\.\d+", path.name)
        and (path / "bin" / f"python{minor}").is_file()
    ]
    return max(found, key=lambda path: int(path.parent.parent.name.rsplit(".", 1)[1]), default=None)


@pytest.mark.one_interpreter
@pytest.mark.parametrize("minor", _OTHER_PYTHONS)
def test_the_wheel_built_here_serves_another_python(
    tmp_path: Path, wheel: Path, venv: Path, minor: str
) -> None:
    """The abi3 wheel built by this Python, installed into another CPython, imports its
    compiled module, decodes with it, and decodes as this Python's install does."""
    if compiler_and_headers() is not None:
        pytest.skip("the wheel is built without its compiled module here")
    python = _python(minor)
    if python is None:
        pytest.skip(f"no CPython {minor} installed with pyenv on this machine")
    environment = tmp_path / "venv"
    _run(python, "-m", "venv", "--without-pip", environment, cwd=tmp_path)
    installed = subprocess.run(  # this pip, for that Python; the dependencies from the index
        [
            *(sys.executable, "-m", "pip", "--python", str(environment / "bin" / "python")),
            *("install", "--quiet", str(wheel)),
        ],
        cwd=tmp_path,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if installed.returncode != 0 and re.search(
        r"No matching distribution|Could not find a version|connection|Network is unreachable",
        installed.stderr,
        flags=re.IGNORECASE,
    ):
        pytest.skip(
            f"pip cannot get the dependencies for Python {minor}: {installed.stderr[-300:]}"
        )
    assert installed.returncode == 0, installed.stderr[-3000:]
    code = "import dra_metadata._decoding._speedups as module; print(module.__file__)"
    location = _run(environment / "bin" / "python", "-c", code, cwd=tmp_path).strip()
    assert location.endswith("/dra_metadata/_decoding/_speedups.abi3.so")
    assert Path(location).is_relative_to(environment)
    there = _decode_in(environment, "")
    assert there[0] == "True"  # the compiled check is used there
    assert there == _decode_in(venv, "")
