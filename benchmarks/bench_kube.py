"""dra_metadata.kube: the cost of mapping a claim, and how fast a wait sees a status update.

    python benchmarks/bench_kube.py [--quick]

Always: mapping a real ResourceClaim (the DraNet claim with network data, as kube-apiserver 1.36
returned it) to a ClaimStatus and then to DeviceMetadata, beside decoding its JSON.

With KUBEBUILDER_ASSETS (a directory holding kube-apiserver and etcd, see tests/kube_harness.py),
against that server on 127.0.0.1, side by side in one run:

* one GET of the claim on a kept-alive connection (the floor of any read);
* read_claim_status (loads the configuration, opens a TLS connection, one GET);
* a status update reaching an open watch_claim_status (patch sent -> status yielded);
* a status update ending a wait (patch sent -> dra_metadata.wait_for_network_data(
  source="api") returns, and its asyncio twin await_for_network_data); the wait has been
  waiting on its watch for SETTLE_SECONDS when the driver's patch is sent;
* the same public wait on a claim that is already ready (configuration, TLS, one read).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from _common import interleaved_best, quick_option

TESTS = Path(__file__).parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from lightkube import Client  # noqa: E402
from lightkube.config.kubeconfig import KubeConfig  # noqa: E402
from lightkube.config.models import Cluster, User  # noqa: E402

import dra_metadata  # noqa: E402
from dra_metadata.kube import read_claim_status, watch_claim_status  # noqa: E402
from dra_metadata.kube._mapping import claim_status_from_object  # noqa: E402

import kube_harness  # noqa: E402 - from the tests directory, put on the path above

Samples = dict[str, list[float]]


def mapping(quick: bool) -> None:
    data = (TESTS / "data" / "kube" / "resourceclaim-dranet-network-data.json").read_bytes()
    status = claim_status_from_object(orjson.loads(data))
    best = interleaved_best(
        {
            "decode": lambda: orjson.loads(data),
            "status": lambda: claim_status_from_object(orjson.loads(data)),
            "metadata": status.to_metadata,
        },
        number=200 if quick else 2000,
    )
    decode, to_status, to_metadata = best["decode"], best["status"], best["metadata"]
    print(f"mapping the DraNet claim with network data ({len(data)} bytes of JSON):")
    print(f"  orjson.loads:                             {decode * 1e6:7.1f} us")
    print(
        f"  orjson.loads + claim_status_from_object:  {to_status * 1e6:7.1f} us "
        f"({to_status / decode:.1f}x the decode alone)"
    )
    print(f"  ClaimStatus.to_metadata:                  {to_metadata * 1e6:7.1f} us")


def claim(name: str) -> dict[str, Any]:
    request = {"name": "nics", "exactly": {"deviceClassName": "dranet"}}
    return {"metadata": {"name": name}, "spec": {"devices": {"requests": [request]}}}


ALLOCATION = {
    "allocation": {
        "devices": {
            "results": [{"request": "nics", "driver": "dra.net", "pool": "n", "device": "nic-0"}]
        }
    }
}


def network(generation: int) -> dict[str, Any]:
    data = {"interfaceName": f"eth{generation}", "ips": ["10.0.0.7/24"]}
    return {"devices": [{"driver": "dra.net", "pool": "n", "device": "nic-0", "networkData": data}]}


def milliseconds(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"p50 {statistics.median(values) * 1e3:7.2f} ms   p90 {p90 * 1e3:7.2f} ms"


def _client(server: kube_harness.ApiServer) -> Client:
    config = KubeConfig.from_one(
        cluster=Cluster(server=server.url, certificate_auth=str(server.ca_file)),
        user=User(token=kube_harness.ADMIN_TOKEN),
    )
    return Client(config=config)


def reads(server: kube_harness.ApiServer, client: Client, path: str, rounds: int) -> Samples:
    """One GET on the admin's kept-alive connection, then read_claim_status, in turn."""
    assert server.admin is not None
    namespace, name = path.split("/")[-3], path.rsplit("/", maxsplit=1)[-1]
    samples: Samples = {"get": [], "read": []}
    for _ in range(rounds):
        start = time.perf_counter()
        server.admin.get(path).raise_for_status()
        samples["get"].append(time.perf_counter() - start)
        start = time.perf_counter()
        read_claim_status(name, namespace=namespace, client=client)
        samples["read"].append(time.perf_counter() - start)
    return samples


def watch_events(
    server: kube_harness.ApiServer, client: Client, path: str, rounds: int
) -> list[float]:
    """An open watch, one status update at a time: patch sent -> status yielded."""
    namespace, name = path.split("/")[-3], path.rsplit("/", maxsplit=1)[-1]
    latencies = []
    statuses = watch_claim_status(name, namespace=namespace, client=client, timeout=600)
    next(statuses)
    for generation in range(rounds):
        start = time.perf_counter()
        server.patch_status(path, network(generation))
        next(statuses)
        latencies.append(time.perf_counter() - start)
    statuses.close()  # type: ignore[attr-defined]
    return latencies


SETTLE_SECONDS = 0.25
"""How long a wait runs before the driver's patch is sent: far more than it needs to load the
configuration, connect, read the claim and open its watch (the "already ready" line shows how
long that takes), so that the patch reaches a wait that is waiting on its watch."""


def _waited_claim(server: kube_harness.ApiServer, collection: str, name: str) -> str:
    server.create(collection, claim(name))
    server.patch_status(f"{collection}/{name}", ALLOCATION)
    return f"{collection}/{name}"


def wait_returns(
    server: kube_harness.ApiServer, client: Client, collection: str, rounds: int
) -> Samples:
    """dra_metadata.wait_for_network_data(source="api"): patch sent -> the wait returns.

    Also the same public call on a claim that is already ready (configuration, connection, one
    read: what the wait costs before it waits)."""
    namespace = collection.split("/")[-2]
    samples: Samples = {"wait": [], "ready": []}
    for trial in range(rounds):
        path = _waited_claim(server, collection, f"waited-{trial}")
        returned: list[float] = []

        def wait(name: str = f"waited-{trial}", returned: list[float] = returned) -> None:
            dra_metadata.wait_for_network_data(
                name, "nics", source="api", namespace=namespace, client=client, timeout=30
            )
            returned.append(time.perf_counter())

        waiter = threading.Thread(target=wait)
        waiter.start()
        time.sleep(SETTLE_SECONDS)
        sent = time.perf_counter()
        server.patch_status(path, network(0))
        waiter.join()
        samples["wait"].append(returned[0] - sent)
        start = time.perf_counter()
        dra_metadata.wait_for_network_data(
            f"waited-{trial}", "nics", source="api", namespace=namespace, client=client, timeout=30
        )
        samples["ready"].append(time.perf_counter() - start)
    return samples


def await_returns(
    server: kube_harness.ApiServer, client: Client, collection: str, rounds: int
) -> list[float]:
    """dra_metadata.await_for_network_data(source="api"): patch sent -> the await returns."""
    namespace = collection.split("/")[-2]

    async def one(name: str) -> float:
        path = await asyncio.to_thread(_waited_claim, server, collection, name)
        waiting = asyncio.ensure_future(
            dra_metadata.await_for_network_data(
                name, "nics", source="api", namespace=namespace, client=client, timeout=30
            )
        )
        await asyncio.sleep(SETTLE_SECONDS)
        sent = time.perf_counter()
        patch = asyncio.ensure_future(asyncio.to_thread(server.patch_status, path, network(0)))
        await waiting
        returned = time.perf_counter()
        await patch  # the watch may see the change before the patch is answered
        return returned - sent

    async def all_rounds() -> list[float]:
        return [await one(f"awaited-{trial}") for trial in range(rounds)]

    return asyncio.run(all_rounds())


def against_a_server(server: kube_harness.ApiServer, quick: bool) -> None:
    rounds = 5 if quick else 50
    collection = kube_harness.CLAIMS.format(namespace=server.namespace("bench"))
    server.create(collection, claim("watched"))
    server.patch_status(f"{collection}/watched", ALLOCATION)
    with _client(server) as client:
        samples = reads(server, client, f"{collection}/watched", rounds)
        to_event = watch_events(server, client, f"{collection}/watched", rounds)
        waits = wait_returns(server, client, collection, rounds)
        to_await = await_returns(server, client, collection, rounds)
    print(f"against kube-apiserver on 127.0.0.1 ({rounds} rounds each):")
    print(f"  one GET of the claim, kept-alive connection:         {milliseconds(samples['get'])}")
    print(f"  read_claim_status (config + TLS + GET):              {milliseconds(samples['read'])}")
    print(f"  status patch sent -> watch_claim_status event:       {milliseconds(to_event)}")
    print(f"  status patch sent -> wait_for_network_data returns:  {milliseconds(waits['wait'])}")
    print(f"  status patch sent -> await_for_network_data returns: {milliseconds(to_await)}")
    print(f"  wait_for_network_data, claim already ready:          {milliseconds(waits['ready'])}")
    floor = statistics.median(samples["get"])
    print(
        f"  wait_for_network_data return / one GET = "
        f"{statistics.median(waits['wait']) / floor:.1f}x, await / one GET = "
        f"{statistics.median(to_await) / floor:.1f}x, watch event / one GET = "
        f"{statistics.median(to_event) / floor:.1f}x (p50)"
    )


def main() -> None:
    quick = quick_option(__doc__)
    mapping(quick)
    if kube_harness.assets() is None:
        print(f"(no server measurements: {kube_harness.SKIP_REASON})")
        return
    with (
        tempfile.TemporaryDirectory() as directory,
        kube_harness.running(Path(directory)) as server,
    ):
        against_a_server(server, quick)


if __name__ == "__main__":
    main()
