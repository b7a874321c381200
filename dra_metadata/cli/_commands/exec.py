"""``dra-metadata exec``: wait if asked, set attribute variables, then become COMMAND.

The safe form of "wait, then start the app with the device's attributes": no shell, no eval,
and any failure ends here with a documented exit code before COMMAND runs.
"""

from __future__ import annotations

import argparse
import os
import sys

from dra_metadata.cli._arguments import (
    Command,
    add_claim_arguments,
    add_max_size_argument,
    read_claim,
)
from dra_metadata.cli._exit import (
    EXIT_COMMAND_NOT_FOUND,
    EXIT_NOT_EXECUTABLE,
    UsageError,
    complain,
    report_stale,
)
from dra_metadata.cli._output import Output
from dra_metadata.cli._signals import defaults_before_exec

# The variables and the waiting are imported when the arguments are added or the command
# runs: --help lists every subcommand by its summary alone.


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    from dra_metadata.cli._variables import add_variable_arguments  # noqa: PLC0415
    from dra_metadata.cli._waiting import add_wait_arguments  # noqa: PLC0415

    add_claim_arguments(parser)
    add_variable_arguments(parser, required=False)
    add_wait_arguments(parser, default="default: no wait (--timeout alone waits for file)")
    add_max_size_argument(parser)
    parser.set_defaults(command_line=None)
    parser.usage = "%(prog)s CLAIM REQUEST [options] -- COMMAND [ARG...]"


def _run(arguments: argparse.Namespace, out: Output) -> int:
    command: list[str] | None = arguments.command_line
    if not command:
        raise UsageError("exec needs -- COMMAND [ARG...] after its options")
    if not command[0]:
        raise UsageError("COMMAND after -- is empty: name the program to run")
    from dra_metadata.cli._variables import chosen_variables, variable_values  # noqa: PLC0415
    from dra_metadata.cli._waiting import check_exec_wait, wait_until_ready  # noqa: PLC0415

    chosen = chosen_variables(arguments)
    wait = check_exec_wait(arguments)
    if wait is not None:
        metadata = wait_until_ready(arguments, wait)
    else:
        metadata = read_claim(arguments, validate=arguments.validate)
    values = variable_values(metadata, chosen, arguments.join)
    stale = [source.path for source in metadata.sources if source.stale]
    if stale:
        return report_stale(stale)
    environment = {**os.environ, **values}
    if out.stream is not None:
        out.flush()
    if sys.stderr is not None:
        sys.stderr.flush()
    defaults_before_exec()
    try:
        os.execvpe(command[0], command, environment)  # noqa: S606 - the user's command, no shell
    except FileNotFoundError:
        complain(f"exec {command[0]}: command not found")
        return EXIT_COMMAND_NOT_FOUND
    except OSError as error:
        complain(f"exec {command[0]}: {error.strerror}")
        return EXIT_NOT_EXECUTABLE


COMMAND = Command(
    name="exec",
    summary="wait if asked, set attributes as variables, then run a command",
    description="Optionally wait as `wait` does (--for, or --timeout alone for the files), set "
    "the variables `env` would print, then replace this process with COMMAND (no shell). Any "
    "failure exits with its code before COMMAND runs. --require implies --for network-data; "
    "--source api waits on the Kubernetes API (which publishes no attributes).",
    examples=(
        (
            "dra-metadata exec --template nic vf --for network-data --timeout 2m "
            "--attribute resource.kubernetes.io/pciBusID=VF_PCI_ADDRESS -- /app/run"
        ),
        (
            "dra-metadata exec gpus gpu --driver gpu.example.com --attribute "
            "uuid=CUDA_VISIBLE_DEVICES -- python train.py --epochs 3"
        ),
        "dra-metadata exec rdma-nics nics --source api --for network-data --timeout 5m -- /app/run",
    ),
    add_arguments=_add_arguments,
    run=_run,
    exit_codes="exit codes (before COMMAND runs): 1 timed out or not found, 2 usage, "
    "3 undecodable or invalid, 4 stale view, 5 the Kubernetes API refused or could not be "
    "reached, 6 a file or directory cannot be read, 7 the kube extra is not installed (the "
    "API), 126 COMMAND cannot run, 127 COMMAND not "
    "found; afterwards COMMAND's own",
)
