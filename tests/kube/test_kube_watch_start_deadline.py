"""A watch whose timeout passes before it could read the claim raises, as its docstring says.

Against an API server that takes connections and never answers, ``watch_claim_status`` (and
its asyncio twin) raise KubeAPIError at their ``timeout`` when no status was read by then: a
watch that ends quietly would look like a claim whose status did not change. A timeout longer
than the request's deadline (10 s) ends at that deadline, with the same error. The server is
a real socket on 127.0.0.1 (a thread of this process); no Kubernetes API is involved.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from dra_metadata import KubeAPIError
from dra_metadata.kube import awatch_claim_status, watch_claim_status

TIMEOUT = 2.0


class MuteServer:
    """Takes every connection and never sends a byte."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.accepted.append(connection)

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


@pytest.fixture
def mute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[MuteServer]:
    server = MuteServer()
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{server.port}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    (tmp_path / "kubeconfig").write_bytes(orjson.dumps(document))
    for variable in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    yield server
    server.close()


def expected(server: MuteServer, asked: str, seconds: str) -> str:
    return (
        f"the Kubernetes API server at http://127.0.0.1:{server.port} did not answer to get "
        f"{asked} within {seconds} s, the deadline of the request"
    )


@pytest.mark.timeout(120)
def test_a_watch_that_read_nothing_by_its_timeout_raises(mute: MuteServer) -> None:
    started = time.monotonic()
    with pytest.raises(KubeAPIError) as raised:
        list(watch_claim_status("rdma-nics", namespace="ml", timeout=TIMEOUT))
    took = time.monotonic() - started
    message = str(raised.value)
    assert message.startswith(expected(mute, 'resourceclaim "rdma-nics" in namespace "ml"', "2"))
    assert message.endswith("or pass a larger timeout="), message
    assert raised.value.status is None
    assert took < 10, took  # its own timeout, not the request's deadline of 10 s


@pytest.mark.timeout(120)
def test_the_asyncio_twin_raises_too(mute: MuteServer) -> None:
    async def statuses() -> list[object]:
        return [s async for s in awatch_claim_status("rdma-nics", namespace="ml", timeout=1.5)]

    with pytest.raises(KubeAPIError) as raised:
        asyncio.run(statuses())
    assert str(raised.value).startswith(
        expected(mute, 'resourceclaim "rdma-nics" in namespace "ml"', "1.5")
    )


@pytest.mark.timeout(120)
def test_a_template_claim_whose_pod_cannot_be_read_by_the_timeout(mute: MuteServer) -> None:
    statuses = watch_claim_status(
        "accelerator", template=True, pod_name="trainer-0", namespace="ml", timeout=TIMEOUT
    )
    started = time.monotonic()
    with pytest.raises(KubeAPIError) as raised:
        next(iter(statuses))
    assert str(raised.value).startswith(expected(mute, 'pod "trainer-0" in namespace "ml"', "2"))
    assert time.monotonic() - started < 10


@pytest.mark.timeout(120)
def test_a_longer_timeout_ends_at_the_deadline_of_the_request(mute: MuteServer) -> None:
    with pytest.raises(KubeAPIError) as raised:
        list(watch_claim_status("rdma-nics", namespace="ml", timeout=60))
    assert str(raised.value).startswith(
        expected(mute, 'resourceclaim "rdma-nics" in namespace "ml"', "10")
    )
