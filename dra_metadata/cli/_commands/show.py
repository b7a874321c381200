"""``dra-metadata show``: the devices, attributes and network data of one request."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import dra_metadata
from dra_metadata.cli._arguments import (
    Command,
    add_claim_arguments,
    add_max_size_argument,
    add_output_argument,
    output_format,
    read_claim,
    refuse,
)
from dra_metadata.cli._exit import EXIT_OK, report_stale
from dra_metadata.cli._output import Output, attribute_text, safe_text, table

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from dra_metadata import DeviceMetadata

KEY_ATTRIBUTES = ("uuid", "pciBusID", "productName", "model", "index", "numaNode")
"""Attributes the table shows first, under whatever domain the file has them."""


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    add_claim_arguments(parser, optional=True)
    parser.add_argument("--file", metavar="PATH", type=Path, help="show one metadata file")
    parser.add_argument(
        "-A",
        "--all-attributes",
        action="store_true",
        help="list every attribute of every device (a table: implies -o table)",
    )
    parser.add_argument(
        "--validate", choices=["metadata", "strict"], help="also validate; invalid data exits 3"
    )
    add_output_argument(parser)
    add_max_size_argument(parser)


def _run(arguments: argparse.Namespace, out: Output) -> int:
    if arguments.file is not None:
        for given, option in (
            (arguments.claim is not None, "CLAIM REQUEST"),
            (arguments.template, "--template"),
            (arguments.driver is not None, "--driver"),
            (arguments.root is not None, "--root"),
        ):
            refuse(given, f"--file PATH names the file: {option} cannot go with it")
    else:
        refuse(arguments.request is None, "show needs CLAIM and REQUEST (or --file PATH)")
    refuse(
        arguments.all_attributes and arguments.output == "json",
        "-A/--all-attributes only applies to the table: JSON always has every attribute",
    )
    if arguments.all_attributes:
        arguments.output = "table"
    if arguments.file is not None:
        metadata = dra_metadata.read_metadata_file(
            arguments.file, validate=arguments.validate or False, max_size=arguments.max_size
        )
    else:
        metadata = read_claim(arguments, validate=arguments.validate)
    if output_format(arguments, out) == "json":
        out.write_json(metadata.to_document())
    else:
        _show_table(metadata, out, all_attributes=arguments.all_attributes)
    stale = [source.path for source in metadata.sources if source.stale]
    out.flush()
    return report_stale(stale) if stale else EXIT_OK


def key_attributes(device: dra_metadata.Device) -> list[str]:
    """The KEY_ATTRIBUTES a device has, as the file names them: own domain first."""
    chosen: dict[str, str] = {}
    for key in device.attributes:
        domain, _, identifier = key.rpartition("/")
        if identifier in KEY_ATTRIBUTES and (
            identifier not in chosen or domain in {"", device.driver}
        ):
            chosen[identifier] = key
    return [chosen[name] for name in KEY_ATTRIBUTES if name in chosen]


ATTRIBUTES_WIDTH = 96
"""Room in the ATTRIBUTES column: the key attributes always, then others while they fit."""


def shown_value(attribute: dra_metadata.DeviceAttribute) -> str:
    """An attribute's value as a table shows it: quoted shell-style when it holds spaces,
    quotes, backslashes or control characters (``productName='Example H200 141GB'``)."""
    text = attribute_text(attribute)
    try:
        value = attribute.value
    except dra_metadata.AttributeValueError:
        return text  # "(int, string)": no value to quote
    if value is None:
        return text  # "(unset)"
    if text and not re.search(_NEEDS_QUOTES, text):
        return text
    import shlex  # noqa: PLC0415 - only for -o env with a value that needs quoting

    return shlex.quote(text)


_NEEDS_QUOTES = r"[\s'\"\\\x00-\x1f\x7f-\x9f$`]"
"""Compiled on first use (re caches it): a table only, and only with attributes to show."""


def attribute_cell(device: dra_metadata.Device) -> list[str]:
    """``name=value`` of the key attributes, then of the others (sorted) while they fit in
    ATTRIBUTES_WIDTH, then ``+N more`` for what did not."""
    keys = key_attributes(device)
    shown = [f"{key}={shown_value(device.attributes[key])}" for key in keys]
    others = sorted(key for key in device.attributes if key not in keys)
    width = sum(len(item) + 1 for item in shown)
    for position, key in enumerate(others):
        item = f"{key}={shown_value(device.attributes[key])}"
        left = len(others) - position - 1
        reserve = len(f" +{left} more") if left else 0
        if width + len(item) + reserve > ATTRIBUTES_WIDTH:
            shown.append(f"+{len(others) - position} more")
            break
        shown.append(item)
        width += len(item) + 1
    return shown


def _show_table(metadata: DeviceMetadata, out: Output, *, all_attributes: bool) -> None:
    who = f"{metadata.namespace}/{metadata.name}" if metadata.namespace else metadata.name
    claim = f"claim {who or '(unnamed)'}"
    if metadata.pod_claim_name is not None:
        claim += f" (pod claim {metadata.pod_claim_name})"
    out.write(f"{safe_text(claim)}\n\n")
    rows = [["FILE", "DRIVER", "API VERSION", "GENERATION"]]
    rows += [
        [
            str(source.path),
            source.driver or "-",
            source.api_version,
            f"{source.generation} (STALE: restart the container)"
            if source.stale
            else str(source.generation),
        ]
        for source in metadata.sources
    ]
    table(rows, out)
    out.write("\n")
    rows = [["REQUEST", "DRIVER", "POOL", "DEVICE", "ATTRIBUTES", "NETWORK"]]
    details: list[list[list[str]]] = []
    for request in metadata.requests:
        for device in request.devices:
            shown = attribute_cell(device)
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
                title = [[f"{device.driver} {device.pool}/{device.name}"]]
                lines = [
                    [f"  {key} = {shown_value(device.attributes[key])}"]
                    for key in sorted(device.attributes)
                ]
                details.append(title + lines)
    table(rows, out)
    for block in details:
        out.write("\n")
        table(block, out)


COMMAND = Command(
    name="show",
    summary="show the devices of a claim's request",
    description="Show the devices, attributes and network data of one request of a claim, "
    "or of one metadata file. A stale view (the driver replaced a file on the host) is "
    "marked, and the command then exits 4.",
    examples=(
        "dra-metadata show my-claim gpu",
        "dra-metadata show --template my-gpu gpu/high-memory -o json",
        "dra-metadata show --file /var/run/.../gpu.example.com-metadata.json -A",
    ),
    add_arguments=_add_arguments,
    run=_run,
)
