"""What the subcommands that use the Kubernetes API share: --namespace, --pod, --timeout, no
--root (their Command says ``reads_files=False``).

The API part of the library (lightkube) is imported only by the subcommands that use it, and
only when they run.
"""

from __future__ import annotations

import argparse

from dra_metadata.cli._arguments import parse_timeout
from dra_metadata.cli._exit import UsageError

READ_TIMEOUT_SECONDS = 10.0
"""dra_metadata.kube's default deadline of a read (REQUEST_TIMEOUT_SECONDS; a test checks that
they agree): not imported from there, which would load the API part for every subcommand."""


def add_kube_arguments(parser: argparse.ArgumentParser, *, pod_help: str) -> None:
    """--namespace NS and --pod P."""
    parser.add_argument(
        "--namespace",
        metavar="NS",
        help="the pod's namespace (default: $POD_NAMESPACE, else the ServiceAccount's, else "
        "the kubeconfig context's)",
    )
    parser.add_argument("--pod", metavar="P", help=pod_help)


def add_read_timeout_argument(parser: argparse.ArgumentParser) -> None:
    """--timeout T: the deadline of the whole read (connection, credentials, the answer)."""
    parser.add_argument(
        "--timeout",
        metavar="T",
        type=parse_timeout,
        default=READ_TIMEOUT_SECONDS,
        help="give up when the API server has not answered in full after T, connecting and "
        f"credentials included (5s, 1m; default {READ_TIMEOUT_SECONDS:g}s)",
    )


def kube_options_given(arguments: argparse.Namespace) -> list[str]:
    """The API options given on the command line, by name."""
    given = [("--namespace", arguments.namespace), ("--pod", arguments.pod)]
    return [option for option, value in given if value is not None]


def refuse_pod_without_template(arguments: argparse.Namespace) -> None:
    if arguments.pod is not None and not arguments.template:
        raise UsageError(
            "--pod names the pod whose claim --template names (its generated claim's name is "
            "read from that pod): add --template, or leave out --pod"
        )


def root_refused(command: str) -> str:
    """Why --root is refused: a subcommand that reads only an API (the Kubernetes API, the
    kubelet's) has no use of it (it offers none; given before the subcommand, it is refused
    too)."""
    source = "the Kubernetes API"
    if command == "pod-resources":
        source = "the kubelet's PodResources API"
    return f"--root is the root of metadata files; {command} reads {source}"


def refuse_root(arguments: argparse.Namespace) -> None:
    """``dra-metadata --root R status``: --root does nothing for a subcommand that reads only
    the Kubernetes API."""
    if arguments.root is not None:
        raise UsageError(root_refused(arguments.command))
