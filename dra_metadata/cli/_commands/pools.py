"""``dra-metadata pools``: device counts per resource pool of a driver (Kubernetes API)."""

from __future__ import annotations

import argparse

from dra_metadata import InvalidNameError
from dra_metadata.cli._arguments import (
    Command,
    add_output_argument,
    output_format,
    parse_timeout,
)
from dra_metadata.cli._exit import EXIT_OK, UsageError
from dra_metadata.cli._kube import refuse_root
from dra_metadata.cli._output import Output, safe_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from dra_metadata.kube import PoolStatus, PoolStatusResult

MAX_LIMIT = 1000
"""spec.limit's range is 1 to 1000 (kube-apiserver's validation)."""
HEADER = ["POOL", "NODE", "SLICES", "TOTAL", "ALLOCATED", "AVAILABLE", "UNAVAILABLE", "ERROR"]
NONE = "<none>"
"""What kubectl get prints for a field that is not set."""


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of pools") from None
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"{value}: the limit must be from 1 to {MAX_LIMIT}")
    return value


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("driver", metavar="DRIVER", help="the DRA driver, e.g. gpu.example.com")
    parser.add_argument(
        "--pool", metavar="P", help="only pool P (node-7, rack-1/node-7; default: every pool)"
    )
    parser.add_argument(
        "--limit",
        metavar="N",
        type=_limit,
        help=f"at most N pools, 1 to {MAX_LIMIT} (default: the server's, 100); a line says "
        "when more matched",
    )
    parser.add_argument(
        "--timeout",
        metavar="T",
        type=parse_timeout,
        default=30.0,
        help="give up when kube-controller-manager has not answered after T (90s, 2m; default 30s)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the ResourcePoolStatusRequest (default: delete it after reading)",
    )
    add_output_argument(parser)


def _checked(arguments: argparse.Namespace) -> None:
    """DRIVER and --pool with the server's rules, in the command's words."""
    from dra_metadata.kube._pool_errors import check_driver, check_pool  # noqa: PLC0415

    try:
        check_driver(arguments.driver)
        check_pool(arguments.pool)
    except InvalidNameError as error:
        label = "DRIVER" if error.argument == "driver" else "--pool"
        raise UsageError(f"{label} {error.value!r}: {error.reason}") from None


def _count(value: int | None) -> str:
    return NONE if value is None else str(value)


def _row(pool: PoolStatus) -> list[str]:
    return [
        pool.pool_name,
        pool.node_name or NONE,
        _count(pool.resource_slice_count),
        _count(pool.total_devices),
        _count(pool.allocated_devices),
        _count(pool.available_devices),
        _count(pool.unavailable_devices),
        pool.validation_error or NONE,
    ]


def _show_table(result: PoolStatusResult, arguments: argparse.Namespace, out: Output) -> None:
    if not result.pools:
        which = f"pool {arguments.pool} of " if arguments.pool else ""
        out.write(f"No pools found for {safe_text(which)}driver {safe_text(arguments.driver)}.\n")
    else:
        rows = [HEADER] + [[safe_text(cell) for cell in _row(pool)] for pool in result.pools]
        widths = [max(len(row[column]) for row in rows) for column in range(len(HEADER))]
        for row in rows:  # as kubectl get: columns padded to the widest cell, 3 spaces apart
            cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            out.write("   ".join(cells).rstrip() + "\n")
    if result.truncated:
        out.write(
            f"Showing {len(result.pools)} of {result.pool_count} pools: the list was truncated; "
            f"raise --limit (at most {MAX_LIMIT}) to see more.\n"
        )
    if arguments.keep:
        out.write(f"Kept resourcepoolstatusrequest {safe_text(result.request_name)}.\n")


def _run(arguments: argparse.Namespace, out: Output) -> int:
    refuse_root(arguments)
    _checked(arguments)
    from dra_metadata import kube  # noqa: PLC0415 - the API part, only for this subcommand

    result = kube.read_pool_status(
        arguments.driver,
        pool=arguments.pool,
        limit=arguments.limit,
        timeout=arguments.timeout,
        keep=arguments.keep,
    )
    if output_format(arguments, out) == "json":
        out.write_json(result.to_document())
    else:
        _show_table(result, arguments, out)
    return EXIT_OK


COMMAND = Command(
    name="pools",
    summary="show how many devices each resource pool of a driver has, uses and has free "
    "(Kubernetes API)",
    description="Ask kube-controller-manager for the status of a driver's resource pools: "
    "create a ResourcePoolStatusRequest (resource.k8s.io/v1alpha3, alpha in Kubernetes 1.36), "
    "wait for its answer, print it and delete the request. Per pool: the node, the "
    "ResourceSlices and the total, allocated, available and unavailable devices (allocated "
    "counts allocation results: shares of one device count once each). Needs kube-apiserver "
    "with --runtime-config=resource.k8s.io/v1alpha3=true, kube-controller-manager with "
    "--feature-gates=DRAResourcePoolStatus=true, and create, get, watch and delete on "
    "resourcepoolstatusrequests (examples/kubernetes/pool-status-rbac.yaml).",
    examples=(
        "dra-metadata pools gpu.example.com",
        "dra-metadata pools gpu.example.com --pool node-7 -o json",
        "dra-metadata pools gpu.example.com --limit 10 --timeout 1m",
    ),
    add_arguments=_add_arguments,
    run=_run,
    reads_files=False,
    needs_extra="kube",
    exit_codes="exit codes: 0 shown (also when no pool matched), 2 usage, 5 the Kubernetes API "
    "refused, does not serve the resource, could not be reached, or kube-controller-manager "
    "did not answer within --timeout, 7 the kube extra is not installed",
)
