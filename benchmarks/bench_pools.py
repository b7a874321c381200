"""Resource pool status: the cost of mapping an answer, and the time from the call to the result.

    python benchmarks/bench_pools.py [--quick]

Always: mapping a real answered ResourcePoolStatusRequest (6 pools, as kube-controller-manager
1.36.2 wrote it) to a PoolStatusResult, beside decoding its JSON.

With KUBEBUILDER_ASSETS holding kube-apiserver, etcd and kube-controller-manager (see
tests/kube_harness.py), against those on 127.0.0.1, side by side in one run (round-robin):

* one GET of a ResourceSlice on a kept-alive connection (the floor of any read);
* read_pool_status of a driver with 6 pools: the call to the result (configuration, TLS,
  create, watch until the controller answers, delete);
* aread_pool_status, the same in asyncio.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

from _common import interleaved_best, quick_option

TESTS = Path(__file__).parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from lightkube import Client  # noqa: E402
from lightkube.config.kubeconfig import KubeConfig  # noqa: E402
from lightkube.config.models import Cluster, User  # noqa: E402

from dra_metadata.kube import aread_pool_status, read_pool_status  # noqa: E402
from dra_metadata.kube._pool_mapping import pool_status_result_from_object  # noqa: E402

import kube_harness  # noqa: E402 - from the tests directory, put on the path above
import kube_pools_harness  # noqa: E402

DRIVER = "gpu.bench.example.com"


def mapping(quick: bool) -> None:
    data = (TESTS / "data" / "pool-status" / "rpsr-complete-driver-all-pools.json").read_bytes()
    best = interleaved_best(
        {
            "decode": lambda: orjson.loads(data),
            "result": lambda: pool_status_result_from_object(orjson.loads(data)),
        },
        number=200 if quick else 2000,
    )
    decode, result = best["decode"], best["result"]
    print(f"mapping an answer with 6 pools ({len(data)} bytes of JSON):")
    print(f"  orjson.loads:                                  {decode * 1e6:7.1f} us")
    print(
        f"  orjson.loads + pool_status_result_from_object: {result * 1e6:7.1f} us "
        f"({result / decode:.1f}x the decode alone)"
    )


def milliseconds(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"p50 {statistics.median(values) * 1e3:7.2f} ms   p90 {p90 * 1e3:7.2f} ms"


def _config(server: kube_harness.ApiServer) -> KubeConfig:
    return KubeConfig.from_one(
        cluster=Cluster(server=server.url, certificate_auth=str(server.ca_file)),
        user=User(token=kube_harness.ADMIN_TOKEN),
    )


def six_pools(server: kube_harness.ApiServer) -> str:
    slices = [
        kube_pools_harness.resource_slice(DRIVER, f"node-{index}", 4, node=f"node-{index}")
        for index in range(6)
    ]
    kube_pools_harness.publish(server, *slices)
    return f"{kube_pools_harness.SLICES}/{slices[0]['metadata']['name']}"


def against_a_server(server: kube_harness.ApiServer, quick: bool) -> None:
    rounds = 5 if quick else 50
    slice_path = six_pools(server)
    assert server.admin is not None
    samples: dict[str, list[float]] = {"get": [], "read": [], "aread": []}

    async def aread(client: Client) -> float:
        start = time.perf_counter()
        result = await aread_pool_status(DRIVER, client=client)
        elapsed = time.perf_counter() - start
        assert len(result.pools) == 6
        return elapsed

    with Client(config=_config(server)) as client:
        for _ in range(rounds):
            start = time.perf_counter()
            server.admin.get(slice_path).raise_for_status()
            samples["get"].append(time.perf_counter() - start)
            start = time.perf_counter()
            result = read_pool_status(DRIVER, client=client)
            samples["read"].append(time.perf_counter() - start)
            assert len(result.pools) == 6
            samples["aread"].append(asyncio.run(aread(client)))
    left = kube_pools_harness.requests_of(server, DRIVER)
    assert left == [], left
    floor = statistics.median(samples["get"])
    print(f"against kube-apiserver + kube-controller-manager on 127.0.0.1 ({rounds} rounds each):")
    print(f"  one GET of a ResourceSlice, kept-alive connection:  {milliseconds(samples['get'])}")
    print(f"  read_pool_status, 6 pools (call -> result):         {milliseconds(samples['read'])}")
    print(f"  aread_pool_status, 6 pools (call -> result):        {milliseconds(samples['aread'])}")
    print(
        f"  read_pool_status / one GET = {statistics.median(samples['read']) / floor:.1f}x, "
        f"aread_pool_status / one GET = {statistics.median(samples['aread']) / floor:.1f}x (p50)"
    )


def main() -> None:
    quick = quick_option(__doc__)
    mapping(quick)
    if kube_harness.assets() is None:
        print(f"(no server measurements: {kube_harness.SKIP_REASON})")
        return
    binary = kube_harness.controller_assets()
    if binary is None:
        print(f"(no server measurements: {kube_harness.CONTROLLER_SKIP_REASON})")
        return
    with (
        tempfile.TemporaryDirectory() as directory,
        kube_harness.running(Path(directory) / "apiserver") as server,
    ):
        controller = kube_pools_harness.ControllerManager(binary, server, Path(directory) / "kcm")
        try:
            controller.start()
            against_a_server(server, quick)
        finally:
            controller.close()


if __name__ == "__main__":
    main()
