"""``dra-metadata env``: attributes as shell ``export`` lines."""

from __future__ import annotations

import argparse

from dra_metadata.cli._arguments import (
    Command,
    add_claim_arguments,
    add_max_size_argument,
    read_claim,
)
from dra_metadata.cli._exit import EXIT_OK, report_stale
from dra_metadata.cli._output import Output

# The variables are imported when the arguments are added or the command runs: --help lists
# every subcommand by its summary alone.


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    from dra_metadata.cli._variables import add_variable_arguments  # noqa: PLC0415

    add_claim_arguments(parser)
    add_variable_arguments(parser, required=True)
    add_max_size_argument(parser)


def _run(arguments: argparse.Namespace, out: Output) -> int:
    import shlex  # noqa: PLC0415

    from dra_metadata.cli._variables import chosen_variables, variable_values  # noqa: PLC0415

    chosen = chosen_variables(arguments)
    metadata = read_claim(arguments)
    values = variable_values(metadata, chosen, arguments.join)
    stale = [source.path for source in metadata.sources if source.stale]
    if stale:  # values from a view that can no longer change: print none
        return report_stale(stale)
    lines = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in values.items())
    out.write_bytes(lines.encode("utf-8", "surrogateescape"))  # exactly, whatever the locale
    return EXIT_OK


COMMAND = Command(
    name="env",
    summary="print attributes as shell export lines",
    description="Print `export VAR=VALUE` lines for attributes of every device of a request "
    "(values of several devices joined), quoted so that eval is safe. On any failure nothing "
    "is printed and the exit code says why, so evaluate the output only on success:\n"
    '  vars=$(dra-metadata env ...) && eval "$vars"\n'
    '(`eval "$(dra-metadata env ...)"` runs on after a failure: `eval ""` succeeds). To start '
    "a program with the variables set, `dra-metadata exec` does it in one step.",
    examples=(
        'vars=$(dra-metadata env gpus gpu --attribute uuid=GPU_UUIDS) && eval "$vars"',
        "dra-metadata env --template nic vf --attribute resource.kubernetes.io/pciBusID=BUS",
    ),
    add_arguments=_add_arguments,
    run=_run,
)
