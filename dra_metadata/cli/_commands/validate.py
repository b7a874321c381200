"""``dra-metadata validate``: check metadata files against the validation rules."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import dra_metadata
from dra_metadata import MetadataDecodeError, MetadataNotFoundError, MetadataReadError
from dra_metadata._reading._missing import describe_missing_root
from dra_metadata.cli._arguments import Command, add_output_argument, output_format, refuse
from dra_metadata.cli._exit import EXIT_NOT_READY, EXIT_OK, report_stale
from dra_metadata.cli._output import Output, safe_text


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        metavar="PATH",
        nargs="*",
        type=Path,
        help="files, or directories searched for *-metadata.json (default: the metadata root)",
    )
    parser.add_argument("--strict", action="store_true", help="also the API server's rules")
    add_output_argument(parser)


def _metadata_files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            found = sorted(
                (p for p in path.rglob(f"*{dra_metadata.METADATA_FILE_SUFFIX}") if p.is_file()),
                key=os.fsencode,
            )
            if not found:
                raise MetadataNotFoundError(
                    f"no *{dra_metadata.METADATA_FILE_SUFFIX} file below it", path=path
                )
            yield from found
        else:
            yield path


def _report(path: Path, profile: dra_metadata.Profile) -> dict[str, Any]:
    report: dict[str, Any] = {"path": str(path), "apiVersion": None, "skippedVersions": []}
    try:
        metadata = dra_metadata.read_metadata_file(path)
    except (MetadataDecodeError, MetadataNotFoundError, MetadataReadError) as error:
        report.update(error=error.message, errors=[], stale=False)
    else:
        source = metadata.sources[0]
        report.update(
            apiVersion=source.api_version,
            skippedVersions=list(source.skipped_versions),
            error=None,
            errors=[
                {
                    "path": e.path,
                    "type": e.type,
                    "value": e.value,
                    "detail": e.detail,
                    "message": str(e),
                }
                for e in dra_metadata.validate(metadata, profile=profile)
            ],
            stale=source.stale,
        )
    report["valid"] = report["error"] is None and not report["errors"]
    return report


def _run(arguments: argparse.Namespace, out: Output) -> int:
    paths: list[Path] = arguments.paths
    refuse(
        paths and arguments.root is not None, "--root cannot go with PATHs: give one or the other"
    )
    if not paths:
        root = Path(arguments.root or dra_metadata.default_root())
        missing = describe_missing_root(arguments.root)
        if missing is not None:
            raise MetadataNotFoundError(missing, path=root)
        paths = [root]
    profile: dra_metadata.Profile = "strict" if arguments.strict else "metadata"
    reports = [_report(path, profile) for path in _metadata_files(paths)]
    if output_format(arguments, out) == "json":
        out.write_json(reports)
    else:
        for report in reports:
            path = safe_text(report["path"])
            if report["error"] is not None:
                out.write(f"{path}: cannot be decoded: {safe_text(report['error'])}\n")
                continue
            skipped = (
                f", skipped {', '.join(report['skippedVersions'])}"
                if report["skippedVersions"]
                else ""
            )
            verdict = "valid" if report["valid"] else f"{len(report['errors'])} error(s)"
            view = ", STALE view: restart the container" if report["stale"] else ""
            line = f"{report['apiVersion']}{skipped}: {verdict} ({profile}){view}"
            out.write(f"{path}: {safe_text(line)}\n")
            out.writelines(f"  {safe_text(finding['message'])}\n" for finding in report["errors"])
    out.flush()
    if not all(report["valid"] for report in reports):
        return EXIT_NOT_READY
    stale = [Path(report["path"]) for report in reports if report["stale"]]
    return report_stale(stale) if stale else EXIT_OK


COMMAND = Command(
    name="validate",
    summary="validate metadata files",
    description="Validate metadata files, or every *-metadata.json below directories (the "
    "metadata root when no PATH is given). A stale view (the driver replaced a file on the "
    "host) is marked.",
    examples=(
        "dra-metadata validate",
        "dra-metadata validate --strict ./metadata.json -o json",
    ),
    add_arguments=_add_arguments,
    run=_run,
    exit_codes="exit codes: 0 all valid, 1 something is invalid, undecodable or missing, "
    "2 usage, 4 all valid but some stale view (restart the container)",
)
