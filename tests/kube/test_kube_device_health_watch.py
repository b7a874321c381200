"""Device health named through the pod's claims, read once and watched, against a real
kube-apiserver and etcd (see kube_harness.py).

The pod and its claims have the shapes of a real node's (tests/data/node-health): the kubelet's
writes, keyed by the driver's CDI device IDs, are made as the admin through ``pods/status``.
watch_device_health takes no client: the configuration is a kubeconfig ($KUBECONFIG).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from dra_metadata import KubeAPIError, MetadataNotFoundError
from dra_metadata.kube import (
    DeviceHealth,
    UnresolvedDeviceWarning,
    awatch_device_health,
    read_device_health,
    watch_device_health,
)

import kube_harness
from kube_harness import (
    PODS,
    ApiServer,
    cdi_id,
    cdi_pod,
    pods_only_token,
    report_cdi_health,
)

pytestmark = pytest.mark.skipif(kube_harness.assets() is None, reason=kube_harness.SKIP_REASON)


@pytest.fixture
def kubeconfig(
    server: ApiServer, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The admin's kubeconfig as $KUBECONFIG; this pod is dra-meta in the test's namespace."""
    path = server.write_kubeconfig(tmp_path / "kubeconfig")
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.setenv("POD_NAMESPACE", namespace)
    monkeypatch.setenv("POD_NAME", "dra-meta")
    for variable in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(variable, raising=False)
    return path


def _named(snapshot: tuple[DeviceHealth, ...]) -> list[tuple[str | None, str | None, str]]:
    return [(entry.claim_name, entry.device, entry.health) for entry in snapshot]


def test_read_names_the_devices_the_kubelet_keys_by_cdi_id(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    uids = cdi_pod(server, namespace)
    assert read_device_health() == ()
    report_cdi_health(server, namespace, uids, "Unhealthy")
    direct, template = read_device_health()
    assert (direct.driver, direct.pool, direct.device) == (
        "test-driver.cdi.k8s.io",
        "e2e-node",
        "device-00",
    )
    assert direct.claim_name == "claim-direct"
    assert direct.resource_id == cdi_id(uids["direct"], "req-a")
    assert (direct.health, direct.message) == ("Unhealthy", "set by --initial-device-health")
    assert direct.unresolved is None
    assert template.claim_name is not None
    assert template.claim_name.startswith("dra-meta-fromtmpl-")
    assert (template.pod_claim_name, template.device) == ("fromtmpl", "device-01")


def test_watch_yields_one_snapshot_per_change_of_health(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    uids = cdi_pod(server, namespace)
    report_cdi_health(server, namespace, uids, "Healthy", "ok")
    snapshots = watch_device_health(container="c", timeout=60)
    first = next(snapshots)
    assert [entry.health for entry in first] == ["Healthy", "Healthy"]
    assert [entry.device for entry in first] == ["device-00", "device-01"]
    # A status update that changes nothing about the health yields nothing: the next
    # snapshot is the change after it.
    report_cdi_health(server, namespace, uids, "Healthy", "ok", ready=False)
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    second = next(snapshots)
    assert [(e.device, e.health, e.message) for e in second] == [
        ("device-00", "Unhealthy", "XID 79"),
        ("device-01", "Unhealthy", "XID 79"),
    ]
    # The message alone is a change.
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 48")
    assert [e.message for e in next(snapshots)] == ["XID 48", "XID 48"]
    report_cdi_health(server, namespace, uids, "Healthy", "ok")
    third = next(snapshots)
    assert third == first
    snapshots.close()  # type: ignore[attr-defined]


def test_watch_goes_on_across_a_restarted_api_server(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    """The connection is cut, and the new server answers the old resourceVersion with 410."""
    uids = cdi_pod(server, namespace)
    report_cdi_health(server, namespace, uids, "Healthy", "ok")
    snapshots = watch_device_health(timeout=120)
    assert [e.health for e in next(snapshots)] == ["Healthy", "Healthy"]
    cdi_pod(server, server.namespace(f"{namespace}-elsewhere"))  # etcd moves on
    server.restart_apiserver()
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    assert [e.health for e in next(snapshots)] == ["Unhealthy", "Unhealthy"]
    # Exactly one snapshot for that change: the next one is the next change.
    report_cdi_health(server, namespace, uids, "Unknown", "no word from the driver")
    assert [e.health for e in next(snapshots)] == ["Unknown", "Unknown"]
    snapshots.close()  # type: ignore[attr-defined]


def test_watch_ends_after_its_timeout_or_stop_event(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    cdi_pod(server, namespace)
    started = time.monotonic()
    assert list(watch_device_health(timeout=0.5)) == [()]
    assert time.monotonic() - started < 10
    stop = threading.Event()
    seen = []
    for snapshot in watch_device_health(stop_event=stop):
        seen.append(snapshot)
        stop.set()
    assert seen == [()]

    async def stopped_by_an_asyncio_event() -> list[tuple[DeviceHealth, ...]]:
        event = asyncio.Event()
        asyncio.get_running_loop().call_later(0.3, event.set)
        return [snapshot async for snapshot in awatch_device_health(stop_event=event)]

    assert asyncio.run(stopped_by_an_asyncio_event()) == [()]


def test_async_watch_follows_the_kubelet(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    uids = cdi_pod(server, namespace)

    async def scenario() -> list[list[tuple[str | None, str | None, str]]]:
        snapshots = awatch_device_health(pod_name="dra-meta", namespace=namespace, timeout=60)
        seen = [_named(await asyncio.wait_for(snapshots.__anext__(), 30))]
        await asyncio.to_thread(report_cdi_health, server, namespace, uids, "Unhealthy")
        seen.append(_named(await asyncio.wait_for(snapshots.__anext__(), 30)))
        await snapshots.aclose()  # type: ignore[attr-defined]
        return seen

    empty, unhealthy = asyncio.run(scenario())
    assert empty == []
    assert [(device, health) for _, device, health in unhealthy] == [
        ("device-00", "Unhealthy"),
        ("device-01", "Unhealthy"),
    ]


def test_a_deleted_pod_or_a_missing_container_ends_the_watch(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    cdi_pod(server, namespace)
    with pytest.raises(
        MetadataNotFoundError, match='has no container "sidecar"; its containers: c'
    ):
        next(iter(watch_device_health(container="sidecar", timeout=30)))
    snapshots = watch_device_health(timeout=30)
    next(snapshots)
    server.request("DELETE", f"{PODS.format(namespace=namespace)}/dra-meta?gracePeriodSeconds=0")
    with pytest.raises(MetadataNotFoundError, match=f'pod "dra-meta" in namespace "{namespace}"'):
        next(snapshots)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts connections and never answers (a TLS handshake never ends)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield int(listener.getsockname()[1])


def test_a_server_that_does_not_answer_within_the_timeout_is_an_error(
    server: ApiServer, kubeconfig: Path, silent_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = kubeconfig.read_text().replace(server.url, f"https://127.0.0.1:{silent_server}")
    kubeconfig.write_text(text)
    started = time.monotonic()
    with pytest.raises(KubeAPIError, match='did not answer to get pod "dra-meta"') as caught:
        next(iter(watch_device_health(timeout=1)))
    assert time.monotonic() - started < 5  # the watch's timeout, not the 10 s of a request
    assert "within 1 s" in str(caught.value)


def test_without_get_on_resourceclaims_the_health_reads_unresolved_with_one_warning(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    uids = cdi_pod(server, namespace)
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    kubeconfig.write_text(
        kubeconfig.read_text().replace(kube_harness.ADMIN_TOKEN, pods_only_token(server, namespace))
    )
    with pytest.warns(UnresolvedDeviceWarning) as told:
        health = read_device_health()
    assert len(told) == 1
    assert str(told[0].message).startswith(
        "the kubelet names these devices by their CDI device IDs, and which devices they are "
        'is in their ResourceClaims ("claim-direct", "dra-meta-fromtmpl-'
    )
    assert 'grant "get" on "resourceclaims" (apiGroup resource.k8s.io) in namespace' in str(
        told[0].message
    )
    assert [(e.health, e.device, e.driver) for e in health] == [
        ("Unhealthy", None, None),
        ("Unhealthy", None, None),
    ]
    assert health[0].claim_name == "claim-direct"
    assert health[0].unresolved == (
        'the ResourceClaims cannot be read: that needs "get" on "resourceclaims" (apiGroup '
        f'resource.k8s.io) in namespace "{namespace}"'
    )
    # The watch: the same, and the warning once for the whole watch.
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        snapshots = watch_device_health(timeout=60)
        first = next(snapshots)
        report_cdi_health(server, namespace, uids, "Healthy", "ok")
        second = next(snapshots)
        snapshots.close()  # type: ignore[attr-defined]
    assert [e.device for e in first + second] == [None] * 4
    assert [e.health for e in second] == ["Healthy", "Healthy"]
    assert [w.category for w in recorded] == [UnresolvedDeviceWarning]


def test_with_get_on_resourceclaims_the_devices_are_named(
    server: ApiServer, namespace: str, kubeconfig: Path
) -> None:
    uids = cdi_pod(server, namespace)
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    token = pods_only_token(server, namespace, claims=True)
    kubeconfig.write_text(kubeconfig.read_text().replace(kube_harness.ADMIN_TOKEN, token))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [e.device for e in read_device_health()] == ["device-00", "device-01"]
        snapshots = watch_device_health(timeout=30)
        assert [e.device for e in next(snapshots)] == ["device-00", "device-01"]
        snapshots.close()  # type: ignore[attr-defined]
