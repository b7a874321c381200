"""``dra-metadata path``: where a claim's metadata is (or would be)."""

from __future__ import annotations

import argparse
import os

import dra_metadata
from dra_metadata._reading._paths import request_dir
from dra_metadata.cli._arguments import Command, add_claim_arguments
from dra_metadata.cli._exit import EXIT_OK
from dra_metadata.cli._output import Output


def _run(arguments: argparse.Namespace, out: Output) -> int:
    path = request_dir(
        arguments.claim, arguments.request, template=arguments.template, root=arguments.root
    )
    if arguments.driver is not None:
        path /= dra_metadata.metadata_file_name(arguments.driver)
    out.write_bytes(os.fsencode(path) + b"\n")  # exactly, for $(...): no escaping
    return EXIT_OK


COMMAND = Command(
    name="path",
    summary="print where a claim's metadata is",
    description="Print the request directory, or with --driver the driver's file, whether or "
    "not it exists. The path is printed as it is, for scripts.",
    examples=("dra-metadata path my-claim gpu --driver gpu.example.com",),
    add_arguments=add_claim_arguments,
    run=_run,
)
