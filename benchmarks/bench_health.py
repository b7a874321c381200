"""Device health against a real API server: how fast a change reaches the watch, and what a
``dra-metadata health --fail-on`` probe costs per period.

    python benchmarks/bench_health.py [--quick]

Needs KUBEBUILDER_ASSETS (kube-apiserver and etcd, see tests/kube_harness.py). Against that
server on 127.0.0.1, side by side in one run:

* one GET of the pod on a kept-alive connection, and on a fresh TLS connection (the request
  a probe cannot avoid);
* a pod status write (the kubelet's, keyed by CDI device IDs as on a real node) reaching an
  open watch_device_health (patch sent -> snapshot yielded), beside a claim status write
  reaching watch_claim_status;
* the probe: ``dra-metadata health --fail-on unhealthy`` in a fresh process each time (wall
  time, median of 15), beside ``python -c "import ssl, orjson"`` (the floor of any Python
  command that speaks TLS and JSON), interleaved; the target is at most 2x the floor plus one
  request's time.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import quick_option

TESTS = Path(__file__).parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from lightkube import Client  # noqa: E402
from lightkube.config.kubeconfig import KubeConfig  # noqa: E402
from lightkube.config.models import Cluster, User  # noqa: E402

from dra_metadata.kube import watch_claim_status, watch_device_health  # noqa: E402

import kube_harness  # noqa: E402 - from the tests directory, put on the path above

COMMAND = str(Path(sys.executable).parent / "dra-metadata")
PROBE_RUNS = 15


def milliseconds(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"p50 {statistics.median(values) * 1e3:7.2f} ms   p90 {p90 * 1e3:7.2f} ms"


def fresh_gets(server: kube_harness.ApiServer, path: str, rounds: int) -> dict[str, list[float]]:
    import ssl  # noqa: PLC0415

    import httpx2  # noqa: PLC0415

    assert server.admin is not None
    samples: dict[str, list[float]] = {"kept": [], "fresh": []}
    headers = {"Authorization": f"Bearer {kube_harness.ADMIN_TOKEN}"}
    for _ in range(rounds):
        start = time.perf_counter()
        server.admin.get(path).raise_for_status()
        samples["kept"].append(time.perf_counter() - start)
        start = time.perf_counter()
        verify = ssl.create_default_context(cafile=str(server.ca_file))
        with httpx2.Client(base_url=server.url, verify=verify, headers=headers) as fresh:
            fresh.get(path).raise_for_status()
        samples["fresh"].append(time.perf_counter() - start)
    return samples


def health_changes(
    server: kube_harness.ApiServer, namespace: str, uids: dict[str, str], rounds: int
) -> list[float]:
    latencies = []
    snapshots = watch_device_health(namespace=namespace, pod_name="dra-meta", timeout=600)
    next(snapshots)
    for index in range(rounds):
        health = "Unhealthy" if index % 2 == 0 else "Healthy"
        start = time.perf_counter()
        kube_harness.report_cdi_health(server, namespace, uids, health)
        snapshot = next(snapshots)
        latencies.append(time.perf_counter() - start)
        assert [entry.health for entry in snapshot] == [health, health]
    snapshots.close()  # type: ignore[attr-defined]
    return latencies


def claim_changes(server: kube_harness.ApiServer, namespace: str, rounds: int) -> list[float]:
    path = kube_harness.allocated_claim(server, namespace, "rdma-nics")
    config = KubeConfig.from_one(
        cluster=Cluster(server=server.url, certificate_auth=str(server.ca_file)),
        user=User(token=kube_harness.ADMIN_TOKEN),
    )
    latencies = []
    with Client(config=config) as client:
        statuses = watch_claim_status("rdma-nics", namespace=namespace, client=client, timeout=600)
        next(statuses)
        for index in range(rounds):
            start = time.perf_counter()
            server.patch_status(
                path, kube_harness.network_status("nic-0") if index % 2 == 0 else {"devices": []}
            )
            next(statuses)
            latencies.append(time.perf_counter() - start)
        statuses.close()  # type: ignore[attr-defined]
    return latencies


def probe_costs(environment: dict[str, str], namespace: str) -> dict[str, list[float]]:
    probe = [
        COMMAND,
        "health",
        "--fail-on",
        "unhealthy",
        "--namespace",
        namespace,
        "--pod",
        "dra-meta",
    ]
    floor = [sys.executable, "-c", "import ssl, orjson"]
    samples: dict[str, list[float]] = {"probe": [], "floor": []}
    for _ in range(PROBE_RUNS):
        for name, argv in (("floor", floor), ("probe", probe)):
            start = time.perf_counter()
            done = subprocess.run(argv, env=environment, capture_output=True, check=False)
            samples[name].append(time.perf_counter() - start)
            assert done.returncode == 0, done.stderr
    return samples


def main() -> None:
    quick = quick_option(__doc__)
    if kube_harness.assets() is None:
        print(f"(nothing measured: {kube_harness.SKIP_REASON})")
        return
    rounds = 5 if quick else 40
    with (
        tempfile.TemporaryDirectory() as directory,
        kube_harness.running(Path(directory)) as server,
    ):
        namespace = server.namespace("bench")
        uids = kube_harness.cdi_pod(server, namespace)
        kube_harness.report_cdi_health(server, namespace, uids, "Healthy", "ok")
        pod = f"{kube_harness.PODS.format(namespace=namespace)}/dra-meta"
        kubeconfig = server.write_kubeconfig(Path(directory) / "kubeconfig")
        os.environ["KUBECONFIG"] = str(kubeconfig)  # watch_device_health takes no client
        gets = fresh_gets(server, pod, rounds)
        to_snapshot = health_changes(server, namespace, uids, rounds)
        to_status = claim_changes(server, namespace, rounds)
        kube_harness.report_cdi_health(server, namespace, uids, "Healthy", "ok")
        environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("POD_", "KUBERNETES_"))
        }
        environment["KUBECONFIG"] = str(kubeconfig)
        probes = probe_costs(environment, namespace)
    floor, probe = statistics.median(probes["floor"]), statistics.median(probes["probe"])
    fresh = statistics.median(gets["fresh"])
    print(f"against kube-apiserver on 127.0.0.1 ({rounds} rounds; probe: {PROBE_RUNS} runs):")
    print(f"  one GET of the pod, kept-alive connection:       {milliseconds(gets['kept'])}")
    print(f"  one GET of the pod, fresh TLS connection:        {milliseconds(gets['fresh'])}")
    print(f"  pod status write -> watch_device_health snapshot: {milliseconds(to_snapshot)}")
    print(f"  claim status write -> watch_claim_status status:  {milliseconds(to_status)}")
    print(f"  python -c 'import ssl, orjson' (fresh process):   {milliseconds(probes['floor'])}")
    print(f"  dra-metadata health --fail-on unhealthy:          {milliseconds(probes['probe'])}")
    target = 2 * floor + fresh
    print(
        f"  probe / floor = {probe / floor:.2f}x; target 2 x floor + one fresh GET = "
        f"{target * 1e3:.1f} ms: {'met' if probe <= target else 'NOT met'} (p50)"
    )


if __name__ == "__main__":
    main()
