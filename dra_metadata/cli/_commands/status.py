"""``dra-metadata status``: a claim's allocation and device status from the Kubernetes API."""

from __future__ import annotations

import argparse

from dra_metadata.cli._arguments import Command, add_output_argument, output_format
from dra_metadata.cli._exit import EXIT_OK
from dra_metadata.cli._kube import (
    add_kube_arguments,
    add_read_timeout_argument,
    refuse_pod_without_template,
    refuse_root,
)
from dra_metadata.cli._output import Output, safe_text, table

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from dra_metadata.kube import ClaimStatus


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "claim", metavar="CLAIM", help="claim name (pod claim name with --template)"
    )
    parser.add_argument(
        "--template",
        action="store_true",
        help="CLAIM is a pod claim name (pod.spec.resourceClaims[].name) of a claim made from "
        "a ResourceClaimTemplate; its name is read from the pod",
    )
    add_kube_arguments(
        parser,
        pod_help="with --template: the pod whose claim it is (default: $POD_NAME, else the "
        "host name)",
    )
    add_read_timeout_argument(parser)
    add_output_argument(parser)


def _read(arguments: argparse.Namespace) -> ClaimStatus:
    from dra_metadata import kube  # noqa: PLC0415 - the API part, only for this subcommand

    if arguments.template:
        return kube.read_template_claim_status(
            arguments.claim,
            pod_name=arguments.pod,
            namespace=arguments.namespace,
            timeout=arguments.timeout,
        )
    return kube.read_claim_status(
        arguments.claim, namespace=arguments.namespace, timeout=arguments.timeout
    )


def _show_table(status: ClaimStatus, out: Output) -> None:
    title = f"claim {status.namespace}/{status.name}"
    if status.pod_claim_name is not None:
        title += f" (pod claim {status.pod_claim_name})"
    title += f", resourceVersion {status.resource_version}"
    out.write(f"{safe_text(title)}\n")
    if not status.allocated:
        out.write("not allocated yet (no status.allocation)\n")
        return
    out.write("\n")
    rows = [
        ["REQUEST", "DRIVER", "POOL", "DEVICE", "SHARE ID", "INTERFACE", "IPS", "MAC", "CONDITIONS"]
    ]
    for device in status.devices:
        network = device.network_data
        rows.append(
            [
                device.request,
                device.driver,
                device.pool,
                device.name,
                device.share_id or "-",
                (network.interface_name if network else "") or "-",
                (",".join(network.ips) if network else "") or "-",
                (network.hardware_address if network else "") or "-",
                ",".join(f"{c.type}={c.status}" for c in device.conditions) or "-",
            ]
        )
    table(rows, out)


def _run(arguments: argparse.Namespace, out: Output) -> int:
    refuse_root(arguments)
    refuse_pod_without_template(arguments)
    status = _read(arguments)
    if output_format(arguments, out) == "json":
        out.write_json(status.to_document())
    else:
        _show_table(status, out)
    return EXIT_OK


COMMAND = Command(
    name="status",
    summary="show a claim's allocated devices and their status (Kubernetes API)",
    description="Read a ResourceClaim from the Kubernetes API and show each allocated device "
    "with what its driver reported in status.devices: network data (interface, IPs, MAC) and "
    "conditions. For drivers that write no metadata file (DraNet). Needs get on "
    "resourceclaims (and on pods with --template); the configuration is the pod's "
    "ServiceAccount, else $KUBECONFIG or ~/.kube/config.",
    examples=(
        "dra-metadata status rdma-nics",
        "dra-metadata status --template nic --pod trainer-0 --namespace ml -o json",
        "dra-metadata status rdma-nics --timeout 30s",
    ),
    add_arguments=_add_arguments,
    run=_run,
    reads_files=False,
    needs_extra="kube",
    exit_codes="exit codes: 0 shown (also when not allocated yet), 1 no such claim or pod, "
    "2 usage, 5 the Kubernetes API refused, could not be reached or did not answer within "
    "--timeout, or "
    "the configuration (kubeconfig, ServiceAccount) cannot be used, 7 the kube extra is not "
    "installed",
)
