"""read_pool_status against a real kube-apiserver, etcd and kube-controller-manager.

Skipped without KUBEBUILDER_ASSETS; the tests that need the controller are skipped without a
kube-controller-manager binary there (see kube_harness.py, kube_pools_harness.py). Each test
uses drivers of its own: ResourceSlices and ResourcePoolStatusRequests are cluster-scoped.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.config.models import Cluster, User

from dra_metadata import InvalidNameError, KubeAPIError
from dra_metadata.kube import PoolStatus, aread_pool_status, read_pool_status
from dra_metadata.kube._pool_mapping import pool_status_result_from_object

import kube_harness
from helpers import REPO
from kube_harness import ADMIN_TOKEN, ApiServer
from kube_pools_harness import (
    REQUESTS,
    ControllerManager,
    answer_by_hand,
    four_pools,
    gone,
    incomplete_pool,
    requests_of,
    wait_for_request,
)

pytestmark = pytest.mark.skipif(kube_harness.assets() is None, reason=kube_harness.SKIP_REASON)
_drivers = itertools.count()


def config(server: ApiServer, token: str = ADMIN_TOKEN) -> KubeConfig:
    return KubeConfig.from_one(
        cluster=Cluster(server=server.url, certificate_auth=str(server.ca_file)),
        user=User(token=token),
    )


@pytest.fixture
def client(server: ApiServer) -> Iterator[Client]:
    with Client(config=config(server)) as admin:
        yield admin


@pytest.fixture
def driver() -> str:
    return f"gpu-{next(_drivers)}.pools.example.com"


def counts(pool: PoolStatus) -> tuple[object, ...]:
    return (
        pool.pool_name,
        pool.node_name,
        pool.generation,
        pool.resource_slice_count,
        pool.total_devices,
        pool.allocated_devices,
        pool.available_devices,
        pool.unavailable_devices,
    )


def test_every_pool_of_a_driver(
    server: ApiServer, namespace: str, driver: str, client: Client, controller: ControllerManager
) -> None:
    four_pools(server, namespace, driver)
    result = read_pool_status(driver, client=client)
    assert [counts(pool) for pool in result.pools] == [
        ("cluster", None, 1, 1, 2, 0, 2, 0),
        ("node-a", "node-a", 1, 1, 4, 1, 3, 0),
        ("node-d", "node-d", 1, 2, 5, 0, 5, 0),
        ("rolling", "node-e", 2, 1, 3, 0, 3, 0),
    ]
    assert {pool.driver for pool in result.pools} == {driver}
    assert (result.pool_count, result.truncated) == (4, False)
    assert all(pool.partition_summary is None for pool in result.pools)
    assert all(pool.shareable_summary is None and not pool.extra for pool in result.pools)
    assert [(c.type, c.status, c.reason) for c in result.conditions] == [
        ("Complete", "True", "CalculationComplete")
    ]
    assert result.completed_at == result.conditions[0].last_transition_time is not None
    assert result.request_name.startswith("dra-metadata-")
    assert gone(server, result.request_name)
    assert requests_of(server, driver) == []


def test_kept_request_is_what_the_server_stored(
    server: ApiServer, namespace: str, driver: str, client: Client, controller: ControllerManager
) -> None:
    four_pools(server, namespace, driver)
    result = read_pool_status(driver, keep=True, client=client)
    stored = server.request("GET", f"{REQUESTS}/{result.request_name}")
    assert stored["spec"] == {"driver": driver, "limit": 100}
    managers = {entry["manager"]: entry for entry in stored["metadata"]["managedFields"]}
    assert set(managers["dra-metadata"]["fieldsV1"]) == {"f:metadata", "f:spec"}  # generateName
    assert set(managers["kube-controller-manager"]["fieldsV1"]) == {"f:status"}
    assert result == pool_status_result_from_object(stored)
    server.request("DELETE", f"{REQUESTS}/{result.request_name}")


def test_one_pool_a_limit_and_no_match(
    server: ApiServer, namespace: str, driver: str, client: Client, controller: ControllerManager
) -> None:
    four_pools(server, namespace, driver)
    (split,) = read_pool_status(driver, pool="node-d", client=client).pools
    assert counts(split) == ("node-d", "node-d", 1, 2, 5, 0, 5, 0)
    first_two = read_pool_status(driver, limit=2, client=client)
    assert [pool.pool_name for pool in first_two.pools] == ["cluster", "node-a"]
    assert (first_two.pool_count, first_two.truncated) == (4, True)
    assert first_two.conditions[0].message == "Calculated status for 2 pools"
    unknown = read_pool_status(driver, pool="rack-1/node-a", limit=1000, client=client)
    assert (unknown.pools, unknown.pool_count, unknown.truncated) == ((), 0, False)
    assert requests_of(server, driver) == []


def test_driver_without_slices(
    server: ApiServer, driver: str, client: Client, controller: ControllerManager
) -> None:
    result = read_pool_status(driver, client=client)
    assert (result.pools, result.pool_count, result.truncated) == ((), 0, False)
    assert result.conditions[0].message == "Calculated status for 0 pools"


def test_asyncio_twin(
    server: ApiServer, namespace: str, driver: str, controller: ControllerManager
) -> None:
    four_pools(server, namespace, driver)

    async def both() -> tuple[object, object]:
        with Client(config=config(server)) as admin:
            return await asyncio.gather(
                aread_pool_status(driver, client=admin),
                aread_pool_status(driver, pool="node-a", client=admin),
            )

    every, one = asyncio.run(both())
    assert [pool.pool_name for pool in every.pools] == ["cluster", "node-a", "node-d", "rolling"]  # type: ignore[attr-defined]
    assert [counts(pool) for pool in one.pools] == [("node-a", "node-a", 1, 1, 4, 1, 3, 0)]  # type: ignore[attr-defined]
    assert requests_of(server, driver) == []


def apply_pool_status_rbac(server: ApiServer, namespace: str) -> str:
    """examples/kubernetes/pool-status-rbac.yaml, its subject in ``namespace``; a token."""
    documents = yaml.safe_load_all(
        (REPO / "examples" / "kubernetes" / "pool-status-rbac.yaml").read_text()
    )
    collections = {
        "ServiceAccount": f"/api/v1/namespaces/{namespace}/serviceaccounts",
        "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    }
    for document in documents:
        if document["kind"] == "ClusterRoleBinding":
            document["subjects"][0]["namespace"] = namespace
        if document["kind"] != "ServiceAccount":  # cluster-wide: one per test run
            document["metadata"]["name"] += f"-{namespace}"
            if document["kind"] == "ClusterRoleBinding":
                document["roleRef"]["name"] += f"-{namespace}"
        server.create(collections[document["kind"]], document)
    answer = server.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/dra-metadata-pools/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    return str(answer["status"]["token"])


def test_least_privilege_service_account_and_one_without_rights(
    server: ApiServer, namespace: str, driver: str, controller: ControllerManager
) -> None:
    four_pools(server, namespace, driver)
    token = apply_pool_status_rbac(server, namespace)
    with Client(config=config(server, token)) as reader:
        result = read_pool_status(driver, pool="node-a", client=reader)
    assert [counts(pool) for pool in result.pools] == [("node-a", "node-a", 1, 1, 4, 1, 3, 0)]
    assert gone(server, result.request_name)  # deleted with the example's "delete"
    stranger = server.service_account_token(namespace, "no-rights")
    with Client(config=config(server, stranger)) as refused, pytest.raises(KubeAPIError) as caught:
        read_pool_status(driver, client=refused)
    error = caught.value
    assert (error.status, error.verb, error.resource, error.namespace) == (
        403,
        "create",
        "resourcepoolstatusrequests",
        None,
    )
    assert str(error).startswith(
        "the Kubernetes API server refused to create resourcepoolstatusrequests (HTTP 403 "
        "Forbidden: resourcepoolstatusrequests.resource.k8s.io is forbidden: User "
        f'"system:serviceaccount:{namespace}:no-rights" cannot create resource '
        '"resourcepoolstatusrequests" in API group "resource.k8s.io" at the cluster scope). '
    )
    assert str(error).endswith(
        "see the example ClusterRole in examples/kubernetes/pool-status-rbac.yaml in the "
        "dra-metadata sources"
    )
    assert requests_of(server, driver) == []


def test_controller_stopped_times_out_and_leaves_nothing(
    server: ApiServer, namespace: str, driver: str, client: Client, controller: ControllerManager
) -> None:
    four_pools(server, namespace, driver)
    controller.stop()
    try:
        with pytest.raises(KubeAPIError) as caught:
            read_pool_status(driver, timeout=1.5, client=client)
    finally:
        controller.start()
    message = str(caught.value)
    name = caught.value.name
    assert name is not None
    assert name.startswith("dra-metadata-")
    assert message.startswith(
        f'no answer to resourcepoolstatusrequest "{name}" (driver "{driver}") within 1.5 s: '
        "kube-controller-manager answers these requests only when it runs with "
        "--feature-gates=DRAResourcePoolStatus=true"
    )
    assert "or a pool of that driver is incomplete" in message
    assert message.endswith(f'; resourcepoolstatusrequest "{name}" was deleted')
    assert caught.value.status is None
    assert gone(server, name)
    assert requests_of(server, driver) == []


def test_incomplete_pool_keeps_the_request_unanswered(
    server: ApiServer, driver: str, client: Client, controller: ControllerManager
) -> None:
    incomplete_pool(server, driver)
    with pytest.raises(KubeAPIError, match="a pool of that driver is incomplete"):
        read_pool_status(driver, timeout=1, client=client)
    assert requests_of(server, driver) == []


def test_failed_condition_is_an_error_with_its_message(
    server: ApiServer, driver: str, client: Client
) -> None:
    """The controller writes Failed only when its cache fails; written here as it would."""
    incomplete_pool(server, driver)  # unanswered, whether the controller runs or not

    async def scenario() -> KubeAPIError:
        reading = asyncio.ensure_future(aread_pool_status(driver, timeout=60, client=client))
        request = await asyncio.to_thread(wait_for_request, server, driver)
        condition = {
            "type": "Failed",
            "status": "True",
            "reason": "CalculationFailed",
            "message": "listing ResourceSlices: cache not synced",
            "lastTransitionTime": "2026-12-01T13:30:00Z",
        }
        await asyncio.to_thread(
            answer_by_hand,
            server,
            request["metadata"]["name"],
            {"poolCount": 0, "conditions": [condition]},
        )
        with pytest.raises(KubeAPIError) as caught:
            await reading
        return caught.value

    error = asyncio.run(scenario())
    assert str(error) == (
        f"kube-controller-manager could not compute the pool status of resourcepoolstatusrequest "
        f'"{error.name}" (CalculationFailed): listing ResourceSlices: cache not synced; ask again; '
        f'resourcepoolstatusrequest "{error.name}" was deleted'
    )
    assert requests_of(server, driver) == []


def test_api_not_served(server_without_pool_status: ApiServer) -> None:
    with (
        Client(config=config(server_without_pool_status)) as client,
        pytest.raises(KubeAPIError) as caught,
    ):
        read_pool_status("gpu.example.com", client=client)
    assert (caught.value.status, caught.value.verb) == (404, "create")
    assert str(caught.value) == (
        f"the Kubernetes API server at {server_without_pool_status.url} does not serve "
        "resourcepoolstatusrequests in resource.k8s.io/v1alpha3 (HTTP 404 NotFound: the server "
        "could not find the requested resource). Resource pool status needs Kubernetes 1.36 or "
        "later, with kube-apiserver started with --runtime-config=resource.k8s.io/v1alpha3=true "
        "(the API is alpha and off by default) and kube-controller-manager with "
        "--feature-gates=DRAResourcePoolStatus=true to answer the requests; this server is "
        f"{server_version(server_without_pool_status)}: add the flag"
    )


def server_version(server: ApiServer) -> str:
    return str(server.request("GET", "/version")["gitVersion"])


def test_arguments_are_checked_before_anything_is_sent(server: ApiServer, client: Client) -> None:
    """With the server's rules: what it would refuse (422) is refused here, named."""
    before = server.request("GET", REQUESTS)["items"]
    with pytest.raises(InvalidNameError, match="invalid driver 'GPU_example!'"):
        read_pool_status("GPU_example!", client=client)
    with pytest.raises(InvalidNameError, match="invalid pool 'Node 1//x': segment 0"):
        read_pool_status("gpu.example.com", pool="Node 1//x", client=client)
    with pytest.raises(ValueError, match="limit must be from 1 to 1000"):
        read_pool_status("gpu.example.com", limit=1001, client=client)
    assert server.request("GET", REQUESTS)["items"] == before


def test_cancelled_task_deletes_its_request(server: ApiServer, driver: str, client: Client) -> None:
    incomplete_pool(server, driver)

    async def scenario() -> str:
        reading = asyncio.ensure_future(aread_pool_status(driver, timeout=60, client=client))
        request = await asyncio.to_thread(wait_for_request, server, driver)
        reading.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading
        return str(request["metadata"]["name"])

    name = asyncio.run(scenario())
    assert gone(server, name)
    assert requests_of(server, driver) == []


def test_keyboard_interrupt_deletes_the_request(
    server: ApiServer, driver: str, tmp_path: Path
) -> None:
    """Ctrl-C wherever it lands (waiting, or while the create's answer is being read: several
    rounds, as that happens one time in a few) deletes the request."""
    incomplete_pool(server, driver)
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    code = (
        "from dra_metadata.kube import read_pool_status\n"
        "try:\n"
        f"    read_pool_status({driver!r}, timeout=60)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    for _ in range(4):
        child = subprocess.Popen(
            [sys.executable, "-c", code],
            env={**os.environ, "KUBECONFIG": str(kubeconfig)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - Python's handler then
        )
        try:
            request = wait_for_request(server, driver)
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert (child.returncode, out, err) == (0, "interrupted\n", "")
        assert gone(server, request["metadata"]["name"])
        assert requests_of(server, driver) == []
