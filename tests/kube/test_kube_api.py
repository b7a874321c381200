"""dra_metadata.kube against a real kube-apiserver and etcd (see kube_harness.py).

Skipped without KUBEBUILDER_ASSETS. One server for the session; each test works in its own
namespace. The writes of the scheduler, a driver and the kubelet are made as the admin.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lightkube import AsyncClient, Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.config.models import Cluster, User

import dra_metadata
from dra_metadata import KubeAPIError, MetadataNotFoundError, WaitTimeoutError
from dra_metadata.kube import (
    ClaimStatus,
    awatch_claim_status,
    read_claim_status,
    read_device_health,
    read_template_claim_status,
    watch_claim_status,
)
from dra_metadata.kube._mapping import claim_status_from_object
from dra_metadata.kube._wait import await_until, network_data_condition, wait_until

import kube_harness
from kube_harness import (
    ADMIN_TOKEN,
    CLAIMS,
    ApiServer,
    allocated_claim,
    allocation,
    apply_example_rbac,
    claim,
    network_status,
    report_unhealthy_gpu,
    template_pod,
)

pytestmark = pytest.mark.skipif(kube_harness.assets() is None, reason=kube_harness.SKIP_REASON)

NETWORK = network_data_condition(("interface_name", "ips"))


def config(server: ApiServer, token: str = ADMIN_TOKEN, *, ca: bool = True) -> KubeConfig:
    return KubeConfig.from_one(
        cluster=Cluster(server=server.url, certificate_auth=str(server.ca_file) if ca else None),
        user=User(token=token),
    )


@pytest.fixture
def client(server: ApiServer) -> Iterator[Client]:
    with Client(config=config(server)) as admin:
        yield admin


def test_read_claim_status(server: ApiServer, namespace: str, client: Client) -> None:
    path = allocated_claim(server, namespace, "rdma-nics", "nic-0", "nic-1")
    server.patch_status(path, network_status("nic-1", "nic-0"))
    status = read_claim_status("rdma-nics", namespace=namespace, client=client)
    assert status == claim_status_from_object(server.request("GET", path))
    assert status.device_names() == ("nic-0", "nic-1")
    assert [
        device.network_data.interface_name for device in status.devices if device.network_data
    ] == ["rdma1", "rdma0"]
    condition = status.devices[0].condition("Ready")
    assert condition is not None
    assert condition.reason == "NetworkDeviceReady"


def test_missing_claim_is_not_found(namespace: str, client: Client) -> None:
    with pytest.raises(MetadataNotFoundError) as caught:
        read_claim_status("missing-claim", namespace=namespace, client=client)
    assert str(caught.value) == (
        f'resourceclaim "missing-claim" in namespace "{namespace}" not found: check the '
        "claim's name (spec.resourceClaims of the pod) and the namespace"
    )


def test_template_claim_of_this_pod_from_the_downward_api_and_the_kubeconfig(
    server: ApiServer, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generated = template_pod(server, namespace)
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.setenv("POD_NAMESPACE", namespace)
    monkeypatch.setenv("POD_NAME", "trainer-0")
    status = read_template_claim_status("accelerator")
    assert status.name == generated
    assert status.pod_claim_name == "accelerator"
    assert status.device_names() == ("gpu-3",)
    monkeypatch.setenv("POD_NAME", "trainer-1")
    with pytest.raises(MetadataNotFoundError) as caught:
        read_template_claim_status("accelerator")
    assert str(caught.value).startswith(
        f'pod "trainer-1" in namespace "{namespace}" not found (name from $POD_NAME; '
        "namespace from $POD_NAMESPACE)"
    )


def test_device_health(server: ApiServer, namespace: str, client: Client) -> None:
    template_pod(server, namespace)
    assert read_device_health(pod_name="trainer-0", namespace=namespace, client=client) == ()
    report_unhealthy_gpu(server, namespace)
    (health,) = read_device_health(
        pod_name="trainer-0", container_name="trainer", namespace=namespace, client=client
    )
    assert (health.pod_claim_name, health.request, health.health, health.message) == (
        "accelerator",
        "gpu",
        "Unhealthy",
        "XID 79",
    )
    assert (health.driver, health.pool, health.device) == (
        "gpu.example.com",
        "rack-1/node-7",
        "gpu-3",
    )


def test_wait_returns_when_the_driver_publishes_while_it_waits(
    server: ApiServer, namespace: str, client: Client
) -> None:
    path = allocated_claim(server, namespace, "rdma-nics", "nic-0", "nic-1")
    reasons: list[str] = []
    published: list[float] = []

    def publish_once(reason: str) -> None:  # called while the wait is waiting
        reasons.append(reason)
        if not published and "has no networkData" in reason:  # the wait has seen the claim
            server.patch_status(path, network_status("nic-0", "nic-1"))
            published.append(time.monotonic())

    metadata = wait_until(
        NETWORK,
        "rdma-nics",
        "nics",
        namespace=namespace,
        client=client,
        timeout=30,
        progress=publish_once,
        progress_interval=0.01,
    )
    returned = time.monotonic()
    assert reasons[-1].startswith(
        f"claim status has no networkData for device nic-0 (resourceclaim {namespace}/rdma-nics, "
        "resourceVersion "
    )
    assert [
        device.network_data.interface_name for device in metadata.devices if device.network_data
    ] == ["rdma0", "rdma1"]
    assert returned - published[0] < 10  # well before the timeout: woken by the watch


def test_wait_times_out_with_the_reason(server: ApiServer, namespace: str, client: Client) -> None:
    server.create(CLAIMS.format(namespace=namespace), claim("rdma-nics"))
    with pytest.raises(WaitTimeoutError) as caught:
        wait_until(NETWORK, "rdma-nics", "nics", namespace=namespace, client=client, timeout=0.2)
    assert caught.value.reason.startswith(
        f"claim is not allocated yet (no status.allocation) (resourceclaim {namespace}/rdma-nics"
    )
    assert caught.value.path is None
    server.patch_status(
        f"{CLAIMS.format(namespace=namespace)}/rdma-nics",
        {
            **allocation("nic-0"),
            "devices": [
                {
                    "driver": "dra.net",
                    "pool": "node-7",
                    "device": "nic-0",
                    "networkData": {"interfaceName": "eth1"},
                }
            ],
        },
    )
    with pytest.raises(WaitTimeoutError) as caught:
        wait_until(NETWORK, "rdma-nics", "nics", namespace=namespace, client=client, timeout=0.2)
    assert str(caught.value).startswith(
        "not ready after 0.2 s: claim status has no networkData.ips for device nic-0 "
        f"(resourceclaim {namespace}/rdma-nics, resourceVersion "
    )
    assert caught.value.metadata is not None
    assert caught.value.metadata.devices[0].name == "nic-0"
    with pytest.raises(MetadataNotFoundError, match='has no request "gpu"; its requests: nics'):
        wait_until(NETWORK, "rdma-nics", "gpu", namespace=namespace, client=client, timeout=5)


def test_stop_event_ends_a_wait(server: ApiServer, namespace: str, client: Client) -> None:
    allocated_claim(server, namespace, "rdma-nics")
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    with pytest.raises(WaitTimeoutError, match="^not ready: stopped; claim status has"):
        wait_until(
            NETWORK,
            "rdma-nics",
            "nics",
            namespace=namespace,
            client=client,
            timeout=None,
            stop_event=stop,
        )


def test_wait_for_network_data_from_the_api(
    server: ApiServer, namespace: str, client: Client
) -> None:
    """The public waits with source="api": same errors, reasons that speak of the status."""
    path = allocated_claim(server, namespace, "rdma-nics", "nic-0", "nic-1")
    options: dict[str, Any] = {"source": "api", "namespace": namespace, "client": client}
    with pytest.raises(WaitTimeoutError) as caught:
        dra_metadata.wait_for_network_data("rdma-nics", "nics", timeout=0.2, **options)
    assert caught.value.reason.startswith(
        f"claim status has no networkData for device nic-0 (resourceclaim {namespace}/rdma-nics"
    )
    assert str(caught.value).startswith("not ready after 0.2 s: ")
    with pytest.raises(WaitTimeoutError, match="claim status: device nic-0, nic-1 not ready"):
        dra_metadata.wait_for(
            lambda d: d.network_data is not None, "rdma-nics", "nics", timeout=0.2, **options
        )
    publisher = threading.Timer(0.3, server.patch_status, (path, network_status("nic-0", "nic-1")))
    publisher.start()
    try:
        metadata = dra_metadata.wait_for_network_data(
            "rdma-nics", "nics", timeout=30, require=("interface_name", "ips"), **options
        )
    finally:
        publisher.join()
    assert [(d.name, d.network_data.ips) for d in metadata.devices if d.network_data] == [
        ("nic-0", ("10.128.0.17/24",)),
        ("nic-1", ("10.128.1.17/24",)),
    ]
    assert metadata.sources == ()  # nothing comes from a file
    ready = dra_metadata.wait_for(
        lambda d: d.network_data is not None, "rdma-nics", "nics", timeout=5, **options
    )
    assert ready.devices == metadata.devices
    with pytest.raises(MetadataNotFoundError, match='has no request "gpu"'):
        dra_metadata.wait_for_network_data("rdma-nics", "gpu", timeout=5, **options)


def test_auto_waits_on_the_api_where_no_request_directory_exists(
    server: ApiServer, namespace: str, client: Client, tmp_path: Path
) -> None:
    path = allocated_claim(server, namespace, "rdma-nics")
    server.patch_status(path, network_status("nic-0"))
    (tmp_path / "resourceclaims" / "other-claim" / "nics").mkdir(parents=True)  # not this one
    metadata = dra_metadata.wait_for_network_data(
        "rdma-nics",
        "nics",
        source="auto",
        root=tmp_path,
        namespace=namespace,
        client=client,
        timeout=10,
    )
    assert metadata.devices[0].network_data is not None
    assert metadata.namespace == namespace


def test_await_for_network_data_from_the_api(server: ApiServer, namespace: str) -> None:
    path = allocated_claim(server, namespace, "rdma-nics")

    async def scenario() -> None:
        async with AsyncClient(config=config(server)) as client:
            options: dict[str, Any] = {"source": "api", "namespace": namespace, "client": client}
            with pytest.raises(WaitTimeoutError, match="claim status has no networkData"):
                await dra_metadata.await_for_network_data(
                    "rdma-nics", "nics", timeout=0.2, **options
                )
            # An asyncio.Event is awaited: the wait ends as soon as it is set.
            stop = asyncio.Event()
            asyncio.get_running_loop().call_later(0.2, stop.set)
            started = time.monotonic()
            with pytest.raises(WaitTimeoutError, match="^not ready: stopped; "):
                await dra_metadata.await_until(
                    NETWORK, "rdma-nics", "nics", timeout=None, stop_event=stop, **options
                )
            assert time.monotonic() - started < 10
            # Cancelled: at once, and its connection is closed.
            before = open_descriptors()
            watching = asyncio.Event()
            waiting = asyncio.ensure_future(
                dra_metadata.await_until(
                    NETWORK,
                    "rdma-nics",
                    "nics",
                    timeout=None,
                    progress=lambda _: watching.set(),  # it has read the claim and waits
                    progress_interval=0.01,
                    **options,
                )
            )
            await asyncio.wait_for(watching.wait(), 20)
            assert not waiting.done()
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            assert open_descriptors() == before
            # Ready once the driver publishes while it waits.
            waiting = asyncio.ensure_future(
                dra_metadata.await_for_network_data("rdma-nics", "nics", timeout=30, **options)
            )
            await asyncio.to_thread(server.patch_status, path, network_status("nic-0"))
            metadata = await asyncio.wait_for(waiting, 20)
            assert metadata.devices[0].network_data is not None
            ready = await dra_metadata.await_for(
                lambda d: d.network_data is not None, "rdma-nics", "nics", timeout=5, **options
            )
            assert ready.devices == metadata.devices

    asyncio.run(scenario())


async def _next(iterator: Any, timeout: float = 20) -> ClaimStatus:
    return await asyncio.wait_for(iterator.__anext__(), timeout)  # type: ignore[no-any-return]


def test_async_watch_and_wait(server: ApiServer, namespace: str) -> None:
    path = allocated_claim(server, namespace, "rdma-nics")

    async def scenario() -> None:
        async with AsyncClient(config=config(server)) as client:
            statuses = awatch_claim_status("rdma-nics", namespace=namespace, client=client)
            first = await _next(statuses)
            assert first.devices[0].network_data is None
            waiting = asyncio.ensure_future(
                await_until(
                    NETWORK, "rdma-nics", "nics", namespace=namespace, client=client, timeout=30
                )
            )
            await asyncio.to_thread(server.patch_status, path, network_status("nic-0"))
            second = await _next(statuses)
            assert second.devices[0].network_data is not None
            assert second.resource_version != first.resource_version
            metadata = await asyncio.wait_for(waiting, 20)
            assert metadata.devices[0].network_data == second.devices[0].network_data
            # A change outside the status (a label) is no status change: nothing is yielded.
            await asyncio.to_thread(
                server.request,
                "PATCH",
                path,
                {"metadata": {"labels": {"team": "ml"}}},
                content_type="application/merge-patch+json",
            )
            await asyncio.to_thread(server.patch_status, path, {"devices": []})
            third = await _next(statuses)
            assert third.devices[0].network_data is None
            await statuses.aclose()  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_watch_goes_on_across_a_restarted_api_server(
    server: ApiServer, namespace: str, client: Client
) -> None:
    path = allocated_claim(server, namespace, "rdma-nics")
    statuses = watch_claim_status("rdma-nics", namespace=namespace, client=client, timeout=30)
    first = next(statuses)
    # A write elsewhere moves etcd on: the new server's watch cache starts after the version
    # the watch resumes from, and answers it with 410 Gone (an ERROR event): the watch must
    # start over from a fresh read.
    allocated_claim(server, namespace, "other-claim")
    server.restart_apiserver()
    server.patch_status(path, network_status("nic-0"))
    second = next(statuses)
    assert second.devices[0].network_data is not None
    assert int(second.resource_version) > int(first.resource_version)
    statuses.close()  # type: ignore[attr-defined]


def test_deleted_claim_ends_the_watch(server: ApiServer, namespace: str, client: Client) -> None:
    path = allocated_claim(server, namespace, "rdma-nics")
    statuses = watch_claim_status("rdma-nics", namespace=namespace, client=client, timeout=30)
    next(statuses)
    server.request("DELETE", path)
    with pytest.raises(
        MetadataNotFoundError, match=f'"rdma-nics" in namespace "{namespace}" was deleted'
    ):
        next(statuses)


def test_watch_ends_after_its_timeout_or_stop_event(
    server: ApiServer, namespace: str, client: Client
) -> None:
    allocated_claim(server, namespace, "rdma-nics")
    started = time.monotonic()
    statuses = watch_claim_status("rdma-nics", namespace=namespace, client=client, timeout=0.3)
    assert len(list(statuses)) == 1
    assert time.monotonic() - started < 5  # well before the server would end the watch
    stop = threading.Event()
    seen = []
    for status in watch_claim_status(
        "rdma-nics", namespace=namespace, client=client, stop_event=stop
    ):
        seen.append(status)
        stop.set()
    assert len(seen) == 1

    async def stopped_by_an_asyncio_event() -> int:
        event = asyncio.Event()
        asyncio.get_running_loop().call_later(0.2, event.set)
        count = 0
        async for _ in awatch_claim_status(
            "rdma-nics", namespace=namespace, client=client, stop_event=event
        ):
            count += 1
        return count

    assert asyncio.run(stopped_by_an_asyncio_event()) == 1


def test_sync_twins_work_where_an_event_loop_runs(
    server: ApiServer, namespace: str, client: Client
) -> None:
    """Jupyter, or an async web handler calling synchronous code: the thread runs a loop."""
    path = allocated_claim(server, namespace, "rdma-nics")
    server.patch_status(path, network_status("nic-0"))

    async def synchronous_calls_in_async_code() -> tuple[ClaimStatus, ClaimStatus, str]:
        status = read_claim_status("rdma-nics", namespace=namespace, client=client)
        statuses = watch_claim_status("rdma-nics", namespace=namespace, client=client, timeout=5)
        first = next(statuses)
        statuses.close()  # type: ignore[attr-defined]
        metadata = dra_metadata.wait_for_network_data(
            "rdma-nics", "nics", source="api", namespace=namespace, client=client, timeout=5
        )
        return status, first, metadata.devices[0].network_data.interface_name  # type: ignore[union-attr]

    status, first, interface = asyncio.run(synchronous_calls_in_async_code())
    assert status == first
    assert interface == "rdma0"


def test_ctrl_c_in_a_sync_wait_where_an_event_loop_runs(
    server: ApiServer, namespace: str, client: Client
) -> None:
    """An interrupted wait (its private loop in a worker thread) closes its connection."""
    allocated_claim(server, namespace, "rdma-nics")
    interrupted: list[float] = []

    def interrupt_soon(_: str) -> None:  # called while the wait is waiting, in the worker
        if not interrupted:
            interrupted.append(time.monotonic())
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # type: ignore[arg-type]

    async def blocking_wait() -> None:
        dra_metadata.wait_until(
            NETWORK,
            "rdma-nics",
            "nics",
            source="api",
            namespace=namespace,
            client=client,
            timeout=60,
            progress=interrupt_soon,
            progress_interval=0.05,
        )

    # (asyncio.run would turn Ctrl-C into a cancellation that blocking code never sees.)
    before = open_descriptors()
    loop = asyncio.new_event_loop()
    # Python's own handler, also when the suite runs as a background job (SIGINT ignored).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(blocking_wait())
    finally:
        loop.close()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - interrupted[0] < 10  # at once, not at the timeout
    assert open_descriptors() == before


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_least_privilege_service_account(server: ApiServer, namespace: str) -> None:
    token = apply_example_rbac(server, namespace)
    allocated_claim(server, namespace, "rdma-nics")
    template_pod(server, namespace)
    other = server.namespace(f"{namespace}-other")
    allocated_claim(server, other, "rdma-nics")
    with Client(config=config(server, token)) as reader:
        # What the example Role allows: read, wait (get + watch), template claims, health.
        assert read_claim_status("rdma-nics", namespace=namespace, client=reader).allocated
        assert read_template_claim_status(
            "accelerator", pod_name="trainer-0", namespace=namespace, client=reader
        ).allocated
        assert read_device_health(pod_name="trainer-0", namespace=namespace, client=reader) == ()
        statuses = watch_claim_status("rdma-nics", namespace=namespace, client=reader, timeout=0.5)
        assert len(list(statuses)) == 1
        # Another namespace: refused, and the message says what to grant.
        with pytest.raises(KubeAPIError) as caught:
            read_claim_status("rdma-nics", namespace=other, client=reader)
    assert caught.value.status == 403
    assert (caught.value.verb, caught.value.resource, caught.value.namespace) == (
        "get",
        "resourceclaims",
        other,
    )
    assert str(caught.value).startswith(
        f'the Kubernetes API server refused to get resourceclaim "rdma-nics" in namespace "{other}" '
        f'(HTTP 403 Forbidden: resourceclaims.resource.k8s.io "rdma-nics" is forbidden: User '
        f'"system:serviceaccount:{namespace}:dra-metadata-reader" cannot get resource '
    )
    assert str(caught.value).endswith(
        "see the example Role in examples/kubernetes/api-reader-rbac.yaml in the dra-metadata sources"
    )


def test_a_role_without_watch_refuses_the_wait(server: ApiServer, namespace: str) -> None:
    token = apply_example_rbac(server, namespace, verbs=["get"])
    allocated_claim(server, namespace, "rdma-nics")
    with Client(config=config(server, token)) as reader, pytest.raises(KubeAPIError) as caught:
        wait_until(NETWORK, "rdma-nics", "nics", namespace=namespace, client=reader, timeout=10)
    assert caught.value.status == 403
    assert caught.value.verb == "watch"
    assert 'allows "watch" on "resourceclaims" (apiGroup resource.k8s.io)' in str(caught.value)


def test_unknown_token_and_untrusted_certificate(server: ApiServer, namespace: str) -> None:
    with (
        Client(config=config(server, "not-a-token")) as stranger,
        pytest.raises(KubeAPIError) as caught,
    ):
        read_claim_status("rdma-nics", namespace=namespace, client=stranger)
    assert caught.value.status == 401
    assert "(HTTP 401 Unauthorized: Unauthorized): the token is unknown, expired or revoked" in str(
        caught.value
    )
    with (
        Client(config=config(server, ca=False)) as unverified,
        pytest.raises(KubeAPIError) as caught,
    ):
        read_claim_status("rdma-nics", namespace=namespace, client=unverified)
    assert caught.value.status is None
    assert str(caught.value).startswith(
        f"TLS with the Kubernetes API server at {server.url} failed to get resourceclaim"
    )
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)


def test_exec_plugins_and_certificate_files_of_a_kubeconfig(
    server: ApiServer, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What _config and _credentials build from a kubeconfig reaches a real server: a relative
    certificate-authority, certificate-authority-data, an exec plugin run once per client, whose
    token is what is sent (an unknown one is a 401)."""
    allocated_claim(server, namespace, "rdma-nics", "nic-0")
    (tmp_path / "ca.crt").write_bytes(server.ca_file.read_bytes())
    token = tmp_path / "token"
    token.write_text(ADMIN_TOKEN)
    runs = tmp_path / "runs"
    plugin = tmp_path / "plugin"
    plugin.write_text(
        "#!/bin/sh\n"
        f"echo run >> {runs}\n"
        'printf \'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", '
        f'"status": {{"token": "%s"}}}}\' "$(cat {token})"\n'
    )
    plugin.chmod(0o755)
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    document = json.loads(kubeconfig.read_bytes())
    document["clusters"][0]["cluster"]["certificate-authority"] = "ca.crt"  # next to it
    document["users"][0]["user"] = {
        "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin)}
    }
    kubeconfig.write_text(json.dumps(document))
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert read_claim_status("rdma-nics", namespace=namespace).device_names() == ("nic-0",)
    assert runs.read_text() == "run\n"
    statuses = watch_claim_status("rdma-nics", namespace=namespace, timeout=0.5)
    assert [status.name for status in statuses] == ["rdma-nics"]

    ca_data = base64.b64encode(server.ca_file.read_bytes()).decode()
    del document["clusters"][0]["cluster"]["certificate-authority"]
    document["clusters"][0]["cluster"]["certificate-authority-data"] = ca_data
    kubeconfig.write_text(json.dumps(document))
    token.write_text("not-a-token")  # what the plugin prints is what is sent
    with pytest.raises(KubeAPIError) as caught:
        read_claim_status("rdma-nics", namespace=namespace)
    assert caught.value.status == 401
    # 1 (the read) + 1 (the watch's GET; its watch request reuses the token) + 1 (a fresh
    # token refused is not asked for again)
    assert runs.read_text().count("run") == 3
