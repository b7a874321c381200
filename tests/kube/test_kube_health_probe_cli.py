"""``dra-metadata health --fail-on`` (a probe) and ``--watch`` as real subprocesses against a
real kube-apiserver (see kube_harness.py); the configuration is a kubeconfig ($KUBECONFIG).

A watching command is read line by line as it writes: each step waits for the line that says
the command got there, never for a time.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import kube_harness
from helpers import COMMAND
from kube_harness import ApiServer, cdi_pod, pods_only_token, report_cdi_health

pytestmark = pytest.mark.skipif(kube_harness.assets() is None, reason=kube_harness.SKIP_REASON)

LINE_SECONDS = 30


@pytest.fixture
def kubeconfig(server: ApiServer, tmp_path: Path) -> Path:
    return server.write_kubeconfig(tmp_path / "kubeconfig")


def environment(kubeconfig: Path) -> dict[str, str]:
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("POD_", "KUBERNETES_SERVICE_"))
    }
    return {**kept, "KUBECONFIG": str(kubeconfig)}


def health(namespace: str, kubeconfig: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, "health", "--namespace", namespace, "--pod", "dra-meta", *options],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environment(kubeconfig),
    )


class Watching:
    """A running ``health --watch``, read a line at a time."""

    def __init__(self, namespace: str, kubeconfig: Path, *options: str) -> None:
        self.process = subprocess.Popen(
            [COMMAND, "health", "--watch", "--namespace", namespace, "--pod", "dra-meta", *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(kubeconfig),
            # Python's own SIGINT handler, also when the suite runs as a background job of a
            # shell (SIGINT ignored, which the command rightly keeps ignoring)
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def line(self) -> str:
        """The next line the command writes (the reader thread hands them over as they come)."""
        try:
            return self.lines.get(timeout=LINE_SECONDS)
        except queue.Empty:
            raise AssertionError(f"no line within {LINE_SECONDS} s") from None

    def snapshot(self) -> list[dict[str, object]]:
        return json.loads(self.line())  # type: ignore[no-any-return]

    def end(self, timeout: float = LINE_SECONDS) -> tuple[int, str, str]:
        """The exit code, what it wrote after the lines read, and its stderr."""
        assert self.process.stderr is not None
        code = self.process.wait(timeout=timeout)
        self.reader.join(timeout)
        rest = "".join(self.lines.get() for _ in range(self.lines.qsize()))
        return code, rest, self.process.stderr.read()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(LINE_SECONDS)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def watching() -> Iterator[list[Watching]]:
    started: list[Watching] = []
    yield started
    for watch in started:
        watch.close()


def test_fail_on_is_a_probe(server: ApiServer, namespace: str, kubeconfig: Path) -> None:
    uids = cdi_pod(server, namespace)
    # Nothing reported yet: no device fails.
    assert health(namespace, kubeconfig, "--fail-on", "unknown").returncode == 0
    report_cdi_health(server, namespace, uids, "Healthy", "ok")
    healthy = health(namespace, kubeconfig, "--fail-on", "unhealthy", "-o", "json")
    assert (healthy.returncode, healthy.stderr) == (0, "")
    assert [entry["device"] for entry in json.loads(healthy.stdout)] == ["device-00", "device-01"]
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    failing = health(namespace, kubeconfig, "--fail-on", "unhealthy", "-o", "table")
    assert failing.returncode == 1
    assert failing.stderr == (
        "dra-metadata: 2 devices failing: device-00 (container c, claim direct) is Unhealthy: "
        "XID 79; device-01 (container c, claim fromtmpl) is Unhealthy: XID 79\n"
    )
    rows = failing.stdout.splitlines()
    assert rows[1].split()[:7] == [
        "c", "direct", "-", "test-driver.cdi.k8s.io", "e2e-node", "device-00", "Unhealthy",
    ]  # fmt: skip
    # Without --fail-on the command reports and does not judge.
    assert health(namespace, kubeconfig).returncode == 0
    report_cdi_health(server, namespace, uids, "Unknown", "no word from the driver")
    assert health(namespace, kubeconfig, "--fail-on", "unhealthy").returncode == 0
    unknown = health(namespace, kubeconfig, "--fail-on", "unknown")
    assert unknown.returncode == 1
    assert "is Unknown: no word from the driver" in unknown.stderr
    wrong = health(namespace, kubeconfig, "--fail-on", "sick")
    assert wrong.returncode == 2
    assert "invalid choice: 'sick'" in wrong.stderr


def test_watch_writes_a_json_line_per_change(
    server: ApiServer, namespace: str, kubeconfig: Path, watching: list[Watching]
) -> None:
    uids = cdi_pod(server, namespace)
    watch = Watching(namespace, kubeconfig, "-o", "json", "--timeout", "2m")
    watching.append(watch)
    assert watch.snapshot() == []
    report_cdi_health(server, namespace, uids, "Healthy", "ok")
    assert [(e["device"], e["health"]) for e in watch.snapshot()] == [
        ("device-00", "Healthy"),
        ("device-01", "Healthy"),
    ]
    report_cdi_health(server, namespace, uids, "Healthy", "ok", ready=False)  # no change
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    assert [e["health"] for e in watch.snapshot()] == ["Unhealthy", "Unhealthy"]
    watch.process.send_signal(signal.SIGTERM)
    code, rest, errors = watch.end()
    assert (code, rest, errors) == (143, "", "dra-metadata: terminated\n")  # one line


def test_watch_table_rows_and_interrupt(
    server: ApiServer, namespace: str, kubeconfig: Path, watching: list[Watching]
) -> None:
    uids = cdi_pod(server, namespace)
    report_cdi_health(server, namespace, uids, "Healthy", "ok")
    watch = Watching(namespace, kubeconfig, "-o", "table")
    watching.append(watch)
    assert watch.line().split() == [
        "TIME", "CONTAINER", "CLAIM", "REQUEST", "DRIVER", "POOL", "DEVICE", "HEALTH", "MESSAGE",
    ]  # fmt: skip
    assert watch.line().split()[1:] == [
        "c", "direct", "-", "test-driver.cdi.k8s.io", "e2e-node", "device-00", "Healthy", "ok",
    ]  # fmt: skip
    assert watch.line().split()[6:8] == ["device-01", "Healthy"]
    # One row per device that changed.
    server.request(
        "PATCH",
        f"{kube_harness.PODS.format(namespace=namespace)}/dra-meta/status",
        {
            "status": {
                "containerStatuses": [
                    {
                        "name": "c",
                        "image": "e2e.local/busybox:1",
                        "imageID": "",
                        "ready": True,
                        "restartCount": 0,
                        "allocatedResourcesStatus": [
                            {
                                "name": "claim:direct",
                                "resources": [
                                    {
                                        "resourceID": kube_harness.cdi_id(uids["direct"], "req-a"),
                                        "health": "Unhealthy",
                                        "message": "XID 79",
                                    }
                                ],
                            },
                            {
                                "name": "claim:fromtmpl",
                                "resources": [
                                    {
                                        "resourceID": kube_harness.cdi_id(
                                            uids["fromtmpl"], "req-t"
                                        ),
                                        "health": "Healthy",
                                        "message": "ok",
                                    }
                                ],
                            },
                        ],
                    }
                ]
            }
        },
        content_type="application/strategic-merge-patch+json",
    )
    assert watch.line().split()[6:] == ["device-00", "Unhealthy", "XID", "79"]
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    assert watch.line().split()[6:8] == ["device-01", "Unhealthy"]
    watch.process.send_signal(signal.SIGINT)
    code, rest, errors = watch.end()
    assert (code, rest, errors) == (130, "", "dra-metadata: interrupted\n")  # one line


def test_watch_ends_at_its_timeout_or_at_the_first_failure(
    server: ApiServer, namespace: str, kubeconfig: Path, watching: list[Watching]
) -> None:
    uids = cdi_pod(server, namespace)
    report_cdi_health(server, namespace, uids, "Healthy", "ok")
    started = time.monotonic()
    timed = health(namespace, kubeconfig, "--watch", "--timeout", "1s", "-o", "json")
    assert (timed.returncode, timed.stderr) == (0, "")
    assert len(timed.stdout.splitlines()) == 1
    assert time.monotonic() - started < 30
    watch = Watching(namespace, kubeconfig, "--fail-on", "unhealthy", "-o", "json")
    watching.append(watch)
    assert [e["health"] for e in watch.snapshot()] == ["Healthy", "Healthy"]
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    assert [e["health"] for e in watch.snapshot()] == ["Unhealthy", "Unhealthy"]
    code, rest, errors = watch.end()
    assert (code, rest) == (1, "")
    assert errors.startswith("dra-metadata: 2 devices failing: device-00 (container c")


def test_an_unreachable_server_is_exit_5_also_with_watch(
    server: ApiServer, namespace: str, kubeconfig: Path, tmp_path: Path
) -> None:
    import socket  # noqa: PLC0415

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        config = tmp_path / "silent"
        config.write_text(kubeconfig.read_text().replace(server.url, f"https://127.0.0.1:{port}"))
        result = health(namespace, config, "--watch", "--timeout", "1s")
    assert result.returncode == 5
    assert result.stdout == ""
    assert result.stderr.startswith(
        f"dra-metadata: the Kubernetes API server at https://127.0.0.1:{port} did not answer to "
        f'get pod "dra-meta" in namespace "{namespace}" within 1 s'
    )
    assert result.stderr.count("\n") == 1


def test_without_get_on_resourceclaims_one_warning_says_what_to_grant(
    server: ApiServer, namespace: str, tmp_path: Path
) -> None:
    uids = cdi_pod(server, namespace)
    report_cdi_health(server, namespace, uids, "Unhealthy", "XID 79")
    reader = server.write_kubeconfig(tmp_path / "reader", pods_only_token(server, namespace))
    result = health(namespace, reader, "--fail-on", "unhealthy", "-o", "json")
    assert result.returncode == 1
    warning, failing = result.stderr.splitlines()
    assert warning.startswith(
        "dra-metadata: warning: the kubelet names these devices by their CDI device IDs"
    )
    assert 'grant "get" on "resourceclaims" (apiGroup resource.k8s.io)' in warning
    assert failing.startswith(
        f"dra-metadata: 2 devices failing: {kube_harness.cdi_id(uids['direct'], 'req-a')} "
    )
    documents = json.loads(result.stdout)
    assert (documents[0]["device"], documents[0]["claimName"]) == (None, "claim-direct")
    assert documents[0]["unresolved"].startswith("the ResourceClaims cannot be read")
    allowed = server.write_kubeconfig(
        tmp_path / "allowed", pods_only_token(server, namespace, claims=True)
    )
    named = health(namespace, allowed, "-o", "json")
    assert (named.returncode, named.stderr) == (0, "")
    assert [d["device"] for d in json.loads(named.stdout)] == ["device-00", "device-01"]


def test_the_example_probe_as_the_example_service_account(
    server: ApiServer, namespace: str, tmp_path: Path
) -> None:
    """examples/kubernetes/device-health-probe.yaml's pod and probe, with api-reader-rbac.yaml."""
    import yaml  # noqa: PLC0415 - comes with lightkube

    from helpers import REPO  # noqa: PLC0415

    documents = list(
        yaml.safe_load_all((REPO / "examples/kubernetes/device-health-probe.yaml").read_text())
    )
    template, pod = documents
    (container,) = pod["spec"]["containers"]
    probe = container["livenessProbe"]["exec"]["command"]
    assert probe[:2] == ["dra-metadata", "health"]
    assert pod["spec"]["serviceAccountName"] == "dra-metadata-reader"
    token = kube_harness.apply_example_rbac(server, namespace)
    server.create(
        f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaimtemplates", template
    )
    server.create(kube_harness.PODS.format(namespace=namespace), pod)
    claims = kube_harness.CLAIMS.format(namespace=namespace)
    generated = server.create(
        claims,
        {
            "metadata": {"generateName": "trainer-0-gpu-"},
            "spec": template["spec"]["spec"],
        },
    )
    name, uid = generated["metadata"]["name"], generated["metadata"]["uid"]
    server.patch_status(
        f"{claims}/{name}",
        kube_harness.allocation("gpu-3", request="gpu", driver="gpu.example.com"),
    )
    pods = f"{kube_harness.PODS.format(namespace=namespace)}/trainer-0"
    server.patch_status(
        pods, {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": name}]}
    )

    def report(health: str) -> None:
        server.request(
            "PATCH",
            f"{pods}/status",
            {
                "status": {
                    "containerStatuses": [
                        {
                            "name": "trainer",
                            "image": container["image"],
                            "imageID": "",
                            "ready": True,
                            "restartCount": 0,
                            "allocatedResourcesStatus": [
                                {
                                    "name": "claim:gpu",
                                    "resources": [
                                        {
                                            "resourceID": f"gpu.example.com/gpu=claim-{uid}-gpu",
                                            "health": health,
                                            "message": "XID 79",
                                        }
                                    ],
                                }
                            ],
                        }
                    ]
                }
            },
            content_type="application/strategic-merge-patch+json",
        )

    reader = server.write_kubeconfig(tmp_path / "reader", token)
    env = {**environment(reader), "POD_NAME": "trainer-0", "POD_NAMESPACE": namespace}

    def run_probe() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [COMMAND, *probe[1:]], capture_output=True, text=True, timeout=60, env=env, check=False
        )

    assert run_probe().returncode == 0  # nothing reported yet
    report("Healthy")
    assert run_probe().returncode == 0
    report("Unhealthy")
    failed = run_probe()
    assert failed.returncode == 1
    assert failed.stderr == (
        "dra-metadata: 1 device failing: gpu-3 (container trainer, claim gpu) is Unhealthy: "
        "XID 79\n"
    )
