from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import kube_harness
from kube_harness import ApiServer
from kube_pools_harness import ControllerManager

TESTS = Path(__file__).parent
REPO = TESTS.parent
UPSTREAM = TESTS / "data" / "upstream"
SHARED_UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream"

# Mutation testing (tools/mutation_score.py, --hypothesis-profile=mutation): the same examples in
# every run, no example database, and pytest.main run several times in one process.
settings.register_profile(
    "mutation",
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.differing_executors],
)


MOST_WORKERS = 6
"""Each worker starts its own kube-apiserver and etcd (and kube-controller-manager) when the
API tests run: more than a few would cost more than they save."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """What ``-n auto`` (pyproject.toml's addopts) starts: a worker more than the cores this
    process may run on, as most tests wait on subprocesses, files and sockets rather than
    compute (two workers on two cores kept them a third idle)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min((cores or 1) + 1, MOST_WORKERS)


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


def unprivileged() -> tuple[dict[str, Any], str]:
    """How to start this Python without the privilege to bypass file permissions.

    As user nobody where this Python can be run so; else as root without the capabilities
    that bypass permissions (setpriv), which is what matters for a mode-000 file.
    """
    if not running_as_root():
        return {}, "not root already"
    nobody: dict[str, Any] = {"user": 65534, "group": 65534, "extra_groups": []}
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "import dra_metadata"],
            capture_output=True,
            check=False,
            cwd="/",
            **nobody,
        )
    except PermissionError:
        probe = None
    if probe is not None and probe.returncode == 0:
        return nobody, "user nobody"
    if shutil.which("setpriv") is None:
        pytest.skip("this Python cannot run as nobody here, and setpriv is missing")
    dropped = "-dac_override,-dac_read_search,-fowner"
    return {
        "prefix": ("setpriv", f"--bounding-set={dropped}", "--inh-caps=-all")
    }, "root without DAC caps"


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


def run_python(code: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in the repository, with a bare environment and ``environment``."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", **environment},
        check=False,
        timeout=60,
    )


# A kube-apiserver and etcd for the tests of the Kubernetes API (see kube_harness.py) --------


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with kube_harness.running(tmp_path_factory.mktemp("kube")) as running:
        yield running


_namespaces = iter(range(1_000_000))


@pytest.fixture
def namespace(server: ApiServer) -> str:
    return server.namespace(f"test-{next(_namespaces)}")


# kube-controller-manager for the pool status tests (see kube_pools_harness.py) ---------------


@pytest.fixture(scope="session")
def _controller_manager(
    server: ApiServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControllerManager]:
    binary = kube_harness.controller_assets()
    if binary is None:
        pytest.skip(kube_harness.CONTROLLER_SKIP_REASON)
    manager = ControllerManager(binary, server, tmp_path_factory.mktemp("kcm"))
    try:
        manager.start()
        yield manager
    finally:
        manager.close()


@pytest.fixture
def controller(_controller_manager: ControllerManager) -> ControllerManager:
    """kube-controller-manager answering ResourcePoolStatusRequests (started again if a test
    stopped it)."""
    if not _controller_manager.running:
        _controller_manager.start()
    return _controller_manager


@pytest.fixture(scope="session")
def server_without_pool_status(
    server: ApiServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiServer]:
    """A second kube-apiserver (the same etcd, its own prefix) without resource.k8s.io/v1alpha3."""
    second = ApiServer(
        server.assets,
        tmp_path_factory.mktemp("kube-no-pool-status"),
        pool_status=False,
        etcd_prefix="/registry-without-pool-status",
    )
    try:
        second.start_beside(server)
        yield second
    finally:
        second.stop()
