from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
REPO = TESTS.parent
UPSTREAM = TESTS / "data" / "upstream"
SHARED_UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream"


@pytest.fixture
def head_fixture() -> bytes:
    return (UPSTREAM / "HEAD" / "metadata.json").read_bytes()


@pytest.fixture
def v136_fixture() -> bytes:
    return (UPSTREAM / "v1.36.0" / "metadata.json").read_bytes()


@pytest.fixture(autouse=True)
def _no_root_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests name their root explicitly unless they set DRA_METADATA_ROOT themselves."""
    monkeypatch.delenv("DRA_METADATA_ROOT", raising=False)


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def can_unshare() -> str | None:
    """None when this process may make a private mount namespace (for real bind mounts), else
    why not: the reason of a skip."""
    if not running_as_root():
        return "needs root for a private mount namespace"
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"unshare -m is not allowed here: {probe.stderr.decode().strip()}"
    return None


SAMPLE = REPO / "examples" / "tree"
COMMAND = str(Path(sys.executable).parent / "dra-metadata")


def run_command(
    *arguments: str | bytes, root: Path | None = SAMPLE, timeout: float = 60, **options: object
) -> subprocess.CompletedProcess[str]:
    """The installed dra-metadata command in a subprocess; ``--root`` first unless None."""
    prefix = ["--root", str(root)] if root is not None else []
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [COMMAND, *prefix, *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **options,
    )
