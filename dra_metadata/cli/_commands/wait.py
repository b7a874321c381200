"""``dra-metadata wait``: block until a request's metadata is ready (for init containers)."""

from __future__ import annotations

import argparse

from dra_metadata._model._errors import shown_names
from dra_metadata.cli._arguments import Command, add_claim_arguments, add_max_size_argument
from dra_metadata.cli._exit import EXIT_OK
from dra_metadata.cli._output import Output, safe_text

# The waiting is imported when the arguments are added or the command runs: --help lists
# every subcommand by its summary alone.


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    from dra_metadata.cli._waiting import add_wait_arguments  # noqa: PLC0415

    add_claim_arguments(parser)
    add_wait_arguments(parser, default="default file")
    add_max_size_argument(parser)
    parser.add_argument(
        "-o",
        "--output",
        choices=["summary", "json"],
        default="summary",
        help="summary (one line, the default) or json (the document show -o json prints)",
    )


def _run(arguments: argparse.Namespace, out: Output) -> int:
    from dra_metadata.cli._waiting import chosen_wait, wait_source, wait_until_ready  # noqa: PLC0415

    wait = chosen_wait(arguments, wait_source(arguments))
    metadata = wait_until_ready(arguments, wait)  # a stale view: StaleMetadataError, exit 4
    if arguments.output == "json":
        out.write_json(metadata.to_document())
    else:
        if wait.source == "api":
            seen = (
                f"resourceclaim {metadata.namespace}/{metadata.name}, resourceVersion "
                f"{metadata.metadata.resource_version}"
            )
        else:
            seen = shown_names(
                [
                    f"{source.driver or source.path} generation {source.generation}"
                    for source in metadata.sources
                ]
            )
        summary = f"ready: {wait.description}: {len(metadata.devices)} device(s), {seen}"
        out.write(f"{safe_text(summary)}\n")
    return EXIT_OK


COMMAND = Command(
    name="wait",
    summary="wait until metadata is ready (for init containers)",
    description="Wait until the metadata of a claim's request is ready, printing every 5 s on "
    "stderr what it waits for and what it sees; then print a one-line summary (or the JSON "
    "document with -o json). --require implies --for network-data. With --source api it "
    "waits on the claim's status in the Kubernetes API (drivers that write no file, such as "
    "DraNet); without --for, until the claim is allocated.",
    examples=(
        "dra-metadata wait nic-claim nic --for network-data --timeout 2m",
        "dra-metadata wait --template nic vf --require interface-name,ips --timeout 2m",
        "dra-metadata wait gpus gpu --for attribute=uuid --timeout 30s",
        "dra-metadata wait gpus gpu --driver gpu.example.com --for generation=2",
        "dra-metadata wait rdma-nics nics --source api --for network-data --timeout 5m",
    ),
    add_arguments=_add_arguments,
    run=_run,
    exit_codes="exit codes: 0 ready, 1 timed out or not found, 2 usage, 3 undecodable or "
    "invalid, 4 stale view (restart the container), 5 the Kubernetes API refused or could not "
    "be reached, 6 a file or directory cannot be read (permission denied, I/O error), 7 the "
    "kube extra is not installed (--source api, or auto that chose the API)",
)
