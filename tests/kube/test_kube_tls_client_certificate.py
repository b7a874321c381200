"""A TLS server that demands a client certificate: a KubeAPIError (exit 5) naming the TLS failure.

With TLS 1.3 the server checks the client's certificate after the client's side of the
handshake is done, so its refusal (an alert) reaches the client on the first read of the
connection, or, on another run, while the handshake ends: whichever way it arrives, the call
raises a KubeAPIError that says TLS failed and what the server wants, never a bare
ssl.SSLError (which the command took for a file problem: exit 6). Each case runs enough calls
to meet both timings.

The server is a real TLS peer on 127.0.0.1 (a thread of this process, Python's ssl module) with
a certificate made by openssl; no Kubernetes API is involved: no request gets that far.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from dra_metadata import KubeAPIError
from dra_metadata.kube import awatch_claim_status, read_claim_status, watch_claim_status

from helpers import run_command

CALLS = 30  # per case: the alert comes before the first read in some, after it in others
REFUSED = (
    "the server demands a client certificate and the configuration gives none: give the "
    "kubeconfig's user a client-certificate and client-key that the server trusts"
)
NOT_ACCEPTED = "the server does not accept the client certificate of the configuration"
HANDSHAKE_REFUSED = (  # TLS 1.2: a missing certificate ends the handshake itself
    "the server demands a client certificate that the configuration does not give or that it "
    "does not accept (the kubeconfig user's client-certificate and client-key), or it shares "
    "no TLS version or cipher with this client"
)


def make_certificate(directory: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    certificate, key = directory / f"{name}.crt", directory / f"{name}.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(certificate),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return certificate, key


class ClientCertificateServer:
    """Completes TLS only with a client certificate signed by ``client_ca``: every handshake
    without one fails on the server's side, which sends its alert and closes."""

    def __init__(self, directory: Path, *, tls_1_2: bool = False) -> None:
        self.certificate, key = make_certificate(directory, "server")
        self.client_ca, _ = make_certificate(directory, "client-ca")
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(self.certificate, key)
        self.context.load_verify_locations(self.client_ca)
        self.context.verify_mode = ssl.CERT_REQUIRED
        if tls_1_2:
            self.context.maximum_version = ssl.TLSVersion.TLSv1_2
        self.refusal = HANDSHAKE_REFUSED if tls_1_2 else REFUSED
        """How the message of a client without a certificate ends."""
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.refused = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._handshake, args=(connection,), daemon=True).start()

    def _handshake(self, connection: socket.socket) -> None:
        connection.settimeout(30)
        try:
            with self.context.wrap_socket(connection, server_side=True):
                pass  # not reached without a client certificate
        except (ssl.SSLError, OSError):
            self.refused += 1
        finally:
            connection.close()

    def kubeconfig(self, path: Path, user: dict[str, object] | None = None) -> Path:
        document = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "c",
                    "cluster": {
                        "server": f"https://127.0.0.1:{self.port}",
                        "certificate-authority": str(self.certificate),
                    },
                }
            ],
            "users": [{"name": "u", "user": user or {"token": "t"}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
        path.write_bytes(orjson.dumps(document))
        return path

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(params=[False, True], ids=["TLS 1.3", "TLS 1.2"])
def server(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ClientCertificateServer]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test server's certificates")
    running = ClientCertificateServer(tmp_path, tls_1_2=request.param)
    for variable in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(running.kubeconfig(tmp_path / "kubeconfig")))
    yield running
    running.close()


def said(server: ClientCertificateServer, asked: str) -> str:
    return f"TLS with the Kubernetes API server at https://127.0.0.1:{server.port} failed {asked} ("


@pytest.mark.timeout(300)
def test_every_read_names_the_tls_failure(server: ClientCertificateServer) -> None:
    start = said(server, 'to get resourceclaim "rdma-nics" in namespace "ml"')
    for _ in range(CALLS):
        with pytest.raises(KubeAPIError) as raised:
            read_claim_status("rdma-nics", namespace="ml", timeout=30)
        message = str(raised.value)
        assert message.startswith(start), message
        assert message.endswith(server.refusal), message
        assert raised.value.status is None
    assert server.refused >= CALLS


@pytest.mark.timeout(300)
def test_watches_name_the_tls_failure(server: ClientCertificateServer) -> None:
    start = said(server, 'to get resourceclaim "rdma-nics" in namespace "ml"')

    async def first() -> None:
        async for _ in awatch_claim_status("rdma-nics", namespace="ml", timeout=30):
            return

    for _ in range(CALLS // 3):
        with pytest.raises(KubeAPIError) as raised:
            next(iter(watch_claim_status("rdma-nics", namespace="ml", timeout=30)))
        assert str(raised.value).startswith(start), str(raised.value)
        with pytest.raises(KubeAPIError) as raised:
            asyncio.run(first())
        assert str(raised.value).startswith(start), str(raised.value)


def test_a_client_certificate_the_server_does_not_trust(
    server: ClientCertificateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other, key = make_certificate(tmp_path, "stranger")  # signed by no authority it trusts
    user = {"client-certificate": str(other), "client-key": str(key)}
    monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig(tmp_path / "stranger", user)))
    for _ in range(CALLS // 3):
        with pytest.raises(KubeAPIError) as raised:
            read_claim_status("rdma-nics", namespace="ml", timeout=30)
        message = str(raised.value)
        start = said(server, 'to get resourceclaim "rdma-nics" in namespace "ml"')
        assert message.startswith(start), message
        assert NOT_ACCEPTED in message or HANDSHAKE_REFUSED in message, message


@pytest.mark.timeout(300)
def test_the_command_exits_5_naming_the_tls_failure(
    server: ClientCertificateServer, tmp_path: Path
) -> None:
    kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
    start = "dra-metadata: " + said(server, 'to get resourceclaim "rdma-nics" in namespace "ml"')
    for _ in range(6):
        result = run_command(
            "status",
            "rdma-nics",
            "--namespace",
            "ml",
            root=None,
            timeout=90,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig)},
        )
        assert result.returncode == 5, result.stderr
        assert result.stderr.startswith(start), result.stderr
        assert result.stderr.endswith(server.refusal + "\n"), result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
