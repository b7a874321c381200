"""An exec credential plugin that leaves a child in the background, holding its stdout.

The plugin runs in a session of its own, which is ended when the plugin exits and when the
request's deadline passes: the child cannot keep the request waiting past the deadline (nor,
after a plugin that printed its credential and exited, at all), does not outlive the call, and
the command prints its one line of error, nothing after it. Real plugins (small shell
scripts), real processes; the kubeconfig points at a port nothing listens on, so that a
credential that was had ends as a refused connection, which shows that it got that far.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from lightkube.config.models import UserExec

from dra_metadata import KubeAPIError
from dra_metadata.kube import read_claim_status, watch_claim_status
from dra_metadata.kube._credentials import ExecAuth

from helpers import run_command

EXEC_VERSION = "client.authentication.k8s.io/v1beta1"
CREDENTIAL = json.dumps(
    {"apiVersion": EXEC_VERSION, "kind": "ExecCredential", "status": {"token": "t"}}
)
GRACE_SECONDS = 3.0
"""Past a deadline, the most a call may take to end: well under the 5 s it used to wait for
the pipes a left child held open (the deadline being the point, not speed)."""


@pytest.fixture(scope="module")
def closed_port() -> int:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def kubeconfig(tmp_path: Path, port: int, plugin: Path) -> Path:
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [
            {"name": "u", "user": {"exec": {"apiVersion": EXEC_VERSION, "command": str(plugin)}}}
        ],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "ml"}}],
        "current-context": "x",
    }
    path = tmp_path / "kubeconfig"
    path.write_bytes(orjson.dumps(document))
    return path


def plugin(tmp_path: Path, *, then: str) -> tuple[Path, Path]:
    """A plugin that starts a background child holding its stdout (its pid in the second
    path, one line per run), and ``then`` does what it does."""
    children = tmp_path / "children"
    script = tmp_path / "plugin"
    script.write_text(f"#!/bin/sh\nsleep 600 &\necho $! >> {children}\n{then}\n")
    script.chmod(0o755)
    return script, children


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] not in {"Z", "X"}


def children_left(children: Path) -> list[int]:
    """The plugin's children still running, once their ends had time to be collected."""
    pids = [int(line) for line in children.read_text().split()]
    assert pids
    deadline = time.monotonic() + 10  # SIGKILL is sent before the call returns; reaping lags
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if running(pid)]


@pytest.fixture
def use(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """tmp_path, as HOME; $KUBECONFIG: tmp_path/kubeconfig; not in a pod."""
    for variable in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    return tmp_path


@pytest.mark.timeout(120)
def test_a_hanging_plugin_with_a_child_ends_at_the_deadline(use: Path, closed_port: int) -> None:
    script, children = plugin(use, then="exec sleep 600")
    kubeconfig(use, closed_port, script)
    started = time.monotonic()
    with pytest.raises(KubeAPIError) as raised:
        read_claim_status("rdma-nics", namespace="ml", timeout=2)
    took = time.monotonic() - started
    assert str(raised.value).startswith(
        f'the exec plugin "{script}" of user "u" in kubeconfig {use / "kubeconfig"} did not give '
        'a credential to get resourceclaim "rdma-nics" in namespace "ml" within 2 s'
    ), str(raised.value)
    assert took < 2 + GRACE_SECONDS, took
    assert children_left(children) == []


@pytest.mark.timeout(120)
def test_a_plugin_that_printed_its_credential_does_not_wait_for_its_child(
    use: Path, closed_port: int
) -> None:
    script, children = plugin(use, then=f"echo '{CREDENTIAL}'")
    kubeconfig(use, closed_port, script)
    for _ in range(3):  # one child per run, each ended with its plugin
        with pytest.raises(KubeAPIError) as raised:
            read_claim_status("rdma-nics", namespace="ml", timeout=30)
        assert "refused the connection" in str(raised.value), str(raised.value)
    with pytest.raises(KubeAPIError, match="refused the connection"):
        next(iter(watch_claim_status("rdma-nics", namespace="ml", timeout=30)))
    assert len(children.read_text().split()) == 4
    assert children_left(children) == []


@pytest.mark.timeout(120)
def test_a_child_that_left_the_session_cannot_hold_the_call(use: Path, closed_port: int) -> None:
    # setsid: out of the plugin's session and out of reach, holding stdout too: its pipe is
    # let go on our side once the plugin has ended, and what the plugin printed is used.
    escaped = use / "escaped"
    script, children = plugin(
        use, then=f"setsid sleep 600 &\necho $! > {escaped}\necho '{CREDENTIAL}'"
    )
    kubeconfig(use, closed_port, script)
    try:
        with pytest.raises(KubeAPIError, match="refused the connection"):
            read_claim_status("rdma-nics", namespace="ml", timeout=30)
        assert children_left(children) == []  # the child in the session
    finally:
        with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(escaped.read_text()), signal.SIGKILL)


@pytest.mark.timeout(120)
def test_the_command_prints_one_line_at_the_deadline(use: Path, closed_port: int) -> None:
    script, children = plugin(use, then="exec sleep 600")
    config = kubeconfig(use, closed_port, script)
    started = time.monotonic()
    result = run_command(
        "status",
        "rdma-nics",
        "--timeout",
        "2s",
        root=None,
        timeout=90,
        env={"PATH": "/usr/bin:/bin", "HOME": str(use), "KUBECONFIG": str(config)},
    )
    took = time.monotonic() - started
    assert result.returncode == 5, result.stderr
    assert result.stderr.startswith(f'dra-metadata: the exec plugin "{script}"'), result.stderr
    assert "did not give a credential" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert took < 2 + GRACE_SECONDS + 5, took  # and the interpreter's start and end
    assert children_left(children) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("steps", range(1, 7))
def test_a_plugin_given_up_on_while_it_starts_ends_with_its_session(use: Path, steps: int) -> None:
    # The deadline or Ctrl-C while the plugin is being started (its process made, its pipes
    # not yet connected: a moment a busy machine makes long): cancelled there, asyncio's own
    # clean-up waited for the pipes, which the child holds for as long as it lives. Given up
    # on after each number of the event loop's steps, the run ends at once, its session with it.
    script, children = plugin(use, then="exec sleep 600")
    authenticator = ExecAuth(UserExec(apiVersion=EXEC_VERSION, command=str(script)), 'user "u"')

    async def give_up() -> float:
        run = asyncio.ensure_future(authenticator._run())
        for _ in range(steps):
            await asyncio.sleep(0)
        run.cancel()
        started = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await run
        return time.monotonic() - started

    took = asyncio.run(asyncio.wait_for(give_up(), 60))
    assert took < 30, took  # a hang, not a speed: left waiting, the run ends at the 60 s above
    # Given up on before the plugin's shell had said its child's pid, there is none to look at.
    if children.exists() and children.read_text().split():
        assert children_left(children) == []
