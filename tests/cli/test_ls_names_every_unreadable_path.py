"""``ls`` as a user who cannot read some claims' directories: every row and the closing line
name the paths that could not be read, one or several (run as user nobody through setpriv when
this runs as root)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dra_metadata.testing import MetadataTree

from helpers import COMMAND, running_as_root

AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
ADVICE = (
    "for the user this runs as (uid 65534, gid 65534): the pod's securityContext (runAsUser, "
    "fsGroup) or the driver's file mode"
)


def _as_nobody(*arguments: str) -> subprocess.CompletedProcess[str]:
    if not running_as_root():
        pytest.skip("needs root, to run the command as user nobody (setpriv)")
    if shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv (util-linux) is not installed to drop it")
    probe = subprocess.run(
        [*AS_NOBODY, COMMAND, "--version"], capture_output=True, text=True, check=False, cwd="/"
    )
    if probe.returncode != 0:  # an interpreter nobody may not run (its library under /root)
        pytest.skip(f"the command cannot run as user nobody here: {probe.stderr.strip()}")
    return subprocess.run(
        [*AS_NOBODY, COMMAND, *arguments],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
        timeout=60,
    )


@pytest.fixture
def root() -> Iterator[Path]:
    """A tree anyone can read (tmp_path is root's alone), but for what a test locks."""
    directory = Path(tempfile.mkdtemp(prefix="dra-metadata-ls-locked-"))
    directory.chmod(0o755)
    tree = MetadataTree(directory)
    tree.add_claim("open", "r", "d.example.com", ["dev"])
    tree.add_claim("sealed", "r", "d.example.com", ["dev"])
    tree.add_template_claim("shut", "r", "d.example.com", ["dev"])
    try:
        yield directory
    finally:
        for path in [directory, *directory.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(directory)


def test_one_locked_claim_is_named(root: Path) -> None:
    sealed = root / "resourceclaims" / "sealed"
    sealed.chmod(0)
    result = _as_nobody("--root", str(root), "ls", "-o", "table")
    assert result.returncode == 6, result.stderr
    (row,) = [line for line in result.stdout.splitlines() if " sealed " in line]
    assert row.endswith(f"  error: {sealed}: list claims: Permission denied")
    assert result.stderr == (
        f"dra-metadata: 1 path could not be read ({sealed}); check the permissions of it and "
        f"of its directories {ADVICE}\n"
    )


def test_two_locked_claims_are_both_named(root: Path) -> None:
    sealed = root / "resourceclaims" / "sealed"
    shut = root / "resourceclaimtemplates" / "shut"
    sealed.chmod(0)
    shut.chmod(0)
    result = _as_nobody("--root", str(root), "ls", "-o", "table")
    assert result.returncode == 6, result.stderr
    assert f"  error: {sealed}: list claims: Permission denied\n" in result.stdout
    assert f"  error: {shut}: list claims: Permission denied\n" in result.stdout
    assert result.stderr == (
        f"dra-metadata: 2 paths could not be read ({sealed}, {shut}); check the permissions of "
        f"them and of their directories {ADVICE}\n"
    )
    listed = json.loads(_as_nobody("--root", str(root), "ls", "-o", "json").stdout)
    assert [(entry["path"], entry["status"]) for entry in listed if entry["error"]] == [
        (str(sealed), "unreadable"),
        (str(shut), "unreadable"),
    ]


def test_a_readable_file_row_still_names_its_file_by_its_columns(root: Path) -> None:
    locked = root / "resourceclaims" / "sealed" / "r" / "d.example.com-metadata.json"
    locked.chmod(0)
    result = _as_nobody("--root", str(root), "ls", "-o", "table")
    assert result.returncode == 6, result.stderr
    (row,) = [line for line in result.stdout.splitlines() if " sealed " in line]
    assert row.split()[:4] == ["claim", "sealed", "r", "d.example.com"]
    assert row.endswith("error: open metadata file: Permission denied")
    assert result.stderr.startswith(f"dra-metadata: 1 path could not be read ({locked}); ")
