"""Environment variables from attributes, as ``env`` prints them and ``exec`` sets them."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import dra_metadata
from dra_metadata import DeviceMetadataError, MetadataValidationError
from dra_metadata.cli._exit import UsageError
from dra_metadata.cli._output import value_text
from dra_metadata.cli._waiting import attributes_of, file_of, missing_attribute

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from dra_metadata import DeviceMetadata

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]", re.ASCII)


def add_variable_arguments(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--attribute",
        action="append",
        required=required,
        metavar="NAME[=VAR]",
        help="an attribute to set as variable VAR (default: its name upper-cased, "
        "resource.kubernetes.io/pciBusID -> PCIBUSID); repeatable",
    )
    parser.add_argument(
        "--join",
        metavar="SEP",
        help="separator of the values of several devices (default ',')",
    )


def default_variable(attribute: str) -> str:
    name = _NOT_IDENTIFIER.sub("_", attribute.rsplit("/", 1)[-1]).upper()
    return f"_{name}" if name[:1].isdigit() else name


def chosen_variables(arguments: argparse.Namespace) -> list[tuple[str, str]]:
    """(attribute, variable) of each --attribute NAME[=VAR]; usage errors found before reading."""
    given: list[str] = arguments.attribute or []
    if arguments.join is not None and not given:
        raise UsageError("--join only applies to --attribute values")
    chosen: dict[str, str] = {}
    for text in given:
        name, has_variable, variable = text.rpartition("=")
        if not has_variable:
            name, variable = text, default_variable(text)
        if not name:
            raise UsageError(f"--attribute {text!r}: give an attribute name, NAME[=VAR]")
        if not _VARIABLE.fullmatch(variable):
            raise UsageError(
                f"--attribute {text!r}: {variable!r} is not a shell variable name "
                "(ASCII letters, digits and _, not first a digit); name one with NAME=VAR"
            )
        if variable == "_":
            raise UsageError(
                f"--attribute {text!r}: '_' is not a shell variable name to set (the shell "
                "overwrites it after every command); name one with NAME=VAR"
            )
        if variable in chosen:
            raise UsageError(
                f"--attribute {chosen[variable]} and {name} would both set {variable}: "
                "name one with NAME=VAR"
            )
        chosen[variable] = name
    return [(name, variable) for variable, name in chosen.items()]


def variable_values(
    metadata: DeviceMetadata, chosen: list[tuple[str, str]], join: str | None
) -> dict[str, str]:
    """The value of each variable: the attribute of every device, joined (``,``)."""
    separator = "," if join is None else join
    devices = metadata.devices
    values: dict[str, str] = {}
    for name, variable in chosen:
        if not devices:
            raise DeviceMetadataError(
                f"no devices, so no attribute {name}", path=_request_path(metadata)
            )
        found = attributes_of(metadata, name)
        missing = [device for device, attribute in found if attribute is None]
        if missing:
            path = file_of(metadata, missing[0].driver)
            raise DeviceMetadataError(missing_attribute(name, devices, missing), path=path)
        texts = []
        for device, attribute in found:
            try:
                value = attribute.value  # type: ignore[union-attr]
            except dra_metadata.AttributeValueError:  # several members: say where, as validate
                from dra_metadata._validation._validate import iter_source_errors  # noqa: PLC0415

                errors = tuple(iter_source_errors(metadata, "metadata"))
                raise MetadataValidationError(errors, metadata, path=None) from None
            if value is None:
                raise DeviceMetadataError(
                    f"device {device.name}: attribute {name} has no value",
                    path=file_of(metadata, device.driver),
                )
            text = value_text(value)
            if "\0" in text:
                raise UsageError(
                    f"--attribute {name}: the value of device {device.name} "
                    f"({file_of(metadata, device.driver)}) holds a NUL character, which no "
                    "environment variable can hold; read it with show -o json instead"
                )
            texts.append(text)
        values[variable] = separator.join(texts)
        if "\0" in values[variable]:
            raise UsageError("--join: the separator must not hold a NUL character")
    return values


def _request_path(metadata: DeviceMetadata) -> Path | None:
    first = metadata.sources[0].path if metadata.sources else None
    return None if first is None else first.parent
