"""``dra-metadata validate``: check metadata files against the validation rules."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import dra_metadata
from dra_metadata import (
    DeviceMetadataError,
    MetadataDecodeError,
    MetadataNotFoundError,
    MetadataReadError,
)
from dra_metadata._reading._listing import unreadable_entry
from dra_metadata._reading._missing import describe_missing_root
from dra_metadata.cli._arguments import (
    Command,
    add_max_size_argument,
    add_output_argument,
    output_format,
    refuse,
)
from dra_metadata.cli._exit import (
    EXIT_NOT_READY,
    EXIT_OK,
    report_stale,
    report_unreadable,
)
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
    add_max_size_argument(parser)


def _problem(path: Path, error: DeviceMetadataError) -> dict[str, Any]:
    """The report of a path that was not validated: why, in ``error`` (the exception itself
    under ``problem``, taken out before the output)."""
    return {
        "path": str(path),
        "status": next(name for kind, name in _STATUS if isinstance(error, kind)),
        "problem": error,
        "apiVersion": None,
        "skippedVersions": [],
        "error": error.message,
        "errors": [],
        "stale": False,
        "valid": False,
    }


def _walk(directory: Path) -> Iterator[tuple[Path, dict[str, Any] | None]]:
    """Every ``*-metadata.json`` entry below ``directory`` (None: to read), and a report for
    each directory that cannot be listed; byte-wise sorted. Symlinked directories are not
    followed (a loop would never end), a symlinked ``*-metadata.json`` is read."""
    try:
        with os.scandir(directory) as scanned:
            entries = sorted(scanned, key=lambda entry: os.fsencode(entry.name))
    except OSError as error:
        problem = MetadataReadError(
            f"cannot list the directory: {error.strerror}", path=directory, os_errno=error.errno
        )
        yield directory, _problem(directory, problem)
        return
    for entry in entries:
        path = Path(entry.path)
        if entry.name.endswith(dra_metadata.METADATA_FILE_SUFFIX):
            entry_problem = unreadable_entry(path)
            yield path, None if entry_problem is None else _problem(path, entry_problem)
        try:
            real_directory = entry.is_dir(follow_symlinks=False)
        except OSError:
            real_directory = False
        if real_directory:
            yield from _walk(path)


def _targets(paths: Sequence[Path]) -> Iterator[tuple[Path, dict[str, Any] | None]]:
    """What each PATH holds to validate: nothing is dropped, whatever the others hold."""
    for path in paths:
        if not path.is_dir():
            yield path, None  # a file, or what the reader says it is (missing, a FIFO, a loop)
            continue
        found = list(_walk(path))
        if not found:
            found = [
                (
                    path,
                    _problem(
                        path,
                        MetadataNotFoundError(
                            f"no *{dra_metadata.METADATA_FILE_SUFFIX} file below it", path=path
                        ),
                    ),
                )
            ]
        yield from found


_STATUS = (
    (MetadataNotFoundError, "not-found"),
    (MetadataReadError, "unreadable"),
    (MetadataDecodeError, "undecodable"),
)


def _report(path: Path, profile: dra_metadata.Profile, max_size: int) -> dict[str, Any]:
    try:
        metadata = dra_metadata.read_metadata_file(path, max_size=max_size)
    except (MetadataDecodeError, MetadataNotFoundError, MetadataReadError) as error:
        return _problem(path, error)
    source = metadata.sources[0]
    errors = [
        {
            "path": e.path,
            "type": e.type,
            "value": e.value,
            "detail": e.detail,
            "message": str(e),
        }
        for e in dra_metadata.validate(metadata, profile=profile)
    ]
    return {
        "path": str(path),
        "status": "invalid" if errors else "valid",
        "apiVersion": source.api_version,
        "skippedVersions": list(source.skipped_versions),
        "error": None,
        "errors": errors,
        "stale": source.stale,
        "valid": not errors,
    }


_VERDICTS = {
    "not-found": "not found",
    "unreadable": "cannot be read",
    "undecodable": "cannot be decoded",
}


def _write_table(reports: list[dict[str, Any]], profile: str, out: Output) -> None:
    for report in reports:
        path = safe_text(report["path"])
        if report["error"] is not None:
            verdict = _VERDICTS[report["status"]]
            out.write(f"{path}: {verdict}: {safe_text(report['error'])}\n")
            continue
        skipped = (
            f", skipped {', '.join(report['skippedVersions'])}" if report["skippedVersions"] else ""
        )
        verdict = "valid" if report["valid"] else f"{len(report['errors'])} error(s)"
        view = ", STALE view: restart the container" if report["stale"] else ""
        line = f"{report['apiVersion']}{skipped}: {verdict} ({profile}){view}"
        out.write(f"{path}: {safe_text(line)}\n")
        out.writelines(f"  {safe_text(finding['message'])}\n" for finding in report["errors"])


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
    reports = [
        problem or _report(path, profile, arguments.max_size) for path, problem in _targets(paths)
    ]
    unreadable = [report.pop("problem") for report in reports if report["status"] == "unreadable"]
    for report in reports:
        report.pop("problem", None)
    if output_format(arguments, out) == "json":
        out.write_json(reports)
    else:
        _write_table(reports, profile, out)
    out.flush()
    if unreadable:
        return report_unreadable(unreadable)
    if {report["status"] for report in reports} - {"valid"}:
        return EXIT_NOT_READY
    stale = [Path(report["path"]) for report in reports if report["stale"]]
    return report_stale(stale) if stale else EXIT_OK


COMMAND = Command(
    name="validate",
    summary="validate metadata files",
    description="Validate metadata files, or every *-metadata.json below directories (the "
    "metadata root when no PATH is given). Every path is accounted for: a file that is no "
    "regular file, cannot be opened or cannot be decoded, a directory that cannot be listed "
    "and a PATH with no metadata file below it are each a finding, with the reason. A stale "
    "view (the driver replaced a file on the host) is marked.",
    examples=(
        "dra-metadata validate",
        "dra-metadata validate --strict ./metadata.json -o json",
    ),
    add_arguments=_add_arguments,
    run=_run,
    exit_codes="exit codes: 0 all valid, 1 something is invalid, undecodable or missing, "
    "2 usage, 4 all valid but some stale view (restart the container), 6 something could not "
    "be read (permission denied, I/O error, not a regular file, a directory not listable)",
)
