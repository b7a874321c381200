"""Every way a PodResources call fails on a real socket is a typed error naming the socket and
the next step, from the blocking calls and their asyncio twins alike; never a gRPC traceback."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import podresources
from dra_metadata.podresources import _client, _socket

from helpers import unprivileged
from podresources_peers import (
    dead_socket,
    grpc_server_without_services,
    mute_listener,
    socket_folder,
)

Call = Callable[..., Any]
BLOCKING: dict[str, Call] = {
    "List": podresources.list_pod_resources,
    "Get": lambda **options: podresources.get_pod_resources("dra-meta", "default", **options),
    "GetAllocatableResources": podresources.allocatable_resources,
}
ASYNCIO: dict[str, Callable[..., Awaitable[Any]]] = {
    "List": podresources.alist_pod_resources,
    "Get": lambda **options: podresources.aget_pod_resources("dra-meta", "default", **options),
    "GetAllocatableResources": podresources.aallocatable_resources,
}


def _both(method: str, **options: Any) -> list[BaseException]:
    """The errors of the blocking call and of its asyncio twin, with the same arguments."""
    errors: list[BaseException] = []
    for run in (
        lambda: BLOCKING[method](**options),
        lambda: asyncio.run(ASYNCIO[method](**options)),  # type: ignore[arg-type]
    ):
        with pytest.raises(podresources.PodResourcesError) as caught:
            run()
        assert caught.value.__cause__ is None
        assert caught.value.__suppress_context__
        errors.append(caught.value)
    return errors


@pytest.fixture
def folder() -> Iterator[Path]:
    with socket_folder() as path:
        yield path


@pytest.mark.parametrize("method", list(BLOCKING))
def test_no_socket_says_to_mount_the_kubelets_directory(folder: Path, method: str) -> None:
    path = folder / "kubelet.sock"
    for error in _both(method, socket=path):
        assert isinstance(error, podresources.PodResourcesSocketNotFoundError)
        assert isinstance(error, dra_metadata.DeviceMetadataError)
        assert (error.socket, error.method, error.code) == (str(path), method, "UNAVAILABLE")
        assert str(error).startswith(
            f"cannot reach the kubelet's PodResources API at {path}: no such socket"
        )


def test_no_socket_directory_says_so(folder: Path) -> None:
    path = folder / "pod-resources" / "kubelet.sock"
    (error, _) = _both("List", socket=str(path))
    assert f"neither it nor its directory {path.parent} exists" in str(error)


def test_the_default_socket_names_the_host_path_volume(
    monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    """With the kubelet's own path, the hint is the hostPath volume (and the example)."""
    monkeypatch.setattr(_socket, "DEFAULT_SOCKET", str(folder / "kubelet.sock"))
    monkeypatch.setattr(_socket, "HOST_PATH_DIRECTORY", str(folder))
    monkeypatch.delenv(podresources.SOCKET_ENVIRONMENT_VARIABLE, raising=False)
    (error, _) = _both("List")
    message = str(error)
    assert f"{folder / 'kubelet.sock'} (the kubelet's default)" in message
    assert f"mount the node's {folder} as a hostPath volume at the same path" in message
    assert "examples/kubernetes/node-agent-daemonset.yaml" in message
    assert "pass socket= or set $DRA_METADATA_PODRESOURCES_SOCKET" in message


def test_the_socket_comes_from_the_argument_then_the_environment_then_the_default(
    monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    from_environment, argument = folder / "env.sock", folder / "argument.sock"
    monkeypatch.setenv(podresources.SOCKET_ENVIRONMENT_VARIABLE, str(from_environment))
    (error, _) = _both("List")
    assert error.socket == str(from_environment)
    assert f"{from_environment} (from $DRA_METADATA_PODRESOURCES_SOCKET)" in str(error)
    (error, _) = _both("List", socket=argument)
    assert error.socket == str(argument)
    monkeypatch.setenv(podresources.SOCKET_ENVIRONMENT_VARIABLE, "")  # empty counts as unset
    assert _socket.resolve_socket(None) == _socket.Socket(podresources.DEFAULT_SOCKET, "default")
    assert podresources.DEFAULT_SOCKET == "/var/lib/kubelet/pod-resources/kubelet.sock"


@pytest.mark.parametrize("method", list(BLOCKING))
def test_a_socket_file_nobody_listens_on(folder: Path, method: str) -> None:
    path = dead_socket(folder / "kubelet.sock")
    for error in _both(method, socket=path):
        assert isinstance(error, podresources.PodResourcesConnectionError)
        assert str(error).startswith(
            f"nothing answers on the kubelet's PodResources socket {path}: the socket file is "
            "there but no process listens on it"
        )
        assert "mount the directory /var/lib/kubelet/pod-resources, not the socket file" in str(
            error
        )


def test_a_path_that_is_no_socket(folder: Path) -> None:
    (folder / "file").write_text("")
    (error, _) = _both("List", socket=folder / "file")
    assert isinstance(error, podresources.PodResourcesConnectionError)
    assert "it is a regular file, not a socket" in str(error)
    (error, _) = _both("List", socket=folder)
    assert "it is a directory, not a socket" in str(error)


@pytest.mark.parametrize("method", list(BLOCKING))
def test_a_listener_that_never_answers_times_out(folder: Path, method: str) -> None:
    with mute_listener(folder / "kubelet.sock") as path:
        for error in _both(method, socket=path, timeout=0.5):
            assert isinstance(error, podresources.PodResourcesTimeoutError)
            assert isinstance(error, TimeoutError)
            assert (error.timeout, error.code) == (0.5, "DEADLINE_EXCEEDED")
            assert str(error).startswith(
                f"no answer to {method} from the kubelet's PodResources socket {path} within 0.5 s"
            )
            assert str(error).endswith("or pass a larger timeout=")


@pytest.mark.parametrize("method", list(BLOCKING))
def test_a_method_the_server_does_not_serve(folder: Path, method: str) -> None:
    with grpc_server_without_services(folder / "kubelet.sock") as path:
        for error in _both(method, socket=path):
            assert isinstance(error, podresources.PodResourcesUnimplementedError)
            assert error.code == "UNIMPLEMENTED"
            assert str(error).startswith(
                f"the kubelet at {path} does not serve v1.PodResourcesLister/{method} "
                "(UNIMPLEMENTED"
            )


def test_unimplemented_says_why_per_method(folder: Path) -> None:
    with grpc_server_without_services(folder / "kubelet.sock") as path:
        (get, _) = _both("Get", socket=path)
        assert "KubeletPodResourcesGet" in str(get)
        assert "or use List, which answers for every pod" in str(get)
        (allocatable, _) = _both("GetAllocatableResources", socket=path)
        assert "KubeletPodResourcesGetAllocatable" in str(allocatable)


_UNPRIVILEGED_CALL = """
import json, sys
from dra_metadata import podresources
try:
    podresources.list_pod_resources(socket=sys.argv[1], timeout=5)
except podresources.PodResourcesError as error:
    print(json.dumps([type(error).__name__, str(error), error.code]))
"""


def test_permission_denied_on_the_socket_says_to_run_as_root(folder: Path) -> None:
    options, who = unprivileged()
    prefix = options.pop("prefix", ())
    with grpc_server_without_services(folder / "kubelet.sock") as path:
        path.chmod(0o000)  # as the kubelet's 0600 root socket is to anyone but root
        result = subprocess.run(
            [*prefix, sys.executable, "-c", _UNPRIVILEGED_CALL, str(path)],
            capture_output=True,
            text=True,
            check=False,
            cwd="/",
            timeout=60,
            **options,
        )
    assert result.returncode == 0, (who, result.stderr)
    name, message, code = json.loads(result.stdout)
    assert name == "PodResourcesPermissionError", (who, message)
    assert code == "UNAVAILABLE"
    assert message.startswith(
        f"permission denied connecting to the kubelet's PodResources socket {path} (running as "
    ), message
    assert "must run as root (securityContext runAsUser: 0" in message


def test_a_folder_that_cannot_be_searched_is_permission_denied_too(folder: Path) -> None:
    options, who = unprivileged()
    prefix = options.pop("prefix", ())
    locked = folder / "locked"
    locked.mkdir()
    with grpc_server_without_services(locked / "kubelet.sock") as path:
        locked.chmod(0o000)
        result = subprocess.run(
            [*prefix, sys.executable, "-c", _UNPRIVILEGED_CALL, str(path)],
            capture_output=True,
            text=True,
            check=False,
            cwd="/",
            timeout=60,
            **options,
        )
        locked.chmod(0o755)
    name, message, _ = json.loads(result.stdout)
    assert name == "PodResourcesPermissionError", (who, message)
    assert message.startswith(
        f"permission denied looking up the kubelet's PodResources socket {path}"
    )


def test_the_kubelets_answer_for_an_unknown_pod_is_pod_not_found() -> None:
    """What server_v1.go's Get returns for a pod it does not run: a plain error, which grpc-go
    sends as UNKNOWN with its text (no real kubelet needed to know the status it sends)."""
    where = _socket.Socket("/run/kubelet.sock", "argument")
    error = _client.failure(
        where,
        _client.GET,
        10.0,
        "UNKNOWN",
        "pod trainer-0 in namespace ml not found",
        ("trainer-0", "ml"),
    )
    assert isinstance(error, podresources.PodNotFoundError)
    assert isinstance(error, dra_metadata.MetadataNotFoundError)
    assert (error.name, error.namespace, error.method, error.code) == (
        "trainer-0",
        "ml",
        "Get",
        "UNKNOWN",
    )
    assert str(error) == (
        'the kubelet at /run/kubelet.sock has no pod "trainer-0" in namespace "ml" (UNKNOWN: pod '
        "trainer-0 in namespace ml not found): it knows only the running pods of its own node; "
        "check the name, the namespace and the pod's node (kubectl get pod -o wide)"
    )
    disabled = _client.failure(
        where, _client.GET, 10.0, "UNKNOWN", "PodResources API Get method disabled", ("a", "b")
    )
    assert isinstance(disabled, podresources.PodResourcesUnimplementedError)
    limited = _client.failure(
        where, _client.LIST, 10.0, "RESOURCE_EXHAUSTED", "rejected by rate limit"
    )
    assert isinstance(limited, podresources.PodResourcesServerError)
    assert limited.details == "rejected by rate limit"
    assert "the kubelet's rate limit" in str(limited)


@pytest.mark.parametrize("timeout", [0, -1, math.nan, True, "10", None])
def test_a_timeout_that_is_no_positive_number_is_refused(timeout: object) -> None:
    with pytest.raises(ValueError, match="timeout must be a number of seconds > 0"):
        podresources.list_pod_resources(socket="/nonexistent", timeout=timeout)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "namespace", "argument"),
    [
        ("", "ml", "name"),
        ("Trainer", "ml", "name"),
        ("a", "a.b", "namespace"),
        ("a", 3, "namespace"),
    ],
)
def test_a_pod_name_no_pod_can_have_is_refused_before_any_call(
    name: str, namespace: str, argument: str
) -> None:
    with pytest.raises(dra_metadata.InvalidNameError) as caught:
        podresources.get_pod_resources(name, namespace, socket="/nonexistent")
    assert caught.value.argument == argument
    with pytest.raises(dra_metadata.InvalidNameError):
        asyncio.run(podresources.aget_pod_resources(name, namespace, socket="/nonexistent"))


def test_math_inf_waits_without_a_deadline(folder: Path) -> None:
    path = dead_socket(folder / "kubelet.sock")
    with pytest.raises(podresources.PodResourcesConnectionError):
        podresources.list_pod_resources(socket=path, timeout=math.inf)


@pytest.mark.parametrize("socket", ["", b"/run/kubelet.sock"])
def test_a_socket_that_is_no_path_is_refused(socket: object) -> None:
    with pytest.raises(ValueError, match="socket must be a non-empty path"):
        podresources.list_pod_resources(socket=socket)  # type: ignore[arg-type]
