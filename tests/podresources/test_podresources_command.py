"""``dra-metadata pod-resources``: the table and JSON of a real kubelet's answers, and its exit
codes on real sockets (a subprocess, one line on stderr naming the socket)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from dra_metadata import podresources
from dra_metadata.cli import _exit, build_parser
from dra_metadata.cli._commands import pod_resources
from dra_metadata.cli._output import Output
from dra_metadata.podresources import _client, _mapping, _socket
from dra_metadata.podresources._proto import api_pb2

from helpers import COMMAND, REPO, run_command
from podresources_peers import (
    dead_socket,
    grpc_server_without_services,
    mute_listener,
    socket_folder,
)

NODE = REPO / "tests" / "data" / "node"


def _pods() -> list[podresources.PodResources]:
    document = json.loads((NODE / "podresources-list.json").read_text())
    response = json_format.ParseDict(document, api_pb2.ListPodResourcesResponse())
    return [_mapping.pod_resources(pod) for pod in response.pod_resources]


def _shown(*options: str) -> str:
    arguments = build_parser("pod-resources").parse_args(["pod-resources", *options])
    stream = io.StringIO()
    out = Output(stream)
    pod_resources.show(_pods(), arguments, out)
    out.flush()
    return stream.getvalue()


def test_one_row_per_dra_device_of_the_real_answer() -> None:
    assert _shown("-o", "table") == (
        "NAMESPACE  POD       CONTAINER  CLAIM                    DRIVER                  "
        "POOL      DEVICE\n"
        "default    dra-meta  c          claim-direct             test-driver.cdi.k8s.io  "
        "e2e-node  device-00\n"
        "default    dra-meta  c          dra-meta-fromtmpl-wxrv9  test-driver.cdi.k8s.io  "
        "e2e-node  device-01\n"
    )


def test_json_is_every_pod_as_the_kubelet_answered() -> None:
    shown = json.loads(_shown("-o", "json"))
    assert shown == [pod.to_document() for pod in _pods()]
    assert [pod["name"] for pod in shown] == ["plain", "dra-meta"]


def test_driver_keeps_that_drivers_devices_and_the_pods_that_hold_them() -> None:
    shown = json.loads(_shown("-o", "json", "--driver", "test-driver.cdi.k8s.io"))
    assert [pod["name"] for pod in shown] == ["dra-meta"]
    claims = shown[0]["containers"][0]["dynamicResources"]
    assert [claim["claimName"] for claim in claims] == ["claim-direct", "dra-meta-fromtmpl-wxrv9"]
    assert json.loads(_shown("-o", "json", "--driver", "gpu.example.com")) == []
    assert _shown("-o", "table", "--driver", "gpu.example.com") == (
        "no pod on this node holds devices of driver gpu.example.com\n"
    )


def test_namespace_keeps_the_pods_of_that_namespace() -> None:
    assert [p["name"] for p in json.loads(_shown("-o", "json", "--namespace", "default"))] == [
        "plain",
        "dra-meta",
    ]
    assert json.loads(_shown("-o", "json", "--namespace", "ml")) == []
    assert _shown("-o", "table", "--namespace", "ml", "--driver", "gpu.example.com") == (
        "no pod in namespace ml on this node holds devices of driver gpu.example.com\n"
    )


def test_the_empty_table_says_what_there_is_none_of() -> None:
    arguments = build_parser("pod-resources").parse_args(
        ["pod-resources", "-o", "table", "--pod", "plain", "--namespace", "default"]
    )
    stream = io.StringIO()
    out = Output(stream)
    pod_resources.show([_pods()[0]], arguments, out)
    out.flush()
    assert stream.getvalue() == "pod default/plain holds no DRA devices\n"


def _allocatable_shown(allocatable: podresources.AllocatableResources, *options: str) -> str:
    arguments = build_parser("pod-resources").parse_args(
        ["pod-resources", "--allocatable", *options]
    )
    stream = io.StringIO()
    out = Output(stream)
    pod_resources.show_allocatable(allocatable, arguments, out)
    out.flush()
    return stream.getvalue()


def test_allocatable_of_the_real_node_says_why_it_is_empty() -> None:
    document = json.loads((NODE / "podresources-allocatable.json").read_text())
    response = json_format.ParseDict(document, api_pb2.AllocatableResourcesResponse())
    allocatable = _mapping.allocatable_resources(response)
    assert _allocatable_shown(allocatable, "-o", "table").startswith(
        "nothing allocatable reported: no device plugin devices,"
    )
    assert json.loads(_allocatable_shown(allocatable, "-o", "json")) == {
        "devices": [],
        "cpuIDs": [],
        "memory": [],
    }


def test_allocatable_lists_devices_cpus_and_memory() -> None:
    numa = podresources.TopologyInfo((podresources.NUMANode(0), podresources.NUMANode(1)))
    allocatable = podresources.AllocatableResources(
        devices=(podresources.ContainerDevices("nvidia.com/gpu", ("GPU-a", "GPU-b"), numa),),
        cpu_ids=(2, 3),
        memory=(podresources.ContainerMemory("hugepages-1Gi", 2**31),),
    )
    assert _allocatable_shown(allocatable, "-o", "table") == (
        "KIND    RESOURCE        IDS OR BYTES  NUMA NODES\n"
        "device  nvidia.com/gpu  GPU-a,GPU-b   0,1\n"
        "cpu     -               2,3           -\n"
        "memory  hugepages-1Gi   2147483648    -\n"
    )
    assert json.loads(_allocatable_shown(allocatable, "-o", "json")) == allocatable.to_document()


def test_the_commands_defaults_are_the_librarys() -> None:
    assert pod_resources.TIMEOUT_SECONDS == _client.REQUEST_TIMEOUT_SECONDS
    assert pod_resources.DEFAULT_SOCKET == _socket.DEFAULT_SOCKET == podresources.DEFAULT_SOCKET


@pytest.fixture
def folder() -> Iterator[Path]:
    with socket_folder() as path:
        yield path


def _one_line(result: subprocess.CompletedProcess[str], socket: Path) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert str(socket) in lines[0]
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    return lines[0]


def test_no_socket_is_exit_5(folder: Path) -> None:
    socket = folder / "kubelet.sock"
    result = run_command("pod-resources", "--socket", str(socket), root=None)
    assert result.returncode == _exit.EXIT_KUBE_API == 5
    line = _one_line(result, socket)
    assert line.startswith(f"dra-metadata: cannot reach the kubelet's PodResources API at {socket}")


def test_nothing_listening_is_exit_5(folder: Path) -> None:
    socket = dead_socket(folder / "kubelet.sock")
    result = run_command(
        "pod-resources",
        "--pod",
        "a",
        "--namespace",
        "b",
        root=None,
        env={"PATH": "/usr/bin:/bin", "DRA_METADATA_PODRESOURCES_SOCKET": str(socket)},
    )
    assert result.returncode == 5
    line = _one_line(result, socket)
    assert f"{socket} (from $DRA_METADATA_PODRESOURCES_SOCKET)" in line


def test_no_answer_within_timeout_is_exit_5(folder: Path) -> None:
    with mute_listener(folder / "kubelet.sock") as socket:
        result = run_command(
            "pod-resources", "--socket", str(socket), "--timeout", "500ms", "-o", "json", root=None
        )
    assert result.returncode == 5
    line = _one_line(result, socket)
    assert "within 0.5 s" in line
    assert line.endswith("or pass a larger --timeout")


def test_a_method_not_served_is_exit_5(folder: Path) -> None:
    with grpc_server_without_services(folder / "kubelet.sock") as socket:
        result = run_command(
            "pod-resources", "--socket", str(socket), "--pod", "p", "--namespace", "n", root=None
        )
    assert result.returncode == 5
    assert "does not serve v1.PodResourcesLister/Get" in _one_line(result, socket)


def test_no_such_pod_is_exit_1() -> None:
    error = _client.failure(
        _socket.Socket("/s", "argument"),
        _client.GET,
        1.0,
        "UNKNOWN",
        "pod p in namespace n not found",
        ("p", "n"),
    )
    assert _exit.exit_code(error) == _exit.EXIT_NOT_READY == 1
    for other in (
        podresources.PodResourcesTimeoutError("x", socket="/s", method="List", timeout=1.0),
        podresources.PodResourcesNotInstalledError("x", socket="/s"),
    ):
        assert _exit.exit_code(other) == 5


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--pod", "p"], "--pod needs --namespace"),
        (["--pod", "P", "--namespace", "n"], "--pod 'P': a pod's name is a DNS subdomain"),
        (["--root", "examples/tree"], "--root is the root of metadata files"),
        (["--timeout", "0"], "the timeout must be more than 0"),
        (["--allocatable", "--driver", "d"], "--driver selects pods; --allocatable shows"),
        (["--socket", ""], "--socket is empty"),
        (["--allocatable", "--pod", "p", "--namespace", "n"], "--pod, --namespace selects pods"),
    ],
)
def test_usage_errors_are_exit_2(options: list[str], said: str) -> None:
    result = run_command(
        "pod-resources", "--socket", "/nonexistent/kubelet.sock", *options, root=None
    )
    assert result.returncode == 2, result.stderr
    assert said in result.stderr


_WITHOUT_GRPC = """
import sys
sys.modules["grpc"] = None  # as where the podresources extra is not installed
from dra_metadata.cli import main
sys.exit(main(["pod-resources", "--socket", "/nonexistent/kubelet.sock"]))
"""


def test_without_the_extra_the_message_names_it() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_GRPC],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 7  # a part of the install is missing
    (line,) = result.stderr.splitlines()
    assert "pod-resources reads the kubelet's PodResources API" in line
    assert "needs the podresources extra of dra-metadata" in line
    assert "(no module grpc)" in line
    assert "[podresources]" in line


_IMPORTED = """
import sys
from dra_metadata.cli._main import build_parser
build_parser("pod-resources").parse_args(["pod-resources", "--driver", "d"])
import dra_metadata.podresources
print(sorted(m for m in ("grpc", "google.protobuf") if m in sys.modules))
"""


def test_grpc_is_imported_only_when_the_command_runs() -> None:
    """Building the parser (every run does) and importing the package load neither grpc nor
    protobuf; the first call does."""
    result = subprocess.run(
        [sys.executable, "-c", _IMPORTED], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr
    core = subprocess.run(
        [sys.executable, "-c", "import dra_metadata, sys; print('grpc' in sys.modules)"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert core.stdout.strip() == "False"


def test_the_command_is_listed() -> None:
    result = subprocess.run([COMMAND, "--help"], capture_output=True, text=True, check=False)
    assert "pod-resources" in result.stdout
