"""``dra-metadata health``: the health the kubelet reports for the pod's devices.

Read once, or watched (``--watch``: a row, or a JSON line, per change); ``--fail-on`` makes the
exit code a liveness or readiness probe. The API part is imported only when this runs.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from dra_metadata.cli._arguments import Command, add_output_argument, output_format, parse_timeout
from dra_metadata.cli._exit import EXIT_NOT_READY, EXIT_OK, complain
from dra_metadata.cli._kube import READ_TIMEOUT_SECONDS, add_kube_arguments, refuse_root
from dra_metadata.cli._output import Output, safe_text, table

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from dra_metadata.kube import DeviceHealth

FAILING = {"unhealthy": ("Unhealthy",), "unknown": ("Unhealthy", "Unknown")}
"""--fail-on: the health values that make the command exit 1."""
_HEADER = ["CONTAINER", "CLAIM", "REQUEST", "DRIVER", "POOL", "DEVICE", "HEALTH", "MESSAGE"]


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    add_kube_arguments(parser, pod_help="the pod (default: $POD_NAME, else the host name)")
    parser.add_argument(
        "--container", metavar="C", help="only container C's devices (default: every container)"
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="keep watching: a row (with -o json: one JSON line, the whole snapshot) per "
        "change of any device's health or message, until --timeout or a signal",
    )
    parser.add_argument(
        "--fail-on",
        choices=sorted(FAILING),
        help="exit 1 when a selected device is Unhealthy (unknown: Unhealthy or Unknown), "
        "else 0: a liveness or readiness probe; with --watch, exit 1 at the first such "
        "snapshot",
    )
    parser.add_argument(
        "--timeout",
        metavar="T",
        type=parse_timeout,
        help="without --watch: give up when the API server has not answered in full after T, "
        f"connecting and credentials included (default {READ_TIMEOUT_SECONDS:g}s); with "
        "--watch: how long to watch (default: until a signal); the watch then ends with exit "
        "0 (5s, 1m)",
    )
    add_output_argument(parser)


def _row(entry: DeviceHealth) -> list[str]:
    return [
        entry.container,
        entry.pod_claim_name or entry.resource_name or "-",
        entry.request or "-",
        entry.driver or "-",
        entry.pool or "-",
        entry.device or entry.resource_id or "-",
        entry.health,
        entry.message or "-",
    ]


def _failing(health: Iterable[DeviceHealth], fail_on: str | None) -> list[DeviceHealth]:
    if fail_on is None:
        return []
    return [entry for entry in health if entry.health in FAILING[fail_on]]


def _report_failing(failing: list[DeviceHealth]) -> int:
    """One line on stderr naming the devices, and EXIT_NOT_READY."""
    named = "; ".join(
        f"{entry.device or entry.resource_id} (container {entry.container}"
        f"{', claim ' + entry.pod_claim_name if entry.pod_claim_name else ''}) is "
        f"{entry.health}{': ' + entry.message if entry.message else ''}"
        for entry in failing
    )
    complain(f"{len(failing)} device{'s' if len(failing) != 1 else ''} failing: {named}")
    return EXIT_NOT_READY


def _show_unresolved(health: Iterable[DeviceHealth], told: set[str]) -> None:
    """Why a device is not named, once per reason, on stderr (the table shows its CDI ID)."""
    for entry in health:
        if entry.unresolved and entry.unresolved not in told:
            told.add(entry.unresolved)
            complain(f"note: {entry.resource_id} is not named: {entry.unresolved}")


@contextmanager
def _warnings_as_lines() -> Iterator[set[str]]:
    """The library's UnresolvedDeviceWarning as one ``dra-metadata: warning:`` line each."""
    from dra_metadata.kube import UnresolvedDeviceWarning  # noqa: PLC0415

    told: set[str] = set()
    original = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        if issubclass(category, UnresolvedDeviceWarning):
            told.add(str(message))
            complain(f"warning: {message}")
        else:
            original(message, category, *_, **__)  # type: ignore[arg-type]

    with warnings.catch_warnings():
        warnings.simplefilter("always", UnresolvedDeviceWarning)
        warnings.showwarning = show
        yield told


def _read_once(arguments: argparse.Namespace, out: Output) -> int:
    from dra_metadata import kube  # noqa: PLC0415 - the API part, only for this subcommand

    with _warnings_as_lines() as told:
        health = kube.read_device_health(
            pod_name=arguments.pod,
            container_name=arguments.container,
            namespace=arguments.namespace,
            timeout=arguments.timeout if arguments.timeout is not None else READ_TIMEOUT_SECONDS,
        )
    if output_format(arguments, out) == "json":
        out.write_json([entry.to_document() for entry in health])
    elif not health:
        which = f"container {arguments.container}" if arguments.container else "the containers"
        out.write(f"no device health reported for {safe_text(which)} (yet)\n")
    else:
        table([_HEADER] + [_row(entry) for entry in health], out)
        _show_unresolved(health, told)
    failing = _failing(health, arguments.fail_on)
    return _report_failing(failing) if failing else EXIT_OK


class _Rows:
    """The --watch table: the header and first snapshot aligned, later rows on those widths."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.widths: list[int] | None = None
        self.shown: dict[tuple[str, str, str], list[str]] = {}

    def write(self, health: tuple[DeviceHealth, ...]) -> None:
        from datetime import datetime, timezone  # noqa: PLC0415 - only while watching

        now = datetime.now(timezone.utc).strftime("%H:%M:%S")
        current = {(e.container, e.resource_name, e.resource_id): _row(e) for e in health}
        rows = [[now, *row] for key, row in current.items() if self.shown.get(key) != row]
        rows += [
            [now, *row[:6], "(gone)", "-"] for key, row in self.shown.items() if key not in current
        ]
        self.shown = current
        if self.widths is None:
            every = [["TIME", *_HEADER], *rows]
            self.widths = [max(len(safe_text(row[i])) for row in every) for i in range(9)]
            rows = every
            if not health:
                rows.append([now, "-", "-", "-", "-", "-", "-", "(none reported yet)", "-"])
        for row in rows:
            cells = (
                safe_text(cell).ljust(width) for cell, width in zip(row, self.widths, strict=True)
            )
            self.out.write("  ".join(cells).rstrip() + "\n")
        self.out.flush()


def _watch(arguments: argparse.Namespace, out: Output) -> int:
    import json  # noqa: PLC0415 - compact lines; only while watching

    from dra_metadata import kube  # noqa: PLC0415 - the API part, only for this subcommand

    as_json = output_format(arguments, out) == "json"
    rows = _Rows(out)
    snapshots = kube.watch_device_health(
        namespace=arguments.namespace,
        pod_name=arguments.pod,
        container=arguments.container,
        timeout=arguments.timeout,
    )
    try:
        with _warnings_as_lines() as told:
            for snapshot in snapshots:
                if as_json:
                    documents = [entry.to_document() for entry in snapshot]
                    out.write(json.dumps(documents, separators=(",", ":")) + "\n")
                    out.flush()
                else:
                    rows.write(snapshot)
                    _show_unresolved(snapshot, told)
                failing = _failing(snapshot, arguments.fail_on)
                if failing:
                    return _report_failing(failing)
    finally:
        # The watch's connection is closed here, before the exit code is reported, also when
        # a signal lands while a row is written (not whenever the generator is collected).
        close = getattr(snapshots, "close", None)
        if close is not None:
            close()
    return EXIT_OK


def _run(arguments: argparse.Namespace, out: Output) -> int:
    refuse_root(arguments)
    if arguments.watch:
        return _watch(arguments, out)
    return _read_once(arguments, out)


COMMAND = Command(
    name="health",
    summary="show, watch or probe the health of the pod's devices (Kubernetes API)",
    description="Read the pod from the Kubernetes API and show the health the kubelet reports "
    "for each device allocated to its containers (status.containerStatuses[]"
    ".allocatedResourcesStatus): Healthy, Unhealthy or Unknown, with the driver's message. A "
    "device the kubelet names by its CDI device ID is named through the pod's claims where "
    "that is unambiguous (else DEVICE shows the CDI ID and a note on stderr says why). "
    "--watch keeps watching; --fail-on turns the exit code into a probe. Needs get on pods "
    "(and watch with --watch); get on resourceclaims to name CDI-keyed devices (without it: "
    "one warning, the health unresolved).",
    examples=(
        "dra-metadata health",
        "dra-metadata health --pod trainer-0 --container trainer -o json",
        "dra-metadata health --fail-on unhealthy --timeout 5s",
        "dra-metadata health --watch -o json",
    ),
    add_arguments=_add_arguments,
    run=_run,
    reads_files=False,
    needs_extra="kube",
    exit_codes="exit codes: 0 shown (without --fail-on: whatever the health; --watch: ended "
    "by --timeout), 1 --fail-on: a selected device is Unhealthy (unknown: or Unknown), or no "
    "such pod or container, 2 usage, 5 the Kubernetes API refused, could not be reached or "
    "did not answer within --timeout, or the configuration (kubeconfig, ServiceAccount) "
    "cannot be used, 7 the kube extra is not installed, 130/143 interrupted/terminated (the "
    "end of a --watch by a signal)",
)
