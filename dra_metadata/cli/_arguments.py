"""Arguments shared by the subcommands, and the shape of a subcommand.

Every argument is checked before anything is read: a wrong one is a usage error (exit 2) in
one line that names the option and says what it takes.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable

import dra_metadata
from dra_metadata.cli._exit import EXIT_USAGE, UsageError
from dra_metadata.cli._output import Output, safe_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, NoReturn


class Command:
    """One subcommand: its module in ``_commands`` defines it as ``COMMAND``.

    ``summary`` is its line in the list of commands; ``run`` returns the exit code and raises
    UsageError or the library's errors; ``exit_codes`` says what the exit codes mean for this
    command, when that says more than the general list; ``reads_files`` is False for a
    subcommand that reads only the Kubernetes API (it offers no ``--root``); ``needs_extra``
    names the extra of the install the subcommand cannot run without (checked before it runs).
    A plain class, not a dataclass: every start makes one, and a dataclass's generated methods
    cost more than the rest of it.
    """

    __slots__ = (
        "add_arguments",
        "description",
        "examples",
        "exit_codes",
        "name",
        "needs_extra",
        "reads_files",
        "run",
        "summary",
    )

    def __init__(
        self,
        name: str,
        summary: str,
        description: str,
        examples: tuple[str, ...],
        add_arguments: Callable[[argparse.ArgumentParser], None],
        run: Callable[[argparse.Namespace, Output], int],
        exit_codes: str = "",
        reads_files: bool = True,
        needs_extra: str | None = None,
    ) -> None:
        self.name = name
        self.summary = summary
        self.description = description
        self.examples = examples
        self.add_arguments = add_arguments
        self.run = run
        self.exit_codes = exit_codes
        self.reads_files = reads_files
        self.needs_extra = needs_extra


CODE_SPAN = r"`([^`\n]+)`"
"""Code in a help text is written `so`: the reference shows it as code, --help in quotes
(compiled on first use, by re: only a help text is formatted with it)."""


def terminal_text(text: str) -> str:
    """A help text as a terminal shows it: its `code` in single quotes."""
    return re.sub(CODE_SPAN, r"'\1'", text)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, found as it finds it, without importing shutil
    (with the compression modules it imports, more start-up than a whole parser)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (their indented examples stay so), option help
    wrapped, as wide as the terminal; code spans shown in quotes (terminal_text)."""

    def __init__(self, prog: str, **options: Any) -> None:
        if options.get("width") is None:  # what argparse computes, with shutil
            options["width"] = terminal_columns() - 2
        super().__init__(prog, **options)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return super()._fill_text(terminal_text(text), width, indent)

    def _split_lines(self, text: str, width: int) -> list[str]:
        return super()._split_lines(terminal_text(text), width)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors and no abbreviated options (``--temp`` is no option)."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("formatter_class", HelpFormatter)
        super().__init__(allow_abbrev=False, **options)
        self.subcommands: dict[str, argparse.ArgumentParser] = {}
        """The parser of each subcommand that was built (the command's parser only)."""

    def subcommand(self, name: str) -> argparse.ArgumentParser:
        """The parser of subcommand ``name`` if it was built, else this one."""
        return self.subcommands.get(name, self)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {safe_text(message)} (see {self.prog} --help)\n")

    def _parse_optional(self, arg_string: str) -> Any:
        """A word that starts with ``-`` and a digit (``-1s``, ``-.5``) is a value, never an
        option: no option is spelled so, and ``--timeout -1s`` then gets the message of the
        value (argparse takes only plain negative numbers for values)."""
        if _starts_as_a_number(arg_string):
            return None
        return super()._parse_optional(arg_string)


_DIGITS = frozenset("0123456789")


def _starts_as_a_number(word: str) -> bool:
    """``-`` then an ASCII digit, or ``-.`` then one."""
    rest = word[2:3] if word[1:2] == "." else word[1:2]
    return word[:1] == "-" and rest in _DIGITS


# Patterns compiled on first use (re caches them): most runs parse no duration and no size.
_DURATION = r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?"
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
MAX_POLL_INTERVAL = 24 * 3600.0


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``2m``, ``1h``, ``1m30s``, ``500ms`` -> seconds (ASCII digits only)."""
    if not text:
        raise argparse.ArgumentTypeError("empty duration (use e.g. 90s, 2m, 1h)")
    if text.startswith("-"):
        raise argparse.ArgumentTypeError(
            f"invalid duration {text!r}: a duration cannot be negative (use e.g. 90s, 2m, 1h)"
        )
    position, total, duration = 0, 0.0, re.compile(_DURATION)
    while position < len(text):
        match = duration.match(text, position)
        if match is None:
            raise argparse.ArgumentTypeError(
                f"invalid duration {text!r} (use e.g. 90s, 2m, 1h, 1m30s, 500ms)"
            )
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not math.isfinite(total):
        raise argparse.ArgumentTypeError(f"duration {text!r} is too large")
    return total


def parse_timeout(text: str) -> float:
    """A duration of more than 0 (the time-outs of the API subcommands)."""
    seconds = parse_duration(text)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the timeout must be more than 0")
    return seconds


def parse_poll_interval(text: str) -> float:
    """A duration of more than 0 and at most 24 hours."""
    seconds = parse_duration(text)
    if not 0 < seconds <= MAX_POLL_INTERVAL:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the poll interval must be more than 0 and at most 24h"
        )
    return seconds


_SIZE = r"([0-9]+)\s*([kmgt]?)(i?)(b?)"
_SIZE_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def parse_size(text: str) -> int:
    """``4194304``, ``10M``, ``16MiB``, ``500k``, ``1G`` -> bytes.

    As GNU tools read sizes: K, M, G (and KiB, MiB, GiB) are powers of 1024; KB, MB, GB are
    powers of 1000; a plain number is bytes.
    """
    match = re.fullmatch(_SIZE, text.strip(), re.ASCII | re.IGNORECASE)
    if match is None or (match.group(3) and not match.group(2)):
        raise argparse.ArgumentTypeError(
            f"invalid size {text!r} (a number of bytes, or with a unit: 10M, 16MiB, 500KB)"
        )
    number, unit, binary, byte = match.groups()
    power = _SIZE_POWERS[unit.lower()]
    base = 1000 if byte and not binary and unit else 1024
    size: int = int(number) * base**power
    if size == 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the size limit must be more than 0 bytes (every file has some)"
        )
    return size


def add_max_size_argument(parser: argparse.ArgumentParser) -> None:
    """--max-size SIZE: the largest metadata file read (default 4 MiB)."""
    parser.add_argument(
        "--max-size",
        type=parse_size,
        metavar="SIZE",
        default=dra_metadata.DEFAULT_MAX_SIZE,
        help="refuse files larger than SIZE: bytes, or with a unit, e.g. 10M, 16MiB "
        "(K/M/G and KiB/MiB/GiB are powers of 1024, KB/MB/GB of 1000; default 4MiB)",
    )


def add_claim_arguments(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """CLAIM REQUEST [--template] [--driver D]."""
    nargs = "?" if optional else None
    parser.add_argument(
        "claim", metavar="CLAIM", nargs=nargs, help="claim name (pod claim name with --template)"
    )
    parser.add_argument(
        "request",
        metavar="REQUEST",
        nargs=nargs,
        help="request name; request/subrequest for only that subrequest's devices",
    )
    parser.add_argument(
        "--template",
        action="store_true",
        help="CLAIM is a pod claim name (pod.spec.resourceClaims[].name) of a claim made from "
        "a ResourceClaimTemplate",
    )
    parser.add_argument("--driver", metavar="D", help="read only driver D's file")


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=["table", "json"],
        help="table (default on a terminal) or json (default otherwise)",
    )


def output_format(arguments: argparse.Namespace, out: Output) -> str:
    """The -o choice, else a table on a terminal and JSON otherwise."""
    chosen: str | None = arguments.output
    return chosen or ("table" if out.is_terminal() else "json")


ROOT_HELP = (
    "metadata root (default: $DRA_METADATA_ROOT, else /var/run/kubernetes.io/dra-device-attributes)"
)


def add_global_arguments(
    parser: argparse.ArgumentParser,
    *,
    default_root: object,
    default_debug: object,
    with_root: bool = True,
    root_help: str = ROOT_HELP,
) -> None:
    """--root and --debug, accepted before the command and after it (--root only where the
    subcommand reads files: ``with_root``).

    The commands' copies default to SUPPRESS, so that they set nothing unless given and a
    value given before the command stays.
    """
    if with_root:
        parser.add_argument("--root", metavar="DIR", default=default_root, help=root_help)
    parser.add_argument(
        "--debug", action="store_true", default=default_debug, help="show tracebacks"
    )


def read_claim(
    arguments: argparse.Namespace, *, validate: dra_metadata.Profile | None = None
) -> dra_metadata.DeviceMetadata:
    """The metadata that CLAIM REQUEST [--template] [--driver D] name."""
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
        validate=validate or False,
        max_size=arguments.max_size,
    )


def refuse(condition: object, message: str) -> None:
    """A usage error when ``condition`` holds."""
    if condition:
        raise UsageError(message)


class VersionAction(argparse.Action):
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
