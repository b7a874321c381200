"""``dra-metadata ls``: every metadata file under the root (for debugging)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import dra_metadata
from dra_metadata import DeviceMetadataError, MetadataNotFoundError
from dra_metadata._missing import describe_missing_root, listing
from dra_metadata._paths import driver_of_file_name
from dra_metadata._read import list_metadata_files
from dra_metadata.cli._arguments import Command, add_output_argument, output_format
from dra_metadata.cli._exit import EXIT_OK, report_stale
from dra_metadata.cli._output import Output, safe_text, table


def _directories(directory: Path) -> list[Path]:
    return [directory / name for name in listing(directory) or [] if (directory / name).is_dir()]


def _entries(root: Path) -> list[dict[str, Any]]:
    entries = []
    for kind, subdirectory in (
        ("claim", dra_metadata.RESOURCE_CLAIMS_SUBDIR),
        ("template", dra_metadata.RESOURCE_CLAIM_TEMPLATES_SUBDIR),
    ):
        for claim_dir in _directories(root / subdirectory):
            for request_dir in _directories(claim_dir):
                where = {"kind": kind, "claim": claim_dir.name, "request": request_dir.name}
                try:
                    files = list_metadata_files(request_dir)
                except DeviceMetadataError as problem:
                    entries.append(
                        {
                            **where,
                            "driver": None,
                            "path": str(request_dir),
                            "generation": None,
                            "apiVersion": None,
                            "stale": False,
                            "error": problem.message,
                        }
                    )
                    continue
                entries.extend(_entry(where, path) for path in files)
    return entries


def _entry(where: dict[str, str], path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {
        **where,
        "driver": driver_of_file_name(path.name),
        "path": str(path),
    }
    try:
        metadata = dra_metadata.read_metadata_file(path)
    except DeviceMetadataError as problem:
        entry.update(generation=None, apiVersion=None, stale=False, error=problem.message)
    else:
        entry.update(
            generation=metadata.generation,
            apiVersion=metadata.api_version,
            stale=metadata.sources[0].stale,
            error=None,
        )
    return entry


def _run(arguments: argparse.Namespace, out: Output) -> int:
    root = Path(arguments.root or dra_metadata.default_root())
    missing = describe_missing_root(arguments.root)
    if missing is not None:
        raise MetadataNotFoundError(missing, path=root)
    entries = _entries(root)
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
                    entry["kind"],
                    entry["claim"],
                    entry["request"],
                    entry["driver"] or "-",
                    generation,
                    entry["apiVersion"] or f"error: {entry['error']}",
                ]
            )
        table(rows, out)
    out.flush()
    stale = [Path(entry["path"]) for entry in entries if entry["stale"]]
    return report_stale(stale) if stale else EXIT_OK


COMMAND = Command(
    name="ls",
    summary="list everything mounted under the root (debugging)",
    description="List every metadata file under the root: claims, template claims, requests, "
    "drivers and generations; stale views are marked (and the command exits 4). "
    "Applications should name their claims explicitly.",
    examples=("dra-metadata ls", "dra-metadata ls -o json"),
    add_arguments=add_output_argument,
    run=_run,
)
