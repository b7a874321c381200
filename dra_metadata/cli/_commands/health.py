"""``dra-metadata health``: the health the kubelet reports for the pod's devices."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from dra_metadata.cli._arguments import Command, add_output_argument, output_format
from dra_metadata.cli._exit import EXIT_OK
from dra_metadata.cli._kube import add_kube_arguments, add_read_timeout_argument, refuse_root
from dra_metadata.cli._output import Output, safe_text, table

if TYPE_CHECKING:
    from dra_metadata.kube import DeviceHealth


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kube_arguments(parser, pod_help="the pod (default: $POD_NAME, else the host name)")
    parser.add_argument(
        "--container", metavar="C", help="only container C's devices (default: every container)"
    )
    add_read_timeout_argument(parser)
    add_output_argument(parser)


def _rows(health: tuple[DeviceHealth, ...]) -> list[list[str]]:
    header = ["CONTAINER", "CLAIM", "REQUEST", "DRIVER", "POOL", "DEVICE", "HEALTH", "MESSAGE"]
    return [header] + [
        [
            entry.container,
            entry.pod_claim_name or entry.resource_name or "-",
            entry.request or "-",
            entry.driver or "-",
            entry.pool or "-",
            entry.device or entry.resource_id or "-",
            entry.health,
            entry.message or "-",
        ]
        for entry in health
    ]


def _run(arguments: argparse.Namespace, out: Output) -> int:
    refuse_root(arguments)
    from dra_metadata import kube  # noqa: PLC0415 - the API part, only for this subcommand

    health = kube.read_device_health(
        pod_name=arguments.pod,
        container_name=arguments.container,
        namespace=arguments.namespace,
        timeout=arguments.timeout,
    )
    if output_format(arguments, out) == "json":
        out.write_json([entry.to_document() for entry in health])
    elif not health:
        which = f"container {arguments.container}" if arguments.container else "the containers"
        out.write(f"no device health reported for {safe_text(which)} (yet)\n")
    else:
        table(_rows(health), out)
    return EXIT_OK


COMMAND = Command(
    name="health",
    summary="show the health of the pod's devices (Kubernetes API)",
    description="Read the pod from the Kubernetes API and show the health the kubelet reports "
    "for each device allocated to its containers (status.containerStatuses[]"
    ".allocatedResourcesStatus): Healthy, Unhealthy or Unknown, with the driver's message. "
    "Reports only: the exit code does not depend on the health. Needs get on pods.",
    examples=(
        "dra-metadata health",
        "dra-metadata health --pod trainer-0 --container trainer -o json",
    ),
    add_arguments=_add_arguments,
    run=_run,
    reads_files=False,
    needs_extra="kube",
    exit_codes="exit codes: 0 shown (whatever the health), 1 no such pod or container, "
    "2 usage, 5 the Kubernetes API refused, could not be reached or did not answer within "
    "--timeout, or "
    "the configuration (kubeconfig, ServiceAccount) cannot be used, 7 the kube extra is not "
    "installed",
)
