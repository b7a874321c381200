"""Waiting as ``wait`` and ``exec`` do: --for, --require, --timeout, --poll-interval, -q,
--source and the options of the Kubernetes API.

An option only matters when it changes what is waited for: ``--require`` means
``--for network-data`` (and is refused with any other ``--for``); in ``exec``, ``--timeout``
alone means ``--for file``, and ``--poll-interval``, ``-q`` or ``--source`` without a wait are
refused. Options of one source are refused with the other (``--root`` or ``--validate`` with
``--source api``, ``--namespace`` with ``--source file``); ``--source auto`` decides before
anything else which source it is.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import dra_metadata
from dra_metadata import MetadataValidationError
from dra_metadata._model._errors import shown_names
from dra_metadata._model._frozen import frozen_model
from dra_metadata._model._notices import divert, end_diversion
from dra_metadata._reading._paths import request_dir
from dra_metadata.cli._arguments import parse_duration, parse_poll_interval
from dra_metadata.cli._exit import PROGRAM, UsageError, complain
from dra_metadata.cli._install import check_extra
from dra_metadata.cli._kube import (
    add_kube_arguments,
    kube_options_given,
    refuse_pod_without_template,
)
from dra_metadata.cli._output import attribute_text, safe_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, Literal

    from dra_metadata import Device, DeviceMetadata

    Source = Literal["file", "api"]

_INT64_MAX = 2**63 - 1
_CONDITIONS = "file, network-data, generation=N or attribute=NAME[=VALUE]"
_NETWORK_FIELDS = {
    "interface-name": "interface_name",
    "ips": "ips",
    "hardware-address": "hardware_address",
}
_NETWORK_FIELDS.update({field: field for field in _NETWORK_FIELDS.values()})  # Python's names


def add_wait_arguments(parser: argparse.ArgumentParser, *, default: str) -> None:
    parser.add_argument(
        "--for",
        dest="condition",
        metavar="CONDITION",
        help="file (the files exist and decode), network-data, generation=N (every file), or "
        f"attribute=NAME[=VALUE] (every device); {default}",
    )
    parser.add_argument(
        "--require",
        metavar="FIELDS",
        help="comma-separated interface-name, ips, hardware-address (default interface-name); "
        "implies --for network-data",
    )
    parser.add_argument(
        "--timeout",
        type=parse_duration,
        metavar="DURATION",
        help="give up after this long (e.g. 90s, 2m, 1h; default: wait for ever)",
    )
    parser.add_argument(
        "--poll-interval",
        type=parse_poll_interval,
        metavar="DURATION",
        help="re-read every DURATION whatever inotify says (default 1s)",
    )
    parser.add_argument("--validate", choices=["metadata", "strict"], help="invalid data exits 3")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument(
        "--source",
        choices=["file", "api", "auto"],
        help="where to look: file (the metadata files, the default), api (the claim's status "
        "through the Kubernetes API, for drivers that write no file), auto (file where the "
        "request directory exists, else api)",
    )
    add_kube_arguments(
        parser,
        pod_help="with --template and the API: the pod whose claim it is (default: $POD_NAME, "
        "else the host name)",
    )


@frozen_model
class Wait:
    """What to wait for, where, and a description of it for the progress and ready lines."""

    condition: dra_metadata.Condition
    description: str
    source: Source = "file"

    def __init__(
        self, condition: dra_metadata.Condition, description: str, source: Source = "file"
    ) -> None:
        object.__setattr__(self, "condition", condition)
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "source", source)


def network_fields(text: str) -> tuple[str, ...]:
    names = [name.strip() for name in text.split(",")]
    fields = tuple(_NETWORK_FIELDS.get(name) for name in names)
    unknown = [name for name, field in zip(names, fields, strict=True) if field is None]
    if unknown or not names:
        raise UsageError(
            f"--require {text!r}: use a comma-separated list of interface-name, ips, "
            "hardware-address"
        )
    return tuple(field for field in fields if field is not None)


def _asked_for(arguments: argparse.Namespace) -> str | None:
    """The --for text, with --require's implied network-data; None when neither is given."""
    text: str | None = arguments.condition
    if arguments.require is not None:
        if text not in {None, "network-data"}:
            raise UsageError(f"--require only goes with --for network-data, not --for {text}")
        text = "network-data"
    return text


def wait_source(arguments: argparse.Namespace) -> Source:
    """The source to wait on (--source, "auto" decided now); options of the other refused."""
    source = arguments.source or "file"
    api_options = kube_options_given(arguments)
    if source == "file" and api_options:
        raise UsageError(
            f"{' and '.join(api_options)} only "
            f"{'applies' if len(api_options) == 1 else 'apply'} to the Kubernetes API: add "
            "--source api (or auto)"
        )
    file_options = [
        option
        for option, given in (
            ("--root", arguments.root is not None),
            ("--poll-interval", arguments.poll_interval is not None),
            ("--validate", arguments.validate is not None),
        )
        if given
    ]
    if source == "api" and file_options:
        raise UsageError(
            f"{' and '.join(file_options)} only "
            f"{'applies' if len(file_options) == 1 else 'apply'} to metadata files, not to "
            "--source api"
        )
    refuse_pod_without_template(arguments)
    if source != "auto":
        if source == "api":
            check_extra("kube", f"{arguments.command} --source api reads the Kubernetes API")
        return "api" if source == "api" else "file"
    from dra_metadata._watch._sources import chosen_source  # noqa: PLC0415 - env, --help: no watching

    chosen = chosen_source(
        "auto",
        arguments.claim,
        arguments.request,
        template=arguments.template,
        root=arguments.root,
        file_options={},
        api_options={},
    )
    if chosen == "api" and arguments.validate is not None:
        raise UsageError(f"--validate checks metadata files: {_auto_chose_api(arguments)}")
    if chosen == "api":
        check_extra("kube", f"{arguments.command}: {_auto_chose_api(arguments)}")
    return chosen


def _auto_chose_api(arguments: argparse.Namespace) -> str:
    directory = request_dir(
        arguments.claim, arguments.request, template=arguments.template, root=arguments.root
    )
    return f"--source auto chose the Kubernetes API ({directory} does not exist)"


def refuse_attributes_from_the_api(arguments: argparse.Namespace, source: Source) -> None:
    """exec --attribute: the API publishes no device attributes."""
    if source == "api" and arguments.attribute:
        why = _auto_chose_api(arguments) if arguments.source == "auto" else "--source api"
        raise UsageError(
            f"--attribute: the Kubernetes API publishes no device attributes ({why}); they "
            "come from the metadata files"
        )


def chosen_wait(arguments: argparse.Namespace, source: Source, *, default: str = "file") -> Wait:
    """The wait that --for and --require ask for, else ``default`` (with the API: the
    claim's allocation)."""
    text = _asked_for(arguments)
    if text is None and source == "api":
        return Wait(lambda _: None, "an allocated claim", "api")
    return _parse_wait(arguments, default if text is None else text, source)


def _parse_wait(arguments: argparse.Namespace, text: str, source: Source) -> Wait:
    kind, _, rest = text.partition("=")
    if source == "api" and (text == "file" or kind in {"generation", "attribute"}):
        what = {"file": "metadata files", "generation": "generations", "attribute": "attributes"}
        why = _auto_chose_api(arguments) if arguments.source == "auto" else "--source api"
        raise UsageError(
            f"--for {text}: the Kubernetes API publishes no {what[kind]} of device metadata "
            f"({why}); wait for network-data, or leave out --for to wait for the allocation"
        )
    if text == "file":
        return Wait(lambda _: None, "the metadata files")
    if text == "network-data":
        fields = network_fields(arguments.require or "interface-name")
        description = f"network data ({', '.join(fields)}) on every device"
        if source == "api":
            from dra_metadata.kube._wait import network_data_condition  # noqa: PLC0415

            return Wait(network_data_condition(fields), description, "api")
        return Wait(dra_metadata.network_data_condition(fields), description)
    if kind == "generation":
        if not re.fullmatch("[0-9]{1,19}", rest) or int(rest) > _INT64_MAX:
            raise UsageError(f"--for {text!r}: N must be a whole number (0 to 2^63-1)")
        return Wait(_generation_condition(int(rest)), f"generation {int(rest)} of every file")
    if kind == "attribute":
        name, has_value, value = rest.partition("=")
        if not name:
            raise UsageError(f"--for {text!r}: give an attribute name, attribute=NAME[=VALUE]")
        wanted = f"attribute {name}" + (f"={value}" if has_value else "")
        condition = _attribute_condition(name, value if has_value else None)
        return Wait(condition, f"{wanted} on every device")
    raise UsageError(f"--for {text!r}: use {_CONDITIONS}")


def _generation_condition(wanted: int) -> dra_metadata.Condition:
    def condition(metadata: DeviceMetadata) -> str | None:
        behind = [s for s in metadata.sources if s.generation < wanted]
        if behind:
            seen = shown_names([f"{s.driver or s.path} generation {s.generation}" for s in behind])
            return f"{seen} (waiting for {wanted})"
        return None

    return condition


def file_of(metadata: DeviceMetadata, driver: str) -> Path | None:
    """The file a driver's devices come from."""
    return next((source.path for source in metadata.sources if source.driver == driver), None)


def attributes_of(
    metadata: DeviceMetadata, name: str
) -> list[tuple[Device, dra_metadata.DeviceAttribute | None]]:
    """Each device with its attribute ``name``; a "did you mean" error names the file."""
    found: list[tuple[Device, dra_metadata.DeviceAttribute | None]] = []
    driver = ""
    try:
        for device in metadata.devices:
            driver = device.driver
            found.append((device, device.get_attribute(name)))
    except dra_metadata.AttributeNotFoundError as error:
        error.path = file_of(metadata, driver)
        raise
    return found


def missing_attribute(name: str, devices: Sequence[Device], missing: Sequence[Device]) -> str:
    """Why ``missing`` devices fail a lookup of ``name``, and what to do about it."""
    having = [device for device in devices if device not in missing]
    if not having:
        present = sorted({key for device in devices for key in device.attributes})
        listed = f"; the devices' attributes: {shown_names(present)}" if present else ""
        return f"no device has attribute {name}{listed}"
    drivers_having = list(dict.fromkeys(device.driver for device in having))
    drivers_missing = list(dict.fromkeys(device.driver for device in missing))
    names = shown_names([device.name for device in missing])
    if set(drivers_having).isdisjoint(drivers_missing):
        return (
            f"only the devices of {' and '.join(drivers_having)} have attribute {name}, not "
            f"{names} of {' and '.join(drivers_missing)}: add --driver {drivers_having[0]}"
        )
    return f"device {names} has no attribute {name} ({len(having)} of {len(devices)} have it)"


def _attribute_condition(name: str, value: str | None) -> dra_metadata.Condition:
    def condition(metadata: DeviceMetadata) -> str | None:
        devices = metadata.devices
        if not devices:
            return "no devices"
        found = attributes_of(metadata, name)
        missing = [device for device, attribute in found if attribute is None]
        if missing:
            return missing_attribute(name, devices, missing)
        if value is not None:
            for device, attribute in found:
                text = attribute_text(attribute)  # type: ignore[arg-type]
                if text != value:
                    return f"device {device.name} has {name}={text}"
        return None

    return condition


def check_exec_wait(arguments: argparse.Namespace) -> Wait | None:
    """exec's wait: --timeout alone waits for the files (or the allocation, with the API);
    waiting options need a wait."""
    text = _asked_for(arguments)
    if text is not None or arguments.timeout is not None:
        source = wait_source(arguments)
        refuse_attributes_from_the_api(arguments, source)
        return chosen_wait(arguments, source)
    for given, option in (
        (arguments.poll_interval is not None, "--poll-interval"),
        (arguments.quiet, "-q/--quiet"),
        (arguments.source is not None, "--source"),
        *((True, option) for option in kube_options_given(arguments)),
    ):
        if given:
            raise UsageError(f"{option} only applies to a wait: add --for or --timeout")
    return None


def wait_until_ready(arguments: argparse.Namespace, wait: Wait) -> DeviceMetadata:
    """Wait as the arguments say; progress on stderr every 5 s unless -q."""
    validate: dra_metadata.Profile | None = arguments.validate

    def checked(metadata: DeviceMetadata) -> str | bool | None:
        if validate:
            from dra_metadata._validation._validate import iter_source_errors  # noqa: PLC0415 - when asked

            errors = tuple(iter_source_errors(metadata, validate))
            if errors:
                raise MetadataValidationError(errors, metadata, path=None)
        return wait.condition(metadata)

    started = time.monotonic()

    def progress(reason: str) -> None:
        if not arguments.quiet:
            elapsed = time.monotonic() - started
            line = f"waiting for {wait.description} ({elapsed:.0f}s): {reason}"
            sys.stderr.write(f"{PROGRAM}: {safe_text(line)}\n")
            sys.stderr.flush()

    options: dict[str, Any] = (
        {
            "root": arguments.root,
            "poll_interval": arguments.poll_interval,
            "max_size": arguments.max_size,
        }
        if wait.source == "file"
        else {"pod_name": arguments.pod, "namespace": arguments.namespace}
    )
    # The wait's own reason says what is mounted when nothing is there (in the command's
    # words: --template); what it logs (a claim mounted as the other kind, polling) is a line
    # of ours on stderr, whatever -q says: it is no progress line.
    with _warnings_on_stderr():
        return dra_metadata.wait_until(
            checked,
            arguments.claim,
            arguments.request,
            template=arguments.template,
            driver=arguments.driver,
            timeout=arguments.timeout,
            progress=progress,
            source=wait.source,
            **options,
        )


@contextmanager
def _warnings_on_stderr() -> Iterator[None]:
    """The library's warnings (those of the dra_metadata logger) as the command's own lines,
    while it waits; logging is not loaded for them."""

    def show(message: str) -> None:
        with suppress(Exception):  # as with a logging handler's error: a warning ends no wait
            complain(message)

    divert(show)
    try:
        yield
    finally:
        end_diversion(show)
