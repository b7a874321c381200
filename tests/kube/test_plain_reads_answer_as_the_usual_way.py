"""The one-shot reads without ``client=`` (``read_device_health``, ``read_claim_status``,
``read_template_claim_status``) read with the standard library (a plain read: what makes
``dra-metadata health --fail-on`` cheap enough for a probe) where the configuration allows,
and answer and fail exactly as the usual way (lightkube's configuration, httpx2).

Against a real kube-apiserver (see kube_harness.py). Each case is read twice with the same
kubeconfig file: as it is (taken by the plain read) and with one field the plain read does not
serve and the usual way ignores (``extensions`` of the cluster), which sends the read the usual
way; results, errors and warnings must be the same. The probe itself runs as a subprocess,
with a kubeconfig and, where the machine allows a mount namespace (root, ``unshare -m``), with
the in-cluster ServiceAccount at its fixed place.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from dra_metadata import DeviceMetadataError
from dra_metadata.kube import (
    ClaimStatus,
    UnresolvedDeviceWarning,
    read_claim_status,
    read_device_health,
    read_template_claim_status,
)
from dra_metadata.kube._plain_config import plain_configuration

import kube_harness
from helpers import COMMAND, can_unshare
from kube_harness import ApiServer, cdi_pod, pods_only_token, report_cdi_health

pytestmark = pytest.mark.skipif(kube_harness.assets() is None, reason=kube_harness.SKIP_REASON)


class Kubeconfig:
    """One kubeconfig file, written for the plain read or for the usual way in turn."""

    def __init__(self, path: Path, cluster: dict[str, Any], user: dict[str, Any]) -> None:
        self.path = path
        self.cluster = cluster
        self.user = user

    def write(self, *, plain: bool) -> None:
        cluster = self.cluster if plain else {**self.cluster, "extensions": []}
        self.path.write_bytes(
            orjson.dumps(
                {
                    "clusters": [{"name": "test", "cluster": cluster}],
                    "users": [{"name": "user", "user": self.user}],
                    "contexts": [{"name": "test", "context": {"cluster": "test", "user": "user"}}],
                    "current-context": "test",
                }
            )
        )
        assert (plain_configuration() is not None) is plain


Outcome = tuple[str, Any, list[str]]


def outcome(read: Callable[[], object]) -> Outcome:
    """("ok", the health, warnings) or ("error", its type and message, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: Any = read()
        except DeviceMetadataError as error:
            return "error", (type(error).__name__, str(error)), [str(w.message) for w in caught]
    return "ok", result, [str(w.message) for w in caught]


def both_ways(kubeconfig: Kubeconfig, read: Callable[[], object]) -> Outcome:
    """The outcome of ``read``, checked to be the same the plain way and the usual way."""
    kubeconfig.write(plain=True)
    plain = outcome(read)
    kubeconfig.write(plain=False)
    usual = outcome(read)
    assert plain == usual
    return plain


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A clean environment with $KUBECONFIG naming tmp_path/kubeconfig (not written yet)."""
    for name in ("KUBERNETES_SERVICE_HOST", "POD_NAME", "POD_NAMESPACE", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    path = tmp_path / "kubeconfig"
    monkeypatch.setenv("KUBECONFIG", str(path))
    return path


@pytest.fixture
def kubeconfig(server: ApiServer, environment: Path) -> Kubeconfig:
    cluster = {"server": server.url, "certificate-authority": str(server.ca_file)}
    return Kubeconfig(environment, cluster, {"token": kube_harness.ADMIN_TOKEN})


@pytest.fixture
def health_pod(server: ApiServer, namespace: str) -> str:
    uids = cdi_pod(server, namespace)
    report_cdi_health(server, namespace, uids, "Unhealthy", "ECC errors")
    return namespace


def test_device_health_is_the_same_by_both_ways(kubeconfig: Kubeconfig, health_pod: str) -> None:
    state, health, told = both_ways(
        kubeconfig, lambda: read_device_health(namespace=health_pod, pod_name="dra-meta")
    )
    assert state == "ok"
    assert told == []
    assert {entry.health for entry in health} == {"Unhealthy"}
    assert all(entry.device for entry in health)  # named through the claims: GETs after the pod


def test_a_large_pod_is_read_the_same_by_both_ways(
    server: ApiServer, kubeconfig: Kubeconfig, health_pod: str
) -> None:
    pod = f"{kube_harness.PODS.format(namespace=health_pod)}/dra-meta"
    notes = {f"example.com/note-{index}": "x" * 1000 for index in range(200)}
    server.request(
        "PATCH",
        pod,
        {"metadata": {"annotations": notes}},
        content_type="application/merge-patch+json",
    )
    state, health, _ = both_ways(
        kubeconfig, lambda: read_device_health(namespace=health_pod, pod_name="dra-meta")
    )
    assert state == "ok"
    assert len(health) == 2


def test_claims_that_may_not_be_read_warn_the_same_by_both_ways(
    server: ApiServer, kubeconfig: Kubeconfig, health_pod: str
) -> None:
    kubeconfig.user = {"token": pods_only_token(server, health_pod)}
    state, health, told = both_ways(
        kubeconfig, lambda: read_device_health(namespace=health_pod, pod_name="dra-meta")
    )
    assert state == "ok"
    assert all(entry.unresolved for entry in health)
    assert len(told) == 1
    assert '"get" on "resourceclaims"' in told[0]
    kubeconfig.write(plain=True)
    with pytest.warns(UnresolvedDeviceWarning) as caught:
        read_device_health(namespace=health_pod, pod_name="dra-meta")
    assert caught[0].filename == __file__  # the line that called read_device_health


def test_a_claims_status_is_the_same_by_both_ways(
    server: ApiServer, kubeconfig: Kubeconfig, namespace: str
) -> None:
    path = kube_harness.allocated_claim(server, namespace, "rdma-nics", "nic-0", "nic-1")
    server.patch_status(path, kube_harness.network_status("nic-0"))
    state, status, _ = both_ways(
        kubeconfig, lambda: read_claim_status("rdma-nics", namespace=namespace)
    )
    assert state == "ok"
    assert isinstance(status, ClaimStatus)
    assert status.device_names() == ("nic-0", "nic-1")
    assert status.devices[0].network_data is not None


def test_a_template_claims_status_is_the_same_by_both_ways(
    server: ApiServer, kubeconfig: Kubeconfig, namespace: str
) -> None:
    generated = kube_harness.template_pod(server, namespace)
    state, status, _ = both_ways(
        kubeconfig,
        lambda: read_template_claim_status(
            "accelerator", pod_name="trainer-0", namespace=namespace
        ),
    )
    assert state == "ok"
    assert (status.name, status.device_names()) == (generated, ("gpu-3",))


@pytest.mark.parametrize("claims", [False, True], ids=["claims refused", "claim missing"])
def test_a_claim_that_cannot_be_read_is_the_same_error_by_both_ways(
    server: ApiServer, kubeconfig: Kubeconfig, namespace: str, *, claims: bool
) -> None:
    kubeconfig.user = {"token": pods_only_token(server, namespace, claims=claims)}
    state, (kind, message), _ = both_ways(
        kubeconfig, lambda: read_claim_status("nowhere", namespace=namespace)
    )
    assert state == "error"
    assert kind == ("MetadataNotFoundError" if claims else "KubeAPIError")
    assert "nowhere" in message


def test_a_missing_pod_is_the_same_error_by_both_ways(
    kubeconfig: Kubeconfig, namespace: str
) -> None:
    state, (kind, message), _ = both_ways(
        kubeconfig, lambda: read_device_health(namespace=namespace, pod_name="nowhere")
    )
    assert (state, kind) == ("error", "MetadataNotFoundError")
    assert "nowhere" in message


def test_a_token_the_server_refuses_is_the_same_error_by_both_ways(
    kubeconfig: Kubeconfig, namespace: str
) -> None:
    kubeconfig.user = {"token": "not-a-token-of-this-server"}
    state, (kind, message), _ = both_ways(
        kubeconfig, lambda: read_device_health(namespace=namespace, pod_name="dra-meta")
    )
    assert (state, kind) == ("error", "KubeAPIError")
    assert "401" in message


@pytest.mark.parametrize("token", ["abc\r\nX-Injected: 1", "tök", "two words"])
def test_a_token_no_header_can_carry_as_it_is_is_the_same_error_by_both_ways(
    kubeconfig: Kubeconfig, namespace: str, token: str
) -> None:
    kubeconfig.user = {"token": token}
    state, (kind, _), _ = both_ways(
        kubeconfig, lambda: read_device_health(namespace=namespace, pod_name="dra-meta")
    )
    assert (state, kind) == ("error", "KubeAPIError")


def test_a_certificate_authority_that_is_not_the_servers_is_the_same_error_by_both_ways(
    server: ApiServer, kubeconfig: Kubeconfig, namespace: str
) -> None:
    other = ssl_certificate_of_another_authority(server)
    kubeconfig.cluster = {"server": server.url, "certificate-authority-data": other}
    state, (kind, message), _ = both_ways(
        kubeconfig, lambda: read_device_health(namespace=namespace, pod_name="dra-meta")
    )
    assert (state, kind) == ("error", "KubeAPIError")
    assert "certificate" in message


def ssl_certificate_of_another_authority(server: ApiServer) -> str:
    """The base64 PEM of a certificate authority that did not sign the server's certificate."""
    directory = server.directory / "other-authority"
    directory.mkdir(exist_ok=True)
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-subj", "/CN=other", "-days", "1",
            "-keyout", str(directory / "key"), "-out", str(directory / "crt"),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return base64.b64encode((directory / "crt").read_bytes()).decode()


def test_a_server_that_cannot_be_reached_is_the_same_error_by_both_ways(
    kubeconfig: Kubeconfig, server: ApiServer, namespace: str
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    kubeconfig.cluster = {**kubeconfig.cluster, "server": f"https://127.0.0.1:{port}"}
    state, (kind, message), _ = both_ways(
        kubeconfig, lambda: read_device_health(namespace=namespace, pod_name="dra-meta")
    )
    assert (state, kind) == ("error", "KubeAPIError")
    assert f"127.0.0.1:{port}" in message


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that takes connections and never says a word (a hung API server)."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    done = threading.Event()

    def take() -> None:
        listener.settimeout(0.1)
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(listener.accept()[0])

    taker = threading.Thread(target=take, daemon=True)
    taker.start()
    yield int(listener.getsockname()[1])
    done.set()
    taker.join()
    for connection in held:
        connection.close()
    listener.close()


def test_a_server_that_never_answers_is_the_same_deadline_by_both_ways(
    kubeconfig: Kubeconfig, silent_server: int, namespace: str
) -> None:
    kubeconfig.cluster = {**kubeconfig.cluster, "server": f"https://127.0.0.1:{silent_server}"}
    state, (kind, message), _ = both_ways(
        kubeconfig,
        lambda: read_device_health(namespace=namespace, pod_name="dra-meta", timeout=0.5),
    )
    assert (state, kind) == ("error", "KubeAPIError")
    assert "0.5" in message


def probe(
    tmp_path: Path,
    options: list[str],
    environment: dict[str, str],
    before: Sequence[str] = (),
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``dra-metadata health --fail-on unhealthy --pod dra-meta OPTIONS`` as a subprocess (after
    the command ``before``, which execs it), and the modules it had loaded at its exit."""
    listing = tmp_path / "modules.txt"
    argv = [COMMAND, "health", "--fail-on", "unhealthy", "--pod", "dra-meta", *options]
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(listing)!r}, 'w').write('\\n'.join(sys.modules)))\n"
        f"sys.argv = {argv!r}\n"
        f"exec(compile(open({COMMAND!r}).read(), {COMMAND!r}, 'exec'))\n"
    )
    done = subprocess.run(
        [*before, sys.executable, "-c", code],
        env={"PATH": "/usr/bin:/bin", **environment},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # --fail-on unhealthy: the devices are Unhealthy
    assert "2 devices failing" in done.stderr
    assert "ECC errors" in done.stderr
    return done, set(listing.read_text().split())


def test_a_probe_imports_no_http_client_no_event_loop_and_no_typing(
    server: ApiServer, health_pod: str, tmp_path: Path
) -> None:
    kubeconfig = server.write_kubeconfig(tmp_path / "probe-kubeconfig")
    _, loaded = probe(tmp_path, ["--namespace", health_pod], {"KUBECONFIG": str(kubeconfig)})
    assert "dra_metadata.kube._plain_http" in loaded
    assert sorted(loaded & {"lightkube", "httpx2", "httpcore2", "asyncio", "anyio", "typing"}) == []


@pytest.mark.skipif(can_unshare() is not None, reason=str(can_unshare()))
def test_a_probe_in_a_pod_reads_its_service_account_plainly(
    server: ApiServer, health_pod: str, tmp_path: Path
) -> None:
    """The probe as a pod runs it: $KUBERNETES_SERVICE_HOST/PORT and the ServiceAccount at its
    fixed place, mounted there in a mount namespace of the test's own (a tmpfs on /run)."""
    account = kube_harness.service_account(server, tmp_path / "account", health_pod)
    in_pod = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(server.port)}
    _, loaded = probe(tmp_path, [], in_pod, kube_harness.in_a_pod(account))  # no --namespace
    assert "dra_metadata.kube._plain_http" in loaded
    assert sorted(loaded & {"lightkube", "httpx2", "asyncio", "yaml"}) == []


@pytest.mark.parametrize(
    "call",
    [
        "kube.read_claim_status('rdma-nics', namespace=NAMESPACE)",
        "kube.read_template_claim_status('accelerator', pod_name='trainer-0', namespace=NAMESPACE)",
        "kube.read_device_health(pod_name='dra-meta', namespace=NAMESPACE)",
    ],
    ids=["claim", "template claim", "health"],
)
def test_each_one_shot_read_is_plain_where_it_can_be(
    server: ApiServer, health_pod: str, tmp_path: Path, call: str
) -> None:
    kube_harness.allocated_claim(server, health_pod, "rdma-nics")
    kube_harness.template_pod(server, health_pod)
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    code = (
        "import sys, warnings\n"
        "from dra_metadata import kube\n"
        f"NAMESPACE = {health_pod!r}\n"
        f"print(type({call}).__name__)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'lightkube', 'httpx2', 'asyncio', 'typing'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PATH": "/usr/bin:/bin", "KUBECONFIG": str(kubeconfig)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[1] == "[]"
