"""``dra-metadata pod-resources``: which pod and container hold which DRA device on this node."""

from __future__ import annotations

import argparse
import dataclasses

from dra_metadata.cli._arguments import Command, add_output_argument, output_format, parse_timeout
from dra_metadata.cli._exit import EXIT_OK, UsageError
from dra_metadata.cli._output import Output, safe_text, table

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from dra_metadata.podresources import AllocatableResources, PodResources, TopologyInfo

TIMEOUT_SECONDS = 10.0
"""dra_metadata.podresources.REQUEST_TIMEOUT_SECONDS (a test checks that they agree): not
imported from there, which would load that package for every subcommand."""
DEFAULT_SOCKET = "/var/lib/kubelet/pod-resources/kubelet.sock"
"""dra_metadata.podresources.DEFAULT_SOCKET, for the help (a test checks that they agree)."""
HEADER = ["NAMESPACE", "POD", "CONTAINER", "CLAIM", "DRIVER", "POOL", "DEVICE"]


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pod",
        metavar="P",
        help="only pod P (the kubelet's Get; needs --namespace): exit 1 when the kubelet does "
        "not run it",
    )
    parser.add_argument(
        "--namespace",
        metavar="NS",
        help="with --pod: the pod's namespace; alone: only the pods of namespace NS",
    )
    parser.add_argument("--driver", metavar="D", help="only the devices of driver D")
    parser.add_argument(
        "--allocatable",
        action="store_true",
        help="instead: what the node can allocate (the kubelet's GetAllocatableResources: "
        "device plugin devices, CPUs, memory; DRA devices are in ResourceSlices)",
    )
    parser.add_argument(
        "--socket",
        metavar="PATH",
        help="the kubelet's PodResources socket (default: $DRA_METADATA_PODRESOURCES_SOCKET, "
        f"else {DEFAULT_SOCKET})",
    )
    parser.add_argument(
        "--timeout",
        metavar="T",
        type=parse_timeout,
        default=TIMEOUT_SECONDS,
        help="give up when the kubelet has not answered in full after T, connecting included "
        f"(5s, 1m; default {TIMEOUT_SECONDS:g}s)",
    )
    add_output_argument(parser)


def _only_driver(pod: PodResources, driver: str) -> PodResources | None:
    """The pod with only driver's devices (and the containers and claims that hold them)."""
    containers = []
    for container in pod.containers:
        claims = []
        for claim in container.dynamic_resources:
            kept = tuple(device for device in claim.claim_resources if device.driver == driver)
            if kept:
                claims.append(dataclasses.replace(claim, claim_resources=kept))
        if claims:
            containers.append(dataclasses.replace(container, dynamic_resources=tuple(claims)))
    return dataclasses.replace(pod, containers=tuple(containers)) if containers else None


def _read(arguments: argparse.Namespace) -> list[PodResources]:
    from dra_metadata import podresources  # noqa: PLC0415 - grpc, only for this subcommand

    where = {"socket": arguments.socket, "timeout": arguments.timeout}
    if arguments.pod is not None:
        return [podresources.get_pod_resources(arguments.pod, arguments.namespace, **where)]
    return podresources.list_pod_resources(**where)


def _nothing(arguments: argparse.Namespace) -> str:
    """What the empty table says: which devices there are none of."""
    devices = f"devices of driver {arguments.driver}" if arguments.driver else "DRA devices"
    if arguments.pod is not None:
        return f"pod {arguments.namespace}/{arguments.pod} holds no {devices}"
    where = f" in namespace {arguments.namespace}" if arguments.namespace else ""
    return f"no pod{where} on this node holds {devices}"


def _run(arguments: argparse.Namespace, out: Output) -> int:
    if arguments.socket is not None and not arguments.socket:
        raise UsageError("--socket is empty: name the kubelet's PodResources socket")
    if arguments.allocatable:
        given = [
            option
            for option, value in (
                ("--pod", arguments.pod),
                ("--namespace", arguments.namespace),
                ("--driver", arguments.driver),
            )
            if value is not None
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)} selects pods; --allocatable shows the node's allocatable "
                "resources, which belong to no pod"
            )
        from dra_metadata import podresources  # noqa: PLC0415 - grpc, only for this subcommand

        allocatable = podresources.allocatable_resources(
            socket=arguments.socket, timeout=arguments.timeout
        )
        show_allocatable(allocatable, arguments, out)
        return EXIT_OK
    if arguments.pod is not None and arguments.namespace is None:
        raise UsageError("--pod needs --namespace: the kubelet finds a pod by both")
    show(_read(arguments), arguments, out)
    return EXIT_OK


def _numa(topology: TopologyInfo | None) -> str:
    return ",".join(str(node.id) for node in topology.nodes) if topology else "-"


def show_allocatable(
    allocatable: AllocatableResources, arguments: argparse.Namespace, out: Output
) -> None:
    """--allocatable: a row per device plugin resource, one for the CPUs, one per memory type."""
    if output_format(arguments, out) == "json":
        out.write_json(allocatable.to_document())
        return
    rows = [
        [
            "device",
            devices.resource_name,
            ",".join(devices.device_ids) or "-",
            _numa(devices.topology),
        ]
        for devices in allocatable.devices
    ]
    if allocatable.cpu_ids:
        rows.append(["cpu", "-", ",".join(map(str, allocatable.cpu_ids)), "-"])
    rows += [
        ["memory", memory.memory_type, str(memory.size), _numa(memory.topology)]
        for memory in allocatable.memory
    ]
    if rows:
        table([["KIND", "RESOURCE", "IDS OR BYTES", "NUMA NODES"], *rows], out)
    else:
        out.write(
            "nothing allocatable reported: no device plugin devices, and no CPUs or memory "
            "the kubelet's CPU and memory managers hand out (their default policies); DRA "
            "devices are published by their drivers in ResourceSlices\n"
        )


def show(pods: list[PodResources], arguments: argparse.Namespace, out: Output) -> None:
    """The pods the kubelet answered, as the options ask: --namespace, --driver, -o."""
    if arguments.namespace is not None:
        pods = [pod for pod in pods if pod.namespace == arguments.namespace]
    if arguments.driver is not None:
        pods = [kept for pod in pods if (kept := _only_driver(pod, arguments.driver))]
    if output_format(arguments, out) == "json":
        out.write_json([pod.to_document() for pod in pods])
        return
    rows = [
        [
            pod.namespace,
            pod.name,
            container.name,
            claim.claim_name,
            device.driver or "-",
            device.pool or "-",
            device.device or "-",
        ]
        for pod in pods
        for container, claim, device in pod.claim_resources()
    ]
    if rows:
        table([HEADER, *rows], out)
    else:
        out.write(f"{safe_text(_nothing(arguments))}\n")


COMMAND = Command(
    name="pod-resources",
    summary="show which pod and container hold which DRA device on this node (kubelet)",
    description="Ask the kubelet's PodResources API (gRPC on its unix socket) which DRA devices "
    "the pods of this node hold: one row per device, with its namespace, pod, container, "
    "claim (a template's claim under its generated name), driver, pool and device. For node "
    "agents: in a pod, mount the node's /var/lib/kubelet/pod-resources as a hostPath volume "
    "and run as root (docs/guides/node-agents.md). -o json prints the pods as the API "
    "answers them (device plugin devices, CPUs and memory too); with --driver, only that "
    "driver's devices and the pods that hold them. --allocatable shows what the node can "
    "allocate instead. Needs the podresources extra: pip install "
    "'dra-metadata[podresources]'.",
    examples=(
        "dra-metadata pod-resources",
        "dra-metadata pod-resources --driver gpu.example.com -o json",
        "dra-metadata pod-resources --pod trainer-0 --namespace ml",
        "dra-metadata pod-resources --socket /host/pod-resources/kubelet.sock --timeout 3s",
        "dra-metadata pod-resources --allocatable",
    ),
    add_arguments=_add_arguments,
    run=_run,
    reads_files=False,
    needs_extra="podresources",
    exit_codes="exit codes: 0 shown (also when no pod holds a device), 1 no such pod (--pod), "
    "2 usage, 5 the kubelet cannot be reached (no socket, permission denied, nothing "
    "listening), did not answer within --timeout or does not serve the method, "
    "7 the podresources extra is not installed",
)
