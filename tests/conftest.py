"""What every stage's tests share: the Hypothesis profiles (the suite's is loaded here), the
number of xdist workers, a clean DRA_METADATA_ROOT, and the API server fixtures (tests/kube and
tests/docs use them). Fixtures used by one stage only are in that folder's conftest.py; what
tests import is in helpers.py (no test imports a conftest.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

import kube_harness
import node_harness
from kube_harness import ApiServer
from kube_pools_harness import ControllerManager
from node_harness import Node

# The suite's profile: Hypothesis' defaults (the same example counts and database) but for its
# two wall-clock checks, HealthCheck.too_slow and the deadline. too_slow compares the time of a
# test's first draws with one second, the deadline each example's run with 200 ms. On a machine
# whose cores other work keeps busy, a worker gets a fraction of a core, and both fail for code
# that is fine: at a load of 12-16 on two cores, the one-off scan of the local modules for
# constants that Hypothesis charges to the draw that triggers it took 1.1 s alone, and with four
# to six busy loops beside the tests, examples of test_roundtrip.py that take a few ms took
# 515 ms (DeadlineExceeded, then FlakyFailure). They measure the machine: speed is measured by
# benchmarks/, never by timed assertions (the tests that had deadline=None said so one by one).
# What the strategies cost is checked with every health check and the deadline, on the CPU
# clock, by models/test_strategies.py (docs/guides/testing.md says what holds).
# --hypothesis-profile chooses another profile.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

# Mutation testing (tools/mutation_score.py, --hypothesis-profile=mutation): the same examples in
# every run, no example database, and pytest.main run several times in one process; too_slow as
# in the suite's profile (a health check failing on a busy machine would count a mutant killed).
settings.register_profile(
    "mutation",
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.differing_executors, HealthCheck.too_slow],
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


@pytest.fixture(autouse=True)
def _no_root_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests name their root explicitly unless they set DRA_METADATA_ROOT themselves."""
    monkeypatch.delenv("DRA_METADATA_ROOT", raising=False)


# A kube-apiserver and etcd for the tests of the Kubernetes API (see kube_harness.py), used by
# tests/kube and by the examples of the docs that need a server (tests/docs) ------------------


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


# A real single-node cluster (see node_harness.py) for tests/node and the real-kubelet tests of
# tests/podresources ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    """The node, started once per session; its processes' logs are kept in ``node-logs*``.

    The node is machine-wide (one bridge, one state directory, a lock): one process owns it, so
    the tests that use it run with ``-n 0`` (or one xdist worker). Under several workers (the
    suite's ``-n auto``) they are skipped saying so: each worker would start its own node after
    the previous one's whole session ended, its tests waiting on the others' unrelated tests.
    """
    folder = node_harness.assets()
    if folder is None:
        pytest.skip(node_harness.missing_assets())
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        pytest.skip(
            "the real node runs in one process: run these tests with -n 0 "
            f"({node_harness.ASSETS_VARIABLE}=... python -m pytest tests/node -n 0)"
        )
    with node_harness.running(folder, tmp_path_factory.mktemp("node-logs")) as running:
        yield running
