"""``dra-metadata ls``: every metadata file under the root (for debugging).

The request directories come from list_claims; each file is read on its own, so that one file
or directory that cannot be read or decoded is listed with its error instead of hiding the
others.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import dra_metadata
from dra_metadata import DeviceMetadataError, MetadataNotFoundError, MetadataReadError
from dra_metadata._reading._paths import driver_of_file_name
from dra_metadata.cli._arguments import (
    Command,
    add_max_size_argument,
    add_output_argument,
    output_format,
)
from dra_metadata.cli._exit import (
    EXIT_INVALID,
    EXIT_NOT_READY,
    EXIT_OK,
    report_stale,
    report_unreadable,
)
from dra_metadata.cli._output import Output, safe_text, table

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

_KINDS = {
    dra_metadata.RESOURCE_CLAIMS_SUBDIR: "claim",
    dra_metadata.RESOURCE_CLAIM_TEMPLATES_SUBDIR: "template",
}
_KIND_ORDER = {"claim": 0, "template": 1}


def _file_entry(
    claim: dra_metadata.MountedClaim, driver: str, path: Path, max_size: int
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": claim.kind,
        "claim": claim.claim_name,
        "request": claim.request_name,
        "driver": driver,
        "path": str(path),
    }
    try:
        # The file alone, by its path: a file name that is no driver name (bytes that are
        # not UTF-8) is still listed with what it holds.
        metadata = dra_metadata.read_metadata_file(path, max_size=max_size)
    except DeviceMetadataError as problem:
        if isinstance(problem, MetadataReadError):
            entry["problem"] = problem
        entry.update(
            generation=None,
            apiVersion=None,
            stale=False,
            status=_status(problem),
            error=problem.message,
        )
    else:
        entry.update(
            generation=metadata.generation,
            apiVersion=metadata.api_version,
            stale=metadata.sources[0].stale,
            status="ok",
            error=None,
        )
    return entry


def _status(problem: DeviceMetadataError) -> str:
    if isinstance(problem, MetadataReadError):
        return "unreadable"
    if isinstance(problem, MetadataNotFoundError):
        return "not-found"
    return "undecodable"


def _problem_entry(root: Path, problem: MetadataReadError) -> dict[str, Any]:
    """A directory below the root that could not be listed, or a ``*-metadata.json`` entry
    that is no regular file: as far as its path tells."""
    assert problem.path is not None  # noqa: S101 - list_claims names the path
    parts = problem.path.relative_to(root).parts
    return {
        "kind": _KINDS.get(parts[0]),
        "claim": parts[1] if len(parts) > 1 else None,
        "request": parts[2] if len(parts) > 2 else None,
        "driver": driver_of_file_name(parts[3]) if len(parts) > 3 else None,
        "path": str(problem.path),
        "generation": None,
        "apiVersion": None,
        "stale": False,
        "status": "unreadable",
        "error": problem.message,
    }


def _where(entry: dict[str, Any]) -> str:
    """The path of an error in the table, where the row does not name its file (a directory
    that could not be listed)."""
    return "" if entry["driver"] is not None else f"{entry['path']}: "


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    add_output_argument(parser)
    add_max_size_argument(parser)


def _order(entry: dict[str, Any]) -> tuple[int, bytes, bytes]:
    return (
        _KIND_ORDER.get(entry["kind"], 2),
        os.fsencode(entry["claim"] or ""),
        os.fsencode(entry["request"] or ""),
    )


def _entries(
    root: str | None, max_size: int
) -> tuple[Path, list[dict[str, Any]], list[MetadataReadError]]:
    problems: list[MetadataReadError] = []
    claims = dra_metadata.list_claims(root=root, on_error=problems.append)
    base = Path(root) if root is not None else dra_metadata.default_root()
    entries = [
        _file_entry(claim, driver, path, max_size)
        for claim in claims
        for driver, path in zip(claim.drivers, claim.paths, strict=True)
    ]
    entries += [_problem_entry(base, problem) for problem in problems]
    unreadable = [*problems, *(entry.pop("problem") for entry in entries if "problem" in entry)]
    return (
        base,
        sorted(entries, key=_order),
        unreadable,
    )  # stable: a directory's files stay in order


def _run(arguments: argparse.Namespace, out: Output) -> int:
    root, entries, unreadable = _entries(arguments.root, arguments.max_size)
    if output_format(arguments, out) == "json":
        out.write_json(entries)
    elif not entries:
        out.write(f"no metadata files under {safe_text(str(root))}\n")
    else:
        rows = [["KIND", "CLAIM", "REQUEST", "DRIVER", "GENERATION", "API VERSION"]]
        for entry in entries:
            generation = "-" if entry["generation"] is None else str(entry["generation"])
            if entry["stale"]:
                generation += " (STALE: restart the container)"
            rows.append(
                [
                    entry["kind"] or "-",
                    entry["claim"] or "-",
                    entry["request"] or "-",
                    entry["driver"] or "-",
                    generation,
                    entry["apiVersion"] or f"error: {_where(entry)}{entry['error']}",
                ]
            )
        table(rows, out)
    out.flush()
    statuses = {entry["status"] for entry in entries}
    if unreadable:
        return report_unreadable(unreadable)
    if statuses - {"ok"}:
        return EXIT_INVALID if "undecodable" in statuses else EXIT_NOT_READY
    stale = [Path(entry["path"]) for entry in entries if entry["stale"]]
    return report_stale(stale) if stale else EXIT_OK


COMMAND = Command(
    name="ls",
    summary="list everything mounted under the root (debugging)",
    description="List every metadata file under the root: claims, template claims, requests, "
    "drivers and generations; stale views are marked. A file that is no regular file, cannot "
    "be read or cannot be decoded, and a directory that cannot be listed, is listed with its "
    "error (and the exit code says so). Applications should name their claims explicitly.",
    examples=("dra-metadata ls", "dra-metadata ls -o json"),
    add_arguments=_add_arguments,
    run=_run,
    exit_codes="exit codes: 0 everything listed could be read, 1 a file vanished while being "
    "read, 2 usage, 3 some file cannot be decoded, 4 some stale view (restart the container), "
    "6 some file or directory could not be read (permission denied, I/O error, not a regular "
    "file); the listing is printed whatever the code",
)
