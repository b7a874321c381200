"""The ``dra-metadata`` command: show, wait, validate, path, ls and env.

A thin layer over the public API: it parses arguments, calls the library and formats output.
Exit codes: 0 done/ready, 1 not ready (timed out, not found, invalid files in ``validate``),
2 usage error, 3 the data exists but cannot be decoded or is invalid, 4 stale view (the driver
replaced the file on the host: restart the container), 130 interrupted, 143 terminated.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TextIO

import orjson

import dra_metadata
from dra_metadata import (
    DeviceMetadata,
    DeviceMetadataError,
    MetadataDecodeError,
    MetadataNotFoundError,
    MetadataValidationError,
    StaleMetadataError,
    WaitTimeoutError,
)
from dra_metadata._models import wire_attribute
from dra_metadata._paths import driver_of_file_name
from dra_metadata._read import list_metadata_files

EXIT_OK, EXIT_NOT_READY, EXIT_USAGE, EXIT_INVALID, EXIT_STALE = 0, 1, 2, 3, 4
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143

KEY_ATTRIBUTES = (
    "uuid",
    "resource.kubernetes.io/pciBusID",
    "pciBusID",
    "productName",
    "model",
    "index",
    "numaNode",
)
"""Attributes the table shows first (an unqualified name also matches ``<driver>/<name>``)."""

_PROGRAM = "dra-metadata"


class _UsageError(Exception):
    pass


# Output helpers ---------------------------------------------------------------------------


def _value_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(_value_text(item) for item in value)
    return str(value)


def _device_json(device: dra_metadata.Device) -> dict[str, Any]:
    data = device.network_data
    return {
        "driver": device.driver,
        "pool": device.pool,
        "name": device.name,
        "attributes": {
            key: wire_attribute(device.attributes[key]) for key in sorted(device.attributes)
        },
        "networkData": None
        if data is None
        else {
            "interfaceName": data.interface_name,
            "ips": list(data.ips),
            "hardwareAddress": data.hardware_address,
        },
    }


def metadata_json(metadata: DeviceMetadata) -> dict[str, Any]:
    """The stable JSON document of ``show -o json`` and ``wait -o json`` (see the README)."""
    return {
        "name": metadata.name,
        "namespace": metadata.namespace,
        "uid": metadata.uid,
        "podClaimName": metadata.pod_claim_name,
        "files": [
            {
                "path": str(source.path) if source.path is not None else None,
                "driver": source.driver,
                "apiVersion": source.api_version,
                "generation": source.generation,
                "skippedVersions": list(source.skipped_versions),
            }
            for source in metadata.sources
        ],
        "requests": [
            {"name": request.name, "devices": [_device_json(d) for d in request.devices]}
            for request in metadata.requests
        ],
    }


def _print_json(value: object, out: TextIO) -> None:
    out.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


def _table(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        out.write(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        out.write("\n")


def _show_table(metadata: DeviceMetadata, out: TextIO, *, all_attributes: bool) -> None:
    who = f"{metadata.namespace}/{metadata.name}" if metadata.namespace else metadata.name
    claim = f"claim {who or '(unnamed)'}"
    if metadata.pod_claim_name is not None:
        claim += f" (pod claim {metadata.pod_claim_name})"
    out.write(claim + "\n\n")
    rows = [["FILE", "DRIVER", "API VERSION", "GENERATION"]]
    rows += [
        [str(s.path), s.driver or "-", s.api_version, str(s.generation)] for s in metadata.sources
    ]
    _table(rows, out)
    out.write("\n")
    rows = [["REQUEST", "DRIVER", "POOL", "DEVICE", "ATTRIBUTES", "NETWORK"]]
    details: list[tuple[str, list[str]]] = []
    for request in metadata.requests:
        for device in request.devices:
            shown: list[str] = []
            used: set[int] = set()
            for name in KEY_ATTRIBUTES:
                try:
                    attribute = device.get_attribute(name)
                except dra_metadata.AttributeNotFoundError:
                    continue
                if attribute is not None and id(attribute) not in used:
                    used.add(id(attribute))
                    shown.append(f"{name.rsplit('/', 1)[-1]}={_attribute_text(attribute)}")
            rest = len(device.attributes) - len(used)
            if rest > 0:
                shown.append(f"+{rest} more")
            network = device.network_data
            network_text = "-"
            if network is not None:
                parts = [network.interface_name, ",".join(network.ips), network.hardware_address]
                network_text = " ".join(part for part in parts if part) or "(empty)"
            rows.append(
                [
                    request.name,
                    device.driver,
                    device.pool,
                    device.name,
                    " ".join(shown) or "-",
                    network_text,
                ]
            )
            if all_attributes:
                details.append(
                    (
                        f"{device.driver} {device.pool}/{device.name}",
                        [
                            f"  {key} = {_attribute_text(device.attributes[key])}"
                            for key in sorted(device.attributes)
                        ],
                    )
                )
    _table(rows, out)
    out.writelines(f"\n{title}\n" + "\n".join(lines) + "\n" for title, lines in details)


def _attribute_text(attribute: dra_metadata.DeviceAttribute) -> str:
    try:
        value = attribute.value
    except dra_metadata.AttributeValueError:
        return "(" + ", ".join(attribute.members) + ")"
    return "(unset)" if value is None else _value_text(value)


# Arguments ----------------------------------------------------------------------------------

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)?")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``2m``, ``1h``, ``1m30s``, ``500ms`` -> seconds."""
    position, total = 0, 0.0
    while position < len(text):
        match = _DURATION.match(text, position)
        if match is None:
            raise argparse.ArgumentTypeError(f"invalid duration {text!r} (use e.g. 90s, 2m, 1h)")
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not text:
        raise argparse.ArgumentTypeError("empty duration")
    return total


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _claim_arguments(parser: argparse.ArgumentParser, *, driver: bool = True) -> None:
    parser.add_argument(
        "claim", metavar="CLAIM", help="claim name (or pod claim name with --template)"
    )
    parser.add_argument(
        "request", metavar="REQUEST", help="request name (request/subrequest allowed)"
    )
    parser.add_argument(
        "--template",
        action="store_true",
        help="CLAIM is a pod claim name (pod.spec.resourceClaims[].name) of a claim made from "
        "a ResourceClaimTemplate",
    )
    if driver:
        parser.add_argument("--driver", metavar="D", help="read only driver D's file")


def _output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=["table", "json"],
        help="table (default on a terminal) or json (default otherwise)",
    )


def _global_arguments(
    parser: argparse.ArgumentParser, *, default_root: object, default_debug: object
) -> None:
    """--root and --debug, accepted before the command and after it.

    The commands' copies default to SUPPRESS, so that they set nothing unless given and a
    value given before the command stays.
    """
    parser.add_argument(
        "--root",
        metavar="DIR",
        default=default_root,
        help="metadata root (default: $DRA_METADATA_ROOT, else "
        "/var/run/kubernetes.io/dra-device-attributes)",
    )
    parser.add_argument(
        "--debug", action="store_true", default=default_debug, help="show tracebacks"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command (also used to document it)."""
    parser = argparse.ArgumentParser(
        prog=_PROGRAM,
        description="Read, wait for and check the DRA device metadata (KEP-5304) that drivers "
        "publish into this container.",
        epilog="exit codes: 0 ok, 1 not ready or not found, 2 usage, 3 undecodable or invalid "
        "data, 4 stale view (restart the container), 130 interrupted, 143 terminated\n"
        "example: dra-metadata show my-claim gpu",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    _global_arguments(parser, default_root=None, default_debug=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    show = commands.add_parser(
        "show",
        help="show the devices of a claim's request",
        description="Show the devices, attributes and network data of one request of a claim.",
        epilog="examples:\n  dra-metadata show my-claim gpu\n"
        "  dra-metadata show --template my-gpu gpu -o json\n"
        "  dra-metadata show --file /var/run/.../gpu.example.com-metadata.json",
        formatter_class=_Formatter,
    )
    show.add_argument("claim", metavar="CLAIM", nargs="?", help="claim name")
    show.add_argument("request", metavar="REQUEST", nargs="?", help="request name")
    show.add_argument("--template", action="store_true", help="CLAIM is a pod claim name")
    show.add_argument("--driver", metavar="D", help="read only driver D's file")
    show.add_argument("--file", metavar="PATH", type=Path, help="show one metadata file")
    show.add_argument("-A", "--all-attributes", action="store_true", help="list every attribute")
    show.add_argument("--validate", choices=["metadata", "strict"], help="also validate (exit 3)")
    _output_argument(show)

    wait = commands.add_parser(
        "wait",
        help="wait until metadata is ready (for init containers)",
        description="Wait until the metadata of a claim's request is ready, printing every 5 s "
        "on stderr what it waits for and what it sees.",
        epilog="examples:\n  dra-metadata wait nic-claim nic --for network-data --timeout 2m\n"
        "  dra-metadata wait --template nic vf --for network-data --require interface-name,ips\n"
        "  dra-metadata wait gpus gpu --for attribute=uuid --timeout 30s\n"
        "  dra-metadata wait gpus gpu --driver gpu.example.com --for generation=2\n"
        "exit codes: 0 ready, 1 timed out, 2 usage, 3 undecodable or invalid, 4 stale view",
        formatter_class=_Formatter,
    )
    _claim_arguments(wait)
    wait.add_argument(
        "--for",
        dest="condition",
        metavar="CONDITION",
        default="file",
        help="network-data, file (default), generation=N (every file), or "
        "attribute=NAME[=VALUE] (every device)",
    )
    wait.add_argument(
        "--require",
        default="interface-name",
        metavar="FIELDS",
        help="with --for network-data: comma-separated interface-name, ips, hardware-address "
        "(default interface-name)",
    )
    wait.add_argument("--timeout", type=parse_duration, metavar="DURATION", help="e.g. 90s, 2m")
    wait.add_argument(
        "--poll-interval", type=parse_duration, default=1.0, metavar="DURATION", help="default 1s"
    )
    wait.add_argument("--validate", choices=["metadata", "strict"], help="invalid data exits 3")
    wait.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    _output_argument(wait)

    validate = commands.add_parser(
        "validate",
        help="validate metadata files",
        description="Validate metadata files, or every *-metadata.json below directories.",
        epilog="examples:\n  dra-metadata validate /var/run/kubernetes.io/dra-device-attributes\n"
        "  dra-metadata validate --strict ./metadata.json -o json\n"
        "exit codes: 0 all valid, 1 something is invalid or undecodable, 2 usage",
        formatter_class=_Formatter,
    )
    validate.add_argument("paths", metavar="PATH", nargs="+", type=Path)
    validate.add_argument("--strict", action="store_true", help="also the API server's rules")
    _output_argument(validate)

    path = commands.add_parser(
        "path",
        help="print where a claim's metadata is",
        description="Print the request directory, or with --driver the driver's file.",
        epilog="example:\n  dra-metadata path my-claim gpu --driver gpu.example.com",
        formatter_class=_Formatter,
    )
    _claim_arguments(path)

    listing = commands.add_parser(
        "ls",
        help="list everything mounted under the root (debugging)",
        description="List every metadata file under the root: claims, template claims, "
        "requests, drivers and generations. Applications should name their claims explicitly.",
        epilog="example:\n  dra-metadata ls -o json",
        formatter_class=_Formatter,
    )
    _output_argument(listing)

    env = commands.add_parser(
        "env",
        help="print attributes as shell export lines",
        description="Print `export VAR=VALUE` lines for attributes of every device of a request "
        "(values of several devices joined), quoted so that eval is safe.",
        epilog='example:\n  eval "$(dra-metadata env gpus gpu --attribute uuid --var GPU_UUIDS)"',
        formatter_class=_Formatter,
    )
    _claim_arguments(env)
    env.add_argument(
        "--attribute", action="append", required=True, metavar="NAME", help="repeatable"
    )
    env.add_argument(
        "--var", action="append", metavar="VAR", help="variable name, one per --attribute"
    )
    env.add_argument("--join", default=",", metavar="SEP", help="separator (default ',')")
    for command in commands.choices.values():
        _global_arguments(command, default_root=argparse.SUPPRESS, default_debug=argparse.SUPPRESS)
    return parser


class _VersionAction(argparse.Action):
    """--version, looking the version up only when asked (package metadata is slow to read)."""

    def __init__(self, option_strings: list[str], dest: str, **options: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **options)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        try:
            version = str(dra_metadata.__version__)
        except Exception:  # noqa: BLE001 - not installed: run from a source tree
            version = "unknown"
        sys.stdout.write(f"{parser.prog} {version}\n")
        parser.exit()


# Commands ---------------------------------------------------------------------------------


def _is_terminal(stream: TextIO) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()


def _output(arguments: argparse.Namespace, out: TextIO) -> str:
    chosen: str | None = arguments.output
    return chosen or ("table" if _is_terminal(out) else "json")


def _read(arguments: argparse.Namespace, *, validate: str | None = None) -> DeviceMetadata:
    reader = (
        dra_metadata.read_template_metadata
        if arguments.template
        else dra_metadata.read_claim_metadata
    )
    return reader(
        arguments.claim,
        arguments.request,
        driver=arguments.driver,
        root=arguments.root,
        validate=validate or False,  # type: ignore[arg-type]
    )


def _command_show(arguments: argparse.Namespace, out: TextIO) -> int:
    if arguments.file is not None:
        if arguments.claim or arguments.request or arguments.driver or arguments.template:
            raise _UsageError("give either --file PATH or CLAIM REQUEST, not both")
        metadata = dra_metadata.read_metadata_file(
            arguments.file, validate=arguments.validate or False
        )
    else:
        if not (arguments.claim and arguments.request):
            raise _UsageError("show needs CLAIM and REQUEST (or --file PATH)")
        metadata = _read(arguments, validate=arguments.validate)
    if _output(arguments, out) == "json":
        _print_json(metadata_json(metadata), out)
    else:
        _show_table(metadata, out, all_attributes=arguments.all_attributes)
    return EXIT_OK


def _generation_condition(wanted: int) -> dra_metadata.Condition:
    def condition(metadata: DeviceMetadata) -> str | None:
        behind = [s for s in metadata.sources if s.generation < wanted]
        if behind:
            seen = ", ".join(f"{s.driver or s.path} generation {s.generation}" for s in behind)
            return f"{seen} (waiting for {wanted})"
        return None

    return condition


def _attribute_condition(name: str, value: str | None) -> dra_metadata.Condition:
    def condition(metadata: DeviceMetadata) -> str | None:
        if not metadata.devices:
            return "no devices"
        for device in metadata.devices:
            found = device.get_attribute(name)
            if found is None:
                return f"device {device.name} has no attribute {name}"
            if value is not None and _attribute_text(found) != value:
                return f"device {device.name} has {name}={_attribute_text(found)}"
        return None

    return condition


def _condition(arguments: argparse.Namespace) -> tuple[dra_metadata.Condition, str]:
    """The condition of ``--for`` and a description of it."""
    text: str = arguments.condition
    kind, _, rest = text.partition("=")
    if text == "file":
        return (lambda _: None), "the metadata file"
    if text == "network-data":
        fields = tuple(
            name.strip().replace("-", "_") for name in arguments.require.split(",") if name.strip()
        )
        try:
            condition = dra_metadata.network_data_condition(fields)
        except ValueError as error:
            raise _UsageError(f"--require: {error}") from None
        return condition, f"network data ({', '.join(fields)}) on every device"
    if kind == "generation" and rest.isdigit():
        return _generation_condition(int(rest)), f"generation {rest} of every file"
    if kind == "attribute" and rest:
        name, has_value, value = rest.partition("=")
        wanted = f"attribute {name}" + (f"={value}" if has_value else "")
        condition = _attribute_condition(name, value if has_value else None)
        return condition, f"{wanted} on every device"
    raise _UsageError(
        f"--for {text!r}: use network-data, file, generation=N or attribute=NAME[=VALUE]"
    )


def _command_wait(arguments: argparse.Namespace, out: TextIO) -> int:
    condition, description = _condition(arguments)
    validate = arguments.validate

    def checked(metadata: DeviceMetadata) -> str | None:
        if validate:
            errors = tuple(dra_metadata.validate(metadata, profile=validate))
            if errors:
                raise MetadataValidationError(errors, metadata, path=None)
        return condition(metadata)

    started = time.monotonic()

    def progress(reason: str) -> None:
        if not arguments.quiet:
            elapsed = time.monotonic() - started
            sys.stderr.write(f"{_PROGRAM}: waiting for {description} ({elapsed:.0f}s): {reason}\n")
            sys.stderr.flush()

    metadata = dra_metadata.wait_until(
        checked,
        arguments.claim,
        arguments.request,
        template=arguments.template,
        driver=arguments.driver,
        root=arguments.root,
        timeout=arguments.timeout,
        poll_interval=arguments.poll_interval,
        progress=progress,
    )
    if _output(arguments, out) == "json":
        _print_json(metadata_json(metadata), out)
    else:
        generations = ", ".join(
            f"{s.driver or s.path} generation {s.generation}" for s in metadata.sources
        )
        out.write(f"ready: {description}: {len(metadata.devices)} device(s), {generations}\n")
    return EXIT_OK


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


def _command_validate(arguments: argparse.Namespace, out: TextIO) -> int:
    profile: dra_metadata.Profile = "strict" if arguments.strict else "metadata"
    reports = []
    for path in _metadata_files(arguments.paths):
        report: dict[str, Any] = {"path": str(path), "apiVersion": None, "skippedVersions": []}
        try:
            metadata = dra_metadata.read_metadata_file(path)
        except (
            MetadataDecodeError,
            MetadataNotFoundError,
            dra_metadata.MetadataReadError,
        ) as error:
            report.update(error=error.message, errors=[])
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
            )
        report["valid"] = report["error"] is None and not report["errors"]
        reports.append(report)
    if _output(arguments, out) == "json":
        _print_json(reports, out)
    else:
        for report in reports:
            if report["error"] is not None:
                out.write(f"{report['path']}: cannot be decoded: {report['error']}\n")
                continue
            skipped = (
                f", skipped {', '.join(report['skippedVersions'])}"
                if report["skippedVersions"]
                else ""
            )
            verdict = "valid" if report["valid"] else f"{len(report['errors'])} error(s)"
            out.write(f"{report['path']}: {report['apiVersion']}{skipped}: {verdict} ({profile})\n")
            out.writelines(f"  {finding['message']}\n" for finding in report["errors"])
    return EXIT_OK if all(report["valid"] for report in reports) else EXIT_NOT_READY


def _command_path(arguments: argparse.Namespace, out: TextIO) -> int:
    if arguments.driver is not None:
        build = (
            dra_metadata.resource_claim_template_file_path
            if arguments.template
            else dra_metadata.resource_claim_file_path
        )
        out.write(
            f"{build(arguments.driver, arguments.claim, arguments.request, root=arguments.root)}\n"
        )
    else:
        build_dir = (
            dra_metadata.resource_claim_template_request_dir
            if arguments.template
            else dra_metadata.resource_claim_request_dir
        )
        out.write(f"{build_dir(arguments.claim, arguments.request, root=arguments.root)}\n")
    return EXIT_OK


def _command_ls(arguments: argparse.Namespace, out: TextIO) -> int:
    root = Path(arguments.root) if arguments.root else dra_metadata.default_root()
    if not root.is_dir():
        raise MetadataNotFoundError(
            "the metadata root does not exist (no claim with device metadata is mounted)", path=root
        )
    entries = []
    for kind, subdirectory in (
        ("claim", dra_metadata.RESOURCE_CLAIMS_SUBDIR),
        ("template", dra_metadata.RESOURCE_CLAIM_TEMPLATES_SUBDIR),
    ):
        for claim_dir in sorted((root / subdirectory).glob("*")):
            for request_dir in sorted(claim_dir.glob("*")):
                for path in list_metadata_files(request_dir):
                    entry: dict[str, Any] = {
                        "kind": kind,
                        "claim": claim_dir.name,
                        "request": request_dir.name,
                        "driver": driver_of_file_name(path.name),
                        "path": str(path),
                    }
                    try:
                        metadata = dra_metadata.read_metadata_file(path)
                        entry.update(
                            generation=metadata.generation,
                            apiVersion=metadata.api_version,
                            error=None,
                        )
                    except DeviceMetadataError as problem:
                        entry.update(generation=None, apiVersion=None, error=problem.message)
                    entries.append(entry)
    if _output(arguments, out) == "json":
        _print_json(entries, out)
        return EXIT_OK
    rows = [["KIND", "CLAIM", "REQUEST", "DRIVER", "GENERATION", "API VERSION"]]
    rows += [
        [
            entry["kind"],
            entry["claim"],
            entry["request"],
            entry["driver"],
            "-" if entry["generation"] is None else str(entry["generation"]),
            entry["apiVersion"] or f"error: {entry['error']}",
        ]
        for entry in entries
    ]
    if len(rows) == 1:
        out.write(f"no metadata files under {root}\n")
    else:
        _table(rows, out)
    return EXIT_OK


_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


def _variable_name(attribute: str) -> str:
    name = _NOT_IDENTIFIER.sub("_", attribute.rsplit("/", 1)[-1]).upper()
    return f"_{name}" if name[:1].isdigit() else name


def _command_env(arguments: argparse.Namespace, out: TextIO) -> int:
    names: list[str] = arguments.attribute
    variables: list[str] = arguments.var or [_variable_name(name) for name in names]
    if len(variables) != len(names):
        raise _UsageError("give one --var per --attribute (or none)")
    for variable in variables:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
            raise _UsageError(f"--var {variable!r} is not a shell variable name")
    metadata = _read(arguments)
    lines = []
    for name, variable in zip(names, variables, strict=True):
        values = []
        for device in metadata.devices:
            source = next(
                (src.path for src in metadata.sources if src.driver == device.driver), None
            )
            where = f"device {device.driver} {device.pool}/{device.name}"
            attribute = device.get_attribute(name)
            if attribute is None:
                raise DeviceMetadataError(f"{where} has no attribute {name}", path=source)
            try:
                value = attribute.value
            except dra_metadata.AttributeValueError:  # several members: say where, as validate does
                errors = dra_metadata.validate(metadata)
                raise MetadataValidationError(errors, metadata, path=source) from None
            if value is None:
                raise DeviceMetadataError(f"{where}: attribute {name} has no value", path=source)
            values.append(_value_text(value))
        lines.append(f"export {variable}={shlex.quote(arguments.join.join(values))}\n")
    out.writelines(lines)
    return EXIT_OK


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "show": _command_show,
    "wait": _command_wait,
    "validate": _command_validate,
    "path": _command_path,
    "ls": _command_ls,
    "env": _command_env,
}


def _exit_code(error: BaseException) -> int:
    if isinstance(error, StaleMetadataError):
        return EXIT_STALE
    if isinstance(
        error, (MetadataDecodeError, MetadataValidationError, dra_metadata.MetadataConflictError)
    ):
        return EXIT_INVALID
    if isinstance(error, dra_metadata.InvalidNameError):
        return EXIT_USAGE
    return EXIT_NOT_READY


def _terminate(signum: int, frame: FrameType | None) -> NoReturn:  # noqa: ARG001
    raise SystemExit(EXIT_TERMINATED)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    out = sys.stdout
    try:
        return _COMMANDS[arguments.command](arguments, out)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except _UsageError as error:
        parser.error(str(error))  # exits with 2
    except (DeviceMetadataError, OSError) as error:
        if arguments.debug:
            raise
        message = (
            str(error)
            if isinstance(error, DeviceMetadataError)
            else f"{error.filename}: {error.strerror}"
        )
        if isinstance(error, WaitTimeoutError):
            message = f"timed out: {message}"
        sys.stderr.write(f"{_PROGRAM}: {message}\n")
        return _exit_code(error)
    except BrokenPipeError:  # e.g. piped into head
        return EXIT_OK


def run() -> NoReturn:
    """The console script."""
    sys.exit(main())
