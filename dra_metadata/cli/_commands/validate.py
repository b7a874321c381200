"""``dra-metadata validate``: check metadata files against the validation rules."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import dra_metadata
from dra_metadata import (
    DeviceMetadataError,
    MetadataDecodeError,
    MetadataNotFoundError,
    MetadataReadError,
)
from dra_metadata._reading._missing import describe_missing_root
from dra_metadata._reading._paths import HOST_METADATA_DIR_NAME, HOST_METADATA_FILE_NAME
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

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

CONTAINER_LAYOUT = "container"
"""What the container sees: resourceclaims/<claim>/<request>/<driver>-metadata.json."""
HOST_LAYOUT = "host"
"""What a driver writes on the node (the kubelet plugin's data directory):
dra-device-metadata/<namespace>_<claim>/<request>/metadata.json."""
_LAYOUT_SHAPES = {
    CONTAINER_LAYOUT: (
        "the container's layout (resourceclaims or resourceclaimtemplates/<claim>/<request>/"
        f"<driver>{dra_metadata.METADATA_FILE_SUFFIX})"
    ),
    HOST_LAYOUT: (
        f"a driver's host-side layout ({HOST_METADATA_DIR_NAME}/<namespace>_<claim>/<request>/"
        f"{HOST_METADATA_FILE_NAME})"
    ),
}


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        metavar="PATH",
        nargs="*",
        type=Path,
        help="files, or directories searched for metadata files in either layout (default: the "
        "metadata root)",
    )
    parser.add_argument("--strict", action="store_true", help="also the API server's rules")
    add_output_argument(parser)
    add_max_size_argument(parser)


def _problem(path: Path, error: DeviceMetadataError) -> dict[str, Any]:
    """The report of a path that was not validated: why, in ``error`` (the exception itself
    under ``problem``, taken out before the output)."""
    return {
        "path": str(path),
        "layout": layout_of(path),
        "status": next(name for kind, name in _STATUS if isinstance(error, kind)),
        "problem": error,
        "apiVersion": None,
        "skippedVersions": [],
        "error": error.message,
        "errors": [],
        "stale": False,
        "valid": False,
    }


def layout_of(path: Path) -> str | None:
    """Which layout a metadata file's path is in: the container's (``<driver>-metadata.json``)
    or a driver's on the node (``dra-device-metadata/<ns>_<claim>/<request>/metadata.json``);
    None for another name."""
    if path.name.endswith(dra_metadata.METADATA_FILE_SUFFIX):
        return CONTAINER_LAYOUT
    claim = path.parent.parent
    if (
        path.name == HOST_METADATA_FILE_NAME
        and claim.parent.name == HOST_METADATA_DIR_NAME
        and "_" in claim.name
    ):
        return HOST_LAYOUT
    return None


def _walk(directory: Path) -> Iterator[tuple[Path, dict[str, Any] | None]]:
    """Every metadata file entry below ``directory``, in either layout (None: to read), and a
    report for each directory that cannot be listed; byte-wise sorted. Symlinked directories
    are not followed (a loop would never end), a symlinked metadata file is read."""
    # Loaded when a tree is walked: the command's --help lists this subcommand without it.
    from dra_metadata._reading._listing import unreadable_entry  # noqa: PLC0415

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
        if layout_of(path) is not None:
            entry_problem = unreadable_entry(path)
            yield path, None if entry_problem is None else _problem(path, entry_problem)
        try:
            real_directory = entry.is_dir(follow_symlinks=False)
        except OSError:
            real_directory = False
        if real_directory:
            yield from _walk(path)


def _targets(paths: Sequence[Path]) -> Iterator[tuple[Path | None, Path, dict[str, Any] | None]]:
    """What each PATH holds to validate, with the directory PATH it was found below (None for
    a file PATH): nothing is dropped, whatever the others hold."""
    for path in paths:
        if not path.is_dir():
            yield None, path, None  # a file, or what the reader says it is (missing, a FIFO)
            continue
        found = list(_walk(path))
        if not found:
            missing = MetadataNotFoundError(
                f"no *{dra_metadata.METADATA_FILE_SUFFIX} file ({_LAYOUT_SHAPES[CONTAINER_LAYOUT]})"
                f" nor {HOST_METADATA_FILE_NAME} ({_LAYOUT_SHAPES[HOST_LAYOUT]}) below it",
                path=path,
            )
            found = [(path, _problem(path, missing))]
        for file, problem in found:
            yield path, file, problem


def _layouts_found(
    origins: list[Path | None], reports: list[dict[str, Any]]
) -> list[tuple[Path, str, int]]:
    """Per directory PATH, how many files it held in each layout."""
    counts: dict[tuple[Path, str], int] = {}
    for origin, report in zip(origins, reports, strict=True):
        if origin is not None and report["layout"] is not None:
            counts[origin, report["layout"]] = counts.get((origin, report["layout"]), 0) + 1
    return [(origin, layout, count) for (origin, layout), count in counts.items()]


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
        "layout": layout_of(path),
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


def _write_table(
    reports: list[dict[str, Any]], layouts: list[tuple[Path, str, int]], profile: str, out: Output
) -> None:
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
    for directory, layout, count in layouts:
        files = f"{count} metadata file{'s' if count != 1 else ''}"
        out.write(f"{safe_text(str(directory))}: {files} in {_LAYOUT_SHAPES[layout]}\n")


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
    targets = list(_targets(paths))
    reports = [
        problem or _report(path, profile, arguments.max_size) for _, path, problem in targets
    ]
    layouts = _layouts_found([origin for origin, _, _ in targets], reports)
    unreadable = [report.pop("problem") for report in reports if report["status"] == "unreadable"]
    for report in reports:
        report.pop("problem", None)
    if output_format(arguments, out) == "json":
        out.write_json(reports)
    else:
        _write_table(reports, layouts, profile, out)
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
    description="Validate metadata files, or every metadata file below directories (the "
    "metadata root when no PATH is given), in the container's layout (<driver>-metadata.json) "
    "or a driver's on the node (dra-device-metadata/<namespace>_<claim>/<request>/metadata.json "
    "in its plugin directory); the table says which layout it found, the JSON gives each "
    "file's layout. Every path is accounted for: a file that is no "
    "regular file, cannot be opened or cannot be decoded, a directory that cannot be listed "
    "and a PATH with no metadata file below it are each a finding, with the reason. A stale "
    "view (the driver replaced a file on the host) is marked.",
    examples=(
        "dra-metadata validate",
        "dra-metadata validate --strict ./metadata.json -o json",
        "dra-metadata validate /var/lib/kubelet/plugins/gpu.example.com",
    ),
    add_arguments=_add_arguments,
    run=_run,
    exit_codes="exit codes: 0 all valid, 1 something is invalid, undecodable or missing, "
    "2 usage, 4 all valid but some stale view (restart the container), 6 something could not "
    "be read (permission denied, I/O error, not a regular file, a directory not listable)",
)
