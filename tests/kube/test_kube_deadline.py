"""A server that trickles cannot stretch a read of the API: each read has a whole-request deadline.

The server is a real socket on 127.0.0.1 (a thread of this process): it reads the request, then
sends the answer's head and one byte of the body every half second, or trickles the head itself.
httpx2's time-outs bound each socket read, which such a server never reaches; the deadline
bounds the request. The tests assert on the outcome (the error names the deadline);
pytest-timeout only guards against a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from dra_metadata import (
    KubeAPIError,
    WaitTimeoutError,
    await_for_network_data,
    wait_for_network_data,
)
from dra_metadata.kube import (
    _http,
    _stream,
    awatch_claim_status,
    read_claim_status,
    read_device_health,
    read_template_claim_status,
    watch_claim_status,
)

from helpers import TESTS, run_command

KUBE = TESTS / "data" / "kube"
BYTE_EVERY_SECONDS = 0.5
MOST_BYTES = 240  # two minutes at most per connection, whatever happens to the test
HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"
    b"X-Padding: " + b"x" * 200 + b"\r\n\r\n"
)


def write_kubeconfig(path: Path, cluster: dict[str, object]) -> Path:
    """A kubeconfig at ``path`` whose current context is ``cluster`` with a token."""
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_bytes(orjson.dumps(document))
    return path


class TricklingServer:
    """Answers every request slowly: the head at once and then the body a byte at a time, or
    (``head_too``) the head itself a byte at a time; with ``claim``, only watches, while a GET
    gets that object at once."""

    def __init__(self, *, head_too: bool, claim: bytes | None = None) -> None:
        self.head_too = head_too
        self.claim = claim
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(10)
            try:
                while self._at_once(connection):
                    pass
                body = b'{"kind": "ResourceClaim", ' + b" " * MOST_BYTES
                first, rest = (b"", HEAD + body) if self.head_too else (HEAD, body)
                connection.sendall(first)
                for byte in rest[:MOST_BYTES]:
                    if self.stop.wait(BYTE_EVERY_SECONDS):
                        return
                    connection.sendall(bytes([byte]))
            except OSError:  # the client gave up and closed its end
                return

    def _at_once(self, connection: socket.socket) -> bool:
        """Read a request; answer it at once (True) unless it is to trickle."""
        received = b""
        while b"\r\n\r\n" not in received and len(received) < 65536:
            chunk = connection.recv(4096)
            if not chunk:
                raise OSError("the client closed the connection")
            received += chunk
        if self.claim is None or b"watch=true" in received.split(b"\r\n", 1)[0]:
            return False
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(self.claim)}"
        connection.sendall(head.encode() + b"\r\n\r\n" + self.claim)
        return True

    def kubeconfig(self, path: Path) -> Path:
        return write_kubeconfig(path, {"server": f"http://127.0.0.1:{self.port}"})

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        self.listener.close()


@pytest.fixture(params=[False, True], ids=["body trickles", "head trickles"])
def trickling(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[TricklingServer]:
    server = TricklingServer(head_too=request.param)
    for variable in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig(tmp_path / "kubeconfig")))
    yield server
    server.close()


def said(
    raised: pytest.ExceptionInfo[KubeAPIError], server: TricklingServer, asked: str, seconds: str
) -> str:
    error = raised.value
    assert error.status is None
    message = str(error)
    assert message.startswith(
        f"the Kubernetes API server at http://127.0.0.1:{server.port} did not answer to "
        f"{asked} within {seconds} s, the deadline of the request"
    ), message
    return message


@pytest.mark.timeout(120)
def test_reads_end_at_their_deadline(trickling: TricklingServer) -> None:
    with pytest.raises(KubeAPIError) as raised:
        read_claim_status("rdma-nics", namespace="ml", timeout=2)
    message = said(raised, trickling, 'get resourceclaim "rdma-nics" in namespace "ml"', "2")
    assert message.endswith("or pass a larger timeout=")
    assert (raised.value.verb, raised.value.resource, raised.value.name) == (
        "get",
        "resourceclaims",
        "rdma-nics",
    )

    with pytest.raises(KubeAPIError) as raised:
        read_template_claim_status("accelerator", pod_name="trainer-0", namespace="ml", timeout=1.5)
    said(raised, trickling, 'get pod "trainer-0" in namespace "ml"', "1.5")

    with pytest.raises(KubeAPIError) as raised:
        read_device_health(pod_name="trainer-0", namespace="ml", timeout=1)
    said(raised, trickling, 'get pod "trainer-0" in namespace "ml"', "1")
    assert trickling.connections == 3


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), "5", True])
def test_a_read_timeout_is_a_positive_number(timeout: object) -> None:
    with pytest.raises(ValueError, match="timeout must be a number of seconds > 0"):
        read_claim_status("rdma-nics", namespace="ml", timeout=timeout)  # type: ignore[arg-type]


@pytest.mark.timeout(120)
def test_watches_end_at_the_deadline_of_their_first_read(
    trickling: TricklingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (_http, _stream):  # the default deadline of the requests of a watch
        monkeypatch.setattr(module, "REQUEST_TIMEOUT_SECONDS", 1.5)
    with pytest.raises(KubeAPIError) as raised:
        next(iter(watch_claim_status("rdma-nics", namespace="ml")))
    message = said(raised, trickling, 'get resourceclaim "rdma-nics" in namespace "ml"', "1.5")
    assert not message.endswith("timeout=")  # a watch's timeout= is how long it watches

    async def first() -> None:
        async for _ in awatch_claim_status("rdma-nics", namespace="ml"):
            return

    with pytest.raises(KubeAPIError) as raised:
        asyncio.run(first())
    said(raised, trickling, 'get resourceclaim "rdma-nics" in namespace "ml"', "1.5")


@pytest.mark.timeout(120)
def test_a_wait_still_ends_at_its_own_timeout(trickling: TricklingServer) -> None:
    with pytest.raises(WaitTimeoutError):
        wait_for_network_data("rdma-nics", "nics", namespace="ml", source="api", timeout=1)


WATCH_PROBLEMS = {
    # The head never complete: the watch is not established by the deadline of a request.
    "head trickles": 'did not answer to watch resourceclaim "rdma-nics" in namespace "ml-team" '
    "within 1 s, the deadline of the request",
    # Established, its stream goes on past the end the server was asked for (timeoutSeconds).
    "body trickles": 'the watch of resourceclaim "rdma-nics" in namespace "ml-team" was still '
    "open 2 s after it began, though the server was asked to end it after 1 s",
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", sorted(WATCH_PROBLEMS))
def test_a_watch_that_trickles_is_resumed_and_the_wait_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    for module in (_http, _stream):
        monkeypatch.setattr(module, "REQUEST_TIMEOUT_SECONDS", 1.0)
    monkeypatch.setattr(_stream, "WATCH_SECONDS", 1)
    monkeypatch.setattr(_stream, "WATCH_GRACE_SECONDS", 1.0)
    claim = (KUBE / "resourceclaim-dranet-allocated.json").read_bytes()
    server = TricklingServer(head_too=case == "head trickles", claim=claim)
    try:
        monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig(tmp_path / "kubeconfig")))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        statuses = list(watch_claim_status("rdma-nics", namespace="ml-team", timeout=3))
        with pytest.raises(WaitTimeoutError) as raised:
            wait_for_network_data("rdma-nics", "nics", namespace="ml-team", source="api", timeout=4)
    finally:
        server.close()
    assert [status.name for status in statuses] == ["rdma-nics"]  # the GET, then no change
    reason = str(raised.value)
    assert reason.startswith("not ready after 4 s: claim status has no networkData"), reason
    assert WATCH_PROBLEMS[case] in reason, reason
    assert server.connections >= 2  # resumed after each


COMMAND_CASES = [
    # (how the server trickles, the command's words, the deadline it has, what it gets)
    pytest.param(
        False, ["status", "rdma-nics"], "10", 'get resourceclaim "rdma-nics"', id="status"
    ),
    pytest.param(
        True,
        ["status", "rdma-nics", "--timeout", "1500ms"],
        "1.5",
        'get resourceclaim "rdma-nics"',
        id="status --timeout",
    ),
    pytest.param(
        False,
        ["health", "--pod", "trainer-0", "--timeout", "1s"],
        "1",
        'get pod "trainer-0"',
        id="health --timeout",
    ),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("head_too", "words", "seconds", "asked"), COMMAND_CASES)
def test_the_command_exits_5_at_its_deadline(
    tmp_path: Path, head_too: bool, words: list[str], seconds: str, asked: str
) -> None:
    # The default deadline (10 s) once; --timeout sets it.
    server = TricklingServer(head_too=head_too)
    try:
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        result = run_command(
            *words,
            "--namespace",
            "ml",
            root=None,
            timeout=90,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig)},
        )
    finally:
        server.close()
    assert result.returncode == 5, result.stderr
    assert result.stderr == (
        f"dra-metadata: the Kubernetes API server at http://127.0.0.1:{server.port} did not "
        f'answer to {asked} in namespace "ml" within {seconds} s, the deadline of the request '
        "(connection, credentials and the whole answer): check the server and the network or "
        "pass a larger --timeout\n"
    )


def test_the_commands_default_deadline_is_the_librarys() -> None:
    from dra_metadata.cli import _kube  # noqa: PLC0415

    assert _kube.READ_TIMEOUT_SECONDS == _http.REQUEST_TIMEOUT_SECONDS


@pytest.mark.parametrize("command", ["status rdma-nics", "health"])
@pytest.mark.parametrize("given", ["0", "-1s", "soon"])
def test_the_commands_timeout_is_a_positive_duration(command: str, given: str) -> None:
    result = run_command(*command.split(), "--timeout", given, root=None)
    assert result.returncode == 2, result.stderr
    assert "argument --timeout: " in result.stderr


class SilentTlsServer:
    """Accepts connections and never answers: a client's TLS handshake waits forever."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.arrived = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.accepted.append(connection)
            self.arrived.set()

    def kubeconfig(self, path: Path) -> Path:
        cluster = {"server": f"https://127.0.0.1:{self.port}", "insecure-skip-tls-verify": True}
        return write_kubeconfig(path, cluster)

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


def open_descriptors() -> list[str]:
    found = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed meanwhile
            found.append(str(Path(f"/proc/self/fd/{name}").readlink()))
    return sorted(found)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["watch", "wait"])
def test_a_cancel_during_the_tls_handshake_closes_the_connection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str
) -> None:
    # httpcore2 closes a new connection's socket when its handshake fails, not when it is
    # cancelled: the socket stayed open until the garbage collector found it.
    server = SilentTlsServer()
    for variable in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig(tmp_path / "kubeconfig")))

    async def scenario() -> list[str]:
        before = open_descriptors()
        if how == "watch":
            statuses = awatch_claim_status("rdma-nics", namespace="ml")
            waiting = asyncio.ensure_future(statuses.__anext__())  # type: ignore[attr-defined]
        else:
            waiting = asyncio.ensure_future(
                await_for_network_data(
                    "rdma-nics", "nics", namespace="ml", source="api", timeout=30
                )
            )
        await asyncio.to_thread(server.arrived.wait, 20)
        await asyncio.sleep(0.2)  # the ClientHello is sent: the handshake waits for an answer
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        gc.collect()  # a socket left open is closed (and warned about) by the collector only
        await asyncio.sleep(0.1)
        served = {f"socket:[{os.fstat(one.fileno()).st_ino}]" for one in server.accepted}
        assert len(served) == 1
        return [link for link in open_descriptors() if link not in before and link not in served]

    try:
        left = asyncio.run(scenario())
    finally:
        server.close()
    assert [link for link in left if link.startswith("socket:")] == []
