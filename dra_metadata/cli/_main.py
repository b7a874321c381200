"""The command's entry point: the parser of every subcommand, and how a run ends.

Whatever happens, a run ends with one of the documented exit codes and one line on stderr
(validation findings: a line per file, then one per finding, as ``validate`` lists them); a
traceback only with ``--debug``.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence

from dra_metadata import DeviceMetadataError, InvalidNameError, MetadataValidationError
from dra_metadata._reading._missing import WORDING
from dra_metadata._reading._pinned import WARN_STALE
from dra_metadata.cli._arguments import (
    ROOT_HELP,
    ArgumentParser,
    VersionAction,
    add_global_arguments,
)
from dra_metadata.cli._commands import command_names, load_command
from dra_metadata.cli._exit import (
    EXIT_BROKEN_PIPE,
    EXIT_CODES_HELP,
    EXIT_INTERNAL_ERROR,
    EXIT_NOT_INSTALLED,
    EXIT_NOT_READY,
    EXIT_USAGE,
    PROGRAM,
    UsageError,
    complain,
    error_message,
    exit_code,
    report_findings,
)
from dra_metadata.cli._install import MissingExtraError, check_extra
from dra_metadata.cli._kube import root_refused
from dra_metadata.cli._output import Output, OutputError
from dra_metadata.cli._signals import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    INTERRUPTED,
    TERMINATED,
    Terminated,
    raised_as_exceptions,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NoReturn

_GLOBAL_OPTIONS_WITH_A_VALUE = frozenset({"--root"})
_WHAT_IT_READS = {"kube": "the Kubernetes API", "podresources": "the kubelet's PodResources API"}
"""What a subcommand that needs an extra reads, for the message that names the missing extra."""
EXEC_SEPARATOR = "--"
"""Everything after the first ``--`` that follows ``exec`` is its COMMAND, options included."""
_ARGUMENT_LABELS = {
    "claim_name": "CLAIM",
    "pod_claim_name": "CLAIM",
    "request_name": "REQUEST",
    "driver": "--driver",
    "namespace": "--namespace",
    "pod_name": "--pod",
    "name": "--pod",  # podresources.get_pod_resources(name, namespace)
    "container_name": "--container",
}


def build_parser(only: str | None = None, *, summaries_only: bool = False) -> ArgumentParser:
    """The argument parser of the command (also used to document it).

    With ``only``, the name of the subcommand a run names, the parser has that subcommand
    only: the others are never parsed, and their modules are not even imported (a word that
    names no subcommand is parsed by the ``summaries_only`` parser, whose error lists them
    all). With ``summaries_only``, every subcommand is listed with its summary but gets no
    arguments: what the command's own --help, --version and errors show, where no
    subcommand's parser is used.
    """
    parser = ArgumentParser(
        prog=PROGRAM,
        description="Read, wait for and check the DRA device metadata (KEP-5304) that drivers "
        "publish into this container.",
        epilog=f"{EXIT_CODES_HELP}\nexample: dra-metadata show my-claim gpu",
    )
    parser.add_argument("--version", action=VersionAction, help="print the version and exit")
    add_global_arguments(
        parser,
        default_root=None,
        default_debug=False,
        root_help=f"{ROOT_HELP}; of the subcommands that read metadata files (not of those "
        "that read the Kubernetes API)",
    )
    subcommands = parser.add_subparsers(
        dest="command",
        metavar="COMMAND",
        required=True,
        parser_class=_ListedSubcommand if summaries_only else ArgumentParser,
    )
    for name in command_names():
        if only is not None and name != only:
            continue  # never parsed in this run: neither its module nor a parser of its own
        command = load_command(name)
        if summaries_only:
            subcommands.add_parser(command.name, help=command.summary, add_help=False)
            continue
        heading = "examples:" if len(command.examples) > 1 else "example:"
        epilog = "\n".join([heading, *(f"  {example}" for example in command.examples)])
        if command.exit_codes:
            epilog += f"\n{command.exit_codes}"
        subparser = subcommands.add_parser(
            command.name, help=command.summary, description=command.description, epilog=epilog
        )
        command.add_arguments(subparser)
        add_global_arguments(
            subparser,
            default_root=argparse.SUPPRESS,
            default_debug=argparse.SUPPRESS,
            with_root=command.reads_files,
        )
        subparser.set_defaults(
            run=command.run, reads_files=command.reads_files, needs_extra=command.needs_extra
        )
        parser.subcommands[command.name] = subparser
    return parser


class _ListedSubcommand(ArgumentParser):
    """A subcommand as the command's --help, --version and errors list it: a name, and the
    summary that the subparsers action keeps. Such a run parses no subcommand (it names
    none, or a word that is none), so nothing of a parser is set up (start-up time)."""

    def __init__(self, **options: object) -> None:
        self.prog = str(options["prog"])

    def parse_known_args(self, *_: object, **__: object) -> NoReturn:
        raise AssertionError(f"{self.prog}: a listed subcommand is never parsed")


def _subcommand_position(argv: list[str]) -> int | None:
    """Where the subcommand's name is: the first word after the global options."""
    position = 0
    while position < len(argv) and argv[position].startswith("-"):
        if argv[position] in {"-h", "--help", "--version"}:
            return None  # the whole command's help or version: every subcommand is listed
        position += 2 if argv[position] in _GLOBAL_OPTIONS_WITH_A_VALUE else 1
    return position if position < len(argv) else None


def _asks_for_the_version(argv: list[str]) -> bool:
    """Whether --version comes before any -h/--help and subcommand (argparse acts on the first)."""
    position = 0
    while position < len(argv) and argv[position].startswith("-"):
        if argv[position] in {"-h", "--help", "--version"}:
            return argv[position] == "--version"
        position += 2 if argv[position] in _GLOBAL_OPTIONS_WITH_A_VALUE else 1
    return False


def split_exec_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``exec``'s COMMAND apart from the options: everything after its first ``--``."""
    position = _subcommand_position(argv)
    if position is None or argv[position] != "exec":
        return argv, None
    if EXEC_SEPARATOR not in argv[position + 1 :]:
        return argv, None
    separator = argv.index(EXEC_SEPARATOR, position + 1)
    return argv[:separator], argv[separator + 1 :]


def _refuse_unknown(
    parser: ArgumentParser,
    command: str,
    unknown: list[str],
    *,
    exec_command: list[str] | None,
    reads_files: bool,
) -> NoReturn:
    """Arguments no parser took: the subcommand's parser says so, pointing to its --help."""
    message = f"unrecognized arguments: {' '.join(unknown)}"
    if not reads_files and any(word.split("=", 1)[0] == "--root" for word in unknown):
        message = root_refused(command)
    elif command == "exec" and exec_command is None:
        message += (
            "; to run a command, put -- before it: dra-metadata exec CLAIM REQUEST [options] "
            f"-- {unknown[0]}{' ...' if len(unknown) > 1 else ''}"
        )
    parser.subcommand(command).error(message)


def _prepare_streams() -> None:
    """Text a stream cannot encode is escaped (\\xe9), never a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    """After a broken pipe: nothing more to write, not even at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code (the console script exits with it)."""
    given, command_line = split_exec_command(list(sys.argv[1:] if argv is None else argv))
    _prepare_streams()
    position = _subcommand_position(given)
    chosen = None if position is None else given[position]
    listing = chosen not in command_names()
    if listing:  # --help, --version or an error of the command itself: no subcommand parses
        # --version lists no subcommand ("" names none); --help lists them with their summary
        chosen = "" if _asks_for_the_version(given) else None
    parser = build_parser(chosen, summaries_only=listing)
    arguments, unknown = parser.parse_known_args(given)
    if unknown:
        _refuse_unknown(
            parser,
            arguments.command,
            unknown,
            exec_command=command_line,
            reads_files=getattr(arguments, "reads_files", True),
        )
    if command_line is not None:
        arguments.command_line = command_line
    wording, warnings = WORDING.set("command"), WARN_STALE.set(False)
    try:
        return _run(arguments)
    finally:
        WORDING.reset(wording)
        WARN_STALE.reset(warnings)


def _run(arguments: argparse.Namespace) -> int:
    out = Output(sys.stdout)
    try:
        extra = getattr(arguments, "needs_extra", None)
        if extra is not None:
            check_extra(extra, f"{arguments.command} reads {_WHAT_IT_READS[extra]}")
        with raised_as_exceptions():  # the subcommand's clean-up runs; see _signals
            code: int = arguments.run(arguments, out)
            out.flush()
    except KeyboardInterrupt:
        complain(INTERRUPTED)
        return EXIT_INTERRUPTED
    except Terminated:
        complain(TERMINATED)
        return EXIT_TERMINATED
    except Exception as error:
        quiet = isinstance(error, (UsageError, BrokenPipeError, MissingExtraError))
        if arguments.debug and not quiet:
            raise
        return _ending(error, arguments.command)
    return code


def _ending(error: Exception, command: str) -> int:
    """Say what went wrong (one line at most) and choose the exit code."""
    if isinstance(error, BrokenPipeError):  # the reader went away (| head -1): end quietly
        _silence_stdout()
        code = EXIT_BROKEN_PIPE
    elif isinstance(error, (UsageError, InvalidNameError)):
        if isinstance(error, InvalidNameError):  # in the command's words: CLAIM, not claim_name
            label = _ARGUMENT_LABELS.get(error.argument, error.argument)
            error = UsageError(f"{label} {error.value!r}: {error.reason}")
        program = f"{PROGRAM} {command}"
        complain(f"{error} (see {program} --help)", program=program)
        code = EXIT_USAGE
    elif isinstance(error, MissingExtraError):
        complain(str(error))
        code = EXIT_NOT_INSTALLED
    elif isinstance(error, OutputError):
        complain(str(error))
        code = EXIT_NOT_READY
    elif isinstance(error, MetadataValidationError):
        code = report_findings(error)
    elif isinstance(error, (DeviceMetadataError, OSError)):
        complain(error_message(error))
        code = exit_code(error)
    else:
        complain(
            f"internal error: {type(error).__name__}: {error} (--debug shows the traceback; "
            "please report it)"
        )
        code = EXIT_INTERNAL_ERROR
    return code
