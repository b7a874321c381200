"""Without the kube extra, every subcommand that reads the Kubernetes API ends at once with
exit 7 ("a part of the install is missing"), naming the extra, the missing module and the pip
command that installs it, for a checkout as for a wheel.

Run in a real virtual environment that has the package's own dependencies and not the extra:
they are installed there from wheels packed from this environment's distributions (offline),
and the package is this checkout, on the path as an editable install puts it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from dra_metadata.cli._install import EXTRA_MODULES, install_advice

from helpers import REPO, SAMPLE

_NOT_PASSED = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DRA_METADATA_ROOT", "KUBECONFIG"}


def _needed(name: str, extra: str = "") -> set[str]:
    """The distributions ``name`` needs here (with ``extra``'s), recursively."""
    needed: set[str] = set()
    pending = [(name, extra)]
    while pending:
        distribution, wanted = pending.pop()
        for text in importlib.metadata.requires(distribution) or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": wanted}):
                found = importlib.metadata.distribution(requirement.name).name
                if found not in needed and found != "dra-metadata":
                    needed.add(found)
                    pending.append((found, ""))
    return needed


def _pack(name: str, wheelhouse: Path) -> None:
    """A wheel of an installed distribution: its files as RECORD lists them, its first tag."""
    distribution = importlib.metadata.distribution(name)
    tag = next(
        line.partition(":")[2].strip()
        for line in (distribution.read_text("WHEEL") or "").splitlines()
        if line.startswith("Tag:")
    )
    project = re.sub(r"[-_.]+", "_", distribution.name).lower()
    site = Path(str(distribution.locate_file("")))
    with zipfile.ZipFile(wheelhouse / f"{project}-{distribution.version}-{tag}.whl", "w") as wheel:
        for file in distribution.files or []:
            if file.parts[0] != ".." and "__pycache__" not in file.parts:
                wheel.write(site / file, file.as_posix())


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of a virtual environment with dra-metadata's dependencies, not kube's."""
    work = tmp_path_factory.mktemp("without-kube")
    wheelhouse = work / "wheelhouse"
    wheelhouse.mkdir()
    for dependency in _needed("dra-metadata"):
        _pack(dependency, wheelhouse)
    environment = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", environment], check=True)
    interpreter = environment / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", interpreter, "install", "--quiet"]
        + ["--no-index", "--find-links", wheelhouse]
        + [str(wheel) for wheel in wheelhouse.iterdir()],
        check=True,
        capture_output=True,
    )
    site = subprocess.run(
        [interpreter, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "dra_metadata_checkout.pth").write_text(f"{REPO}\n")
    return interpreter


def _run(python: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key not in _NOT_PASSED}
    return subprocess.run(
        [python, "-m", "dra_metadata", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=python.parent.parent,
        env=environment,
    )


def test_the_environment_has_no_kube_extra_and_reads_files(python: Path) -> None:
    probe = subprocess.run(
        [
            python,
            "-c",
            (
                "import dra_metadata, importlib.util as u; print(dra_metadata.__file__, "
                "u.find_spec('lightkube'), u.find_spec('httpx2'))"
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout == f"{REPO / 'dra_metadata' / '__init__.py'} None None\n"
    shown = _run(python, "--root", str(SAMPLE), "show", "training-gpus", "gpu", "-o", "json")
    assert shown.returncode == 0, shown.stderr


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["status", "x"], "status reads the Kubernetes API"),
        (["health"], "health reads the Kubernetes API"),
        (["pools", "gpu.example.com"], "pools reads the Kubernetes API"),
        (["wait", "c", "r", "--source", "api"], "wait --source api reads the Kubernetes API"),
        (
            ["exec", "c", "r", "--source", "api", "--timeout", "5s", "--", "true"],
            "exec --source api reads the Kubernetes API",
        ),
        (
            ["--root", str(SAMPLE), "wait", "c", "r", "--source", "auto"],
            (
                f"wait: --source auto chose the Kubernetes API ({SAMPLE}/resourceclaims/c/r "
                "does not exist)"
            ),
        ),
    ],
)
def test_an_api_subcommand_says_which_extra_to_install(
    python: Path, arguments: list[str], reason: str
) -> None:
    result = _run(python, *arguments)
    assert result.returncode == 7, result.stderr
    pip = f"{python} -m pip install"
    assert result.stderr == (
        f"dra-metadata: {reason}: this needs the kube extra of dra-metadata, which is not "
        f"installed here (no module lightkube); run: {pip} 'dra-metadata[kube]' (in a checkout "
        f"of the sources: {pip} -e '.[kube]')\n"
    )
    assert result.stdout == ""


def test_the_advice_follows_where_the_install_comes_from(tmp_path: Path) -> None:
    pip = f"{sys.executable} -m pip install"
    checkout = json.dumps({"url": tmp_path.as_uri(), "dir_info": {"editable": True}})
    assert install_advice("kube", checkout) == (
        f"in the checkout it is installed from, run: cd {tmp_path} && {pip} -e '.[kube]'"
    )
    wheel = tmp_path / "dra_metadata-1.0-cp310-abi3-linux_x86_64.whl"
    wheel.touch()
    from_wheel = json.dumps({"url": wheel.as_uri(), "archive_info": {}})
    assert install_advice("kube", from_wheel) == f"run: {pip} '{wheel}[kube]'"
    anywhere = f"run: {pip} 'dra-metadata[kube]' (in a checkout of the sources: {pip} -e '.[kube]')"
    wheel.unlink()  # gone since: the name, from an index
    assert install_advice("kube", from_wheel) == anywhere
    assert install_advice("kube", json.dumps({"url": "https://example.com/d.whl"})) == anywhere
    assert install_advice("kube", "not json") == anywhere
    assert install_advice("kube", None) == anywhere


def test_the_modules_checked_are_those_the_extra_installs() -> None:
    """Against the installed metadata, which pyproject.toml's extras are written into."""
    for extra, modules in EXTRA_MODULES.items():
        installed = _needed("dra-metadata", extra) - _needed("dra-metadata")
        named = {
            importlib.metadata.distribution(Requirement(text).name).name
            for text in importlib.metadata.requires("dra-metadata") or []
            if Requirement(text).marker is not None
            and Requirement(text).marker.evaluate({"extra": extra})  # type: ignore[union-attr]
            and not Requirement(text).marker.evaluate({"extra": ""})  # type: ignore[union-attr]
        }
        assert named
        assert named <= installed
        tops = {module.split(".")[0] for module in modules}
        # Which of them installs one of those top-level names, read from its files (3.10's
        # packages_distributions knows only top_level.txt, which newer wheels leave out).
        provided = {
            name
            for name in named
            if tops
            & {
                str(path).split("/")[0].removesuffix(".py")
                for path in importlib.metadata.distribution(name).files or []
            }
        }
        assert named == provided
        assert all(importlib.util.find_spec(module) for module in modules)
