"""kube-controller-manager beside the test kube-apiserver, and the objects pool status reads.

The controller runs only ``resourcepoolstatusrequest-controller`` with the
``DRAResourcePoolStatus`` gate, as the admin (``--use-service-account-credentials=false``), on
127.0.0.1; it is started for the tests that need it (the ``controller`` fixture, conftest.py)
and can be stopped and started again. ResourceSlices and allocations are written by hand as
the admin, as drivers and the scheduler would.
"""

from __future__ import annotations

import contextlib
import itertools
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx2

from kube_harness import CLAIMS, ApiServer, _free_port, _stop

REQUESTS = "/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
_probes = itertools.count()


@dataclass
class ControllerManager:
    """kube-controller-manager with the resource pool status controller only."""

    binary: Path
    server: ApiServer
    directory: Path
    port: int = field(default_factory=_free_port)
    process: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        kubeconfig = self.server.write_kubeconfig(self.directory / "kubeconfig")
        if self.log is None:
            self.log = (self.directory / "kube-controller-manager.log").open("ab")
        self.process = subprocess.Popen(
            [
                str(self.binary),
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--cert-dir={self.directory / 'certs'}",
                "--leader-elect=false",
                "--controllers=resourcepoolstatusrequest-controller",
                "--feature-gates=DRAResourcePoolStatus=true",
                "--use-service-account-credentials=false",
                "--v=2",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self._wait_answering()

    def _wait_answering(self) -> None:
        """Until a probe request is answered: informers synced, the controller working."""
        probe = self.server.create(
            REQUESTS,
            {
                "metadata": {"name": f"harness-probe-{next(_probes)}"},
                "spec": {"driver": "probe.harness.example.com"},
            },
        )
        path = f"{REQUESTS}/{probe['metadata']['name']}"
        deadline = time.monotonic() + 120
        try:
            while self.server.request("GET", path).get("status") is None:
                if not self.running:
                    raise RuntimeError(
                        f"kube-controller-manager exited; see {self.directory}/"
                        "kube-controller-manager.log"
                    )
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        "kube-controller-manager answered no ResourcePoolStatusRequest in 120 s; "
                        f"see {self.directory}/kube-controller-manager.log"
                    )
                time.sleep(0.05)
        finally:
            self.server.request("DELETE", path)

    def stop(self) -> None:
        _stop(self.process)
        self.process = None

    def close(self) -> None:
        self.stop()
        if self.log is not None:
            self.log.close()


# Objects as drivers and the scheduler write them ------------------------------------------


def resource_slice(
    driver: str,
    pool: str,
    devices: int,
    *,
    node: str | None = None,
    part: int = 1,
    slices: int = 1,
    generation: int = 1,
    first: int = 0,
) -> dict[str, Any]:
    """One ResourceSlice of ``pool``: on ``node`` (None: all nodes), ``devices`` devices."""
    where: dict[str, Any] = {"nodeName": node} if node else {"allNodes": True}
    return {
        "metadata": {"name": f"{driver}-{pool.replace('/', '-')}-g{generation}-{part}"},
        "spec": {
            "driver": driver,
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": slices},
            **where,
            "devices": [{"name": f"gpu-{index}"} for index in range(first, first + devices)],
        },
    }


def publish(server: ApiServer, *slices: dict[str, Any]) -> None:
    for one in slices:
        server.create(SLICES, one)


def allocate(
    server: ApiServer, namespace: str, name: str, driver: str, pool: str, *devices: str
) -> None:
    """A claim whose allocation (written as the scheduler would) uses ``devices`` of ``pool``."""
    collection = CLAIMS.format(namespace=namespace)
    request = {"name": "gpu", "exactly": {"deviceClassName": driver, "count": len(devices)}}
    server.create(
        collection, {"metadata": {"name": name}, "spec": {"devices": {"requests": [request]}}}
    )
    results = [
        {"request": "gpu", "driver": driver, "pool": pool, "device": device} for device in devices
    ]
    server.patch_status(f"{collection}/{name}", {"allocation": {"devices": {"results": results}}})


def four_pools(server: ApiServer, namespace: str, driver: str) -> None:
    """cluster (all nodes, 2 devices), node-a (4, one allocated), node-d (2 slices: 3 + 2),
    rolling (generation 1: 2 devices, generation 2: 3)."""
    publish(
        server,
        resource_slice(driver, "cluster", 2),
        resource_slice(driver, "node-a", 4, node="node-a"),
        resource_slice(driver, "node-d", 3, node="node-d", slices=2),
        resource_slice(driver, "node-d", 2, node="node-d", slices=2, part=2, first=3),
        resource_slice(driver, "rolling", 2, node="node-e"),
        resource_slice(driver, "rolling", 3, node="node-e", generation=2),
    )
    allocate(server, namespace, "training", driver, "node-a", "gpu-1")


def incomplete_pool(server: ApiServer, driver: str) -> None:
    """A pool that says it has 2 slices and has published 1: its requests stay unanswered."""
    publish(server, resource_slice(driver, "node-x", 1, node="node-x", slices=2))


def requests_of(server: ApiServer, driver: str) -> list[dict[str, Any]]:
    """The ResourcePoolStatusRequests for ``driver`` that exist now."""
    items = server.request("GET", REQUESTS)["items"]
    return [item for item in items if item["spec"]["driver"] == driver]


def wait_for_request(server: ApiServer, driver: str, timeout: float = 60) -> dict[str, Any]:
    """The first request for ``driver``, once some client has created it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = requests_of(server, driver)
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError(f"no ResourcePoolStatusRequest for {driver} within {timeout} s")


def answer_by_hand(server: ApiServer, name: str, status: dict[str, Any]) -> None:
    """Write a request's status as the controller would (the server validates it alike)."""
    server.request(
        "PUT",
        f"{REQUESTS}/{name}/status",
        {**server.request("GET", f"{REQUESTS}/{name}"), "status": status},
    )


def gone(server: ApiServer, name: str) -> bool:
    assert server.admin is not None
    with contextlib.suppress(httpx2.TransportError):
        return server.admin.get(f"{REQUESTS}/{name}").status_code == 404
    return False
