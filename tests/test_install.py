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
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import dra_metadata

from conftest import REPO

SAMPLE = REPO / "examples" / "tree"


def _run(*command: str | Path, cwd: Path, **options: object) -> str:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DRA_METADATA_ROOT"}
    }
    result = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=environment,
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


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("install")
    _run(
        sys.executable,
        *("-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"),
        *("--wheel-dir", work / "dist", REPO),
        cwd=work,
    )
    (wheel,) = (work / "dist").glob("dra_metadata-*.whl")
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
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Install") : readme.index("## Quick start")]
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
        '"$(echo /wheels/*.whl)[kube]"',
    ]
