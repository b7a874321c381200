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
  command that speaks TLS and JSON), round-robin; the target is at most 2x the floor plus one
  request's time. Each way a probe finds its configuration is measured: the in-cluster
  ServiceAccount (in a pod; here in a mount namespace of its own, when run as root), a
  kubeconfig in JSON and in YAML (PyYAML's import), and a kubeconfig the plain read declines
  (the usual way: lightkube, httpx2, asyncio).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import yaml

from _common import quick_option

TESTS = Path(__file__).parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from lightkube import Client  # noqa: E402
from lightkube.config.kubeconfig import KubeConfig  # noqa: E402
from lightkube.config.models import Cluster, User  # noqa: E402

from dra_metadata.kube import watch_claim_status, watch_device_health  # noqa: E402

import kube_harness  # noqa: E402 - from the tests directory, put on the path above
from helpers import can_unshare  # noqa: E402 - the same

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


PROBE_CHILD = "--probe-child"
"""Run as ``bench_health.py --probe-child SETTINGS``: time the probes (below), print JSON."""


def probe_modes(settings: dict[str, str]) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each way a probe finds its configuration, as (argv, environment)."""
    probe = [COMMAND, "health", "--fail-on", "unhealthy", "--namespace", settings["namespace"]]
    probe += ["--pod", "dra-meta"]
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    modes = {
        "floor": ([sys.executable, "-c", "import ssl, orjson"], base),
        "kubeconfig (JSON)": (probe, {**base, "KUBECONFIG": settings["json"]}),
        "kubeconfig (YAML)": (probe, {**base, "KUBECONFIG": settings["yaml"]}),
        "kubeconfig, the usual way": (probe, {**base, "KUBECONFIG": settings["usual"]}),
    }
    if settings.get("in_cluster"):
        in_pod = {
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": settings["port"],
        }
        modes["in-cluster ServiceAccount"] = (probe, {**base, **in_pod})
    return modes


def time_probes(settings: dict[str, str]) -> dict[str, list[float]]:
    """Every mode in a fresh process each time, round-robin, PROBE_RUNS times."""
    modes = probe_modes(settings)
    samples: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(PROBE_RUNS):
        for name, (argv, environment) in modes.items():
            start = time.perf_counter()
            done = subprocess.run(argv, env=environment, capture_output=True, check=False)
            samples[name].append(time.perf_counter() - start)
            assert done.returncode == 0, (name, done.stderr)
    return samples


def probe_costs(
    server: kube_harness.ApiServer, namespace: str, directory: Path
) -> tuple[dict[str, list[float]], str | None]:
    """The probe's cost in each mode, and why the in-cluster one is missing (if it is)."""
    json_file = server.write_kubeconfig(directory / "probe.json")
    document = orjson.loads(json_file.read_bytes())
    yaml_file = directory / "probe.yaml"
    yaml_file.write_text(yaml.safe_dump(document))  # as kubectl writes it: YAML
    document["clusters"][0]["cluster"]["extensions"] = []  # the plain read declines it
    usual_file = directory / "usual.json"
    usual_file.write_bytes(orjson.dumps(document))
    settings = {
        "namespace": namespace,
        "json": str(json_file),
        "yaml": str(yaml_file),
        "usual": str(usual_file),
        "port": str(server.port),
    }
    refusal = can_unshare()
    if refusal is not None:
        return time_probes(settings), refusal
    account = kube_harness.service_account(server, directory / "serviceaccount", namespace)
    settings["in_cluster"] = "yes"
    child = [sys.executable, __file__, PROBE_CHILD, orjson.dumps(settings).decode()]
    done = subprocess.run(
        [*kube_harness.in_a_pod(account), *child], capture_output=True, check=True
    )
    return orjson.loads(done.stdout), None


def main() -> None:
    if sys.argv[1:2] == [PROBE_CHILD]:
        print(orjson.dumps(time_probes(orjson.loads(sys.argv[2]))).decode())
        return
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
        probes, refusal = probe_costs(server, namespace, Path(directory))
    fresh = statistics.median(gets["fresh"])
    print(f"against kube-apiserver on 127.0.0.1 ({rounds} rounds; probe: {PROBE_RUNS} runs):")
    print(f"  one GET of the pod, kept-alive connection:       {milliseconds(gets['kept'])}")
    print(f"  one GET of the pod, fresh TLS connection:        {milliseconds(gets['fresh'])}")
    print(f"  pod status write -> watch_device_health snapshot: {milliseconds(to_snapshot)}")
    print(f"  claim status write -> watch_claim_status status:  {milliseconds(to_status)}")
    floor = statistics.median(probes.pop("floor"))
    target = 2 * floor + fresh
    print(f"  python -c 'import ssl, orjson' (fresh process):   p50 {floor * 1e3:7.2f} ms")
    print(
        f"  dra-metadata health --fail-on unhealthy, each in a fresh process; target 2 x floor "
        f"+ one fresh GET = {target * 1e3:.1f} ms:"
    )
    for mode, samples in probes.items():
        probe = statistics.median(samples)
        verdict = "met" if probe <= target else "NOT met"
        print(f"    {mode:27s} {milliseconds(samples)}   {probe / floor:.2f}x floor: {verdict}")
    if refusal is not None:
        print(f"    in-cluster ServiceAccount   not measured: {refusal}")


if __name__ == "__main__":
    main()
