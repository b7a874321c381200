"""What a wait's condition may answer, with source="api": as with the files.

Against a real kube-apiserver and etcd (kube_harness.py); skipped without KUBEBUILDER_ASSETS.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.config.models import Cluster, User

import dra_metadata
from dra_metadata import DeviceMetadata, WaitTimeoutError

import kube_harness
from kube_harness import ADMIN_TOKEN, ApiServer, allocated_claim, network_status

pytestmark = pytest.mark.skipif(kube_harness.assets() is None, reason=kube_harness.SKIP_REASON)

LONG = 60.0


@pytest.fixture
def client(server: ApiServer) -> Iterator[Client]:
    config = KubeConfig.from_one(
        cluster=Cluster(server=server.url, certificate_auth=str(server.ca_file)),
        user=User(token=ADMIN_TOKEN),
    )
    with Client(config=config) as admin:
        yield admin


def test_true_false_and_other_answers(server: ApiServer, namespace: str, client: Client) -> None:
    path = allocated_claim(server, namespace, "rdma-nics")
    server.patch_status(path, network_status("nic-0"))
    options: dict[str, Any] = {"source": "api", "namespace": namespace, "client": client}
    ready = dra_metadata.wait_until(
        lambda m: bool(m.devices), "rdma-nics", "nics", timeout=LONG, **options
    )
    assert ready.devices[0].name == "nic-0"
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_until(lambda _: False, "rdma-nics", "nics", timeout=1, **options)
    assert info.value.reason.startswith("the condition returned False (resourceclaim ")

    def condition(_: DeviceMetadata) -> Any:
        return 1

    started = time.monotonic()
    with pytest.raises(TypeError, match="^the condition returned int 1: it must return None"):
        dra_metadata.wait_until(condition, "rdma-nics", "nics", timeout=LONG, **options)
    assert time.monotonic() - started < LONG / 2
    with pytest.raises(TypeError, match="^the predicate returned str 'no' for device nic-0"):
        dra_metadata.wait_for(lambda _: "no", "rdma-nics", "nics", timeout=LONG, **options)  # type: ignore[arg-type, return-value]
