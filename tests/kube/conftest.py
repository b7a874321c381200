"""Fixtures of the Kubernetes API tests: one kube-apiserver and etcd per worker session, a
namespace per test, kube-controller-manager for pool status (see kube_harness.py and
kube_pools_harness.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import kube_harness
from kube_harness import ApiServer
from kube_pools_harness import ControllerManager

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
