"""Every option a subcommand offers in its --help is taken: walking the parser, each option of
each subcommand is run once, in a command line where it applies, and must not be refused (a
usage error, exit 2); the exit code is the one that option's run earns (``--debug`` with an
error: the traceback, exit 1). A new option without a
run here fails the test that compares the parser with this table.

The API subcommands run against a kubeconfig whose server refuses connections (exit 5: the
option was taken and the API was asked); ``--root`` is not among their options.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from dra_metadata.cli import build_parser

from helpers import SAMPLE
from helpers import run_command as run

ROOT = str(SAMPLE)
FILE = str(SAMPLE / "resourceclaims" / "training-gpus" / "gpu" / "gpu.example.com-metadata.json")
CLAIM = ["training-gpus", "gpu"]
TEMPLATE = ["--template", "accelerator", "gpu"]
NETWORK = ["fast-net", "vf"]
API = ["--source", "api", "--timeout", "2s"]
INDEX = ["--attribute", "index", "--driver", "gpu.example.com"]

SUBCOMMANDS = (
    *("show", "wait", "exec", "env", "validate", "ls", "path"),
    *("status", "health", "pools", "pod-resources"),
)
NO_KUBELET = ["--socket", "/nonexistent/kubelet.sock"]
RUNS: dict[tuple[str, str], tuple[list[str], int]] = {
    # (subcommand, option): the command line after "dra-metadata", and its exit code
    **{(name, "--help"): ([name, "--help"], 0) for name in SUBCOMMANDS},
    ("show", "CLAIM"): (["show", *CLAIM, "--root", ROOT], 0),
    ("show", "REQUEST"): (["show", "training-gpus", "gpu/missing", "--root", ROOT], 1),
    ("show", "--template"): (["show", *TEMPLATE, "--root", ROOT], 0),
    ("show", "--driver"): (["show", *CLAIM, "--driver", "rdma.example.com", "--root", ROOT], 0),
    ("show", "--file"): (["show", "--file", FILE], 0),
    ("show", "--all-attributes"): (["show", *CLAIM, "--all-attributes", "--root", ROOT], 0),
    ("show", "--validate"): (["show", *CLAIM, "--validate", "strict", "--root", ROOT], 0),
    ("show", "--output"): (["show", *CLAIM, "--output", "table", "--root", ROOT], 0),
    ("show", "--max-size"): (["show", *CLAIM, "--max-size", "1k", "--root", ROOT], 3),
    ("show", "--root"): (["show", *CLAIM, "--root", ROOT], 0),
    ("show", "--debug"): (["show", *CLAIM, "--debug", "--root", ROOT], 0),
    ("wait", "CLAIM"): (["wait", *CLAIM, "--root", ROOT], 0),
    ("wait", "REQUEST"): (["wait", "training-gpus", "gpu/high", "--root", ROOT], 1),
    ("wait", "--template"): (["wait", *TEMPLATE, "--root", ROOT], 0),
    ("wait", "--driver"): (["wait", *CLAIM, "--driver", "gpu.example.com", "--root", ROOT], 0),
    ("wait", "--for"): (["wait", *CLAIM, "--for", "generation=1", "--root", ROOT], 0),
    ("wait", "--require"): (["wait", *NETWORK, "--require", "ips", "--root", ROOT], 0),
    ("wait", "--timeout"): (["wait", "none", "r", "--timeout", "100ms", "--root", ROOT], 1),
    ("wait", "--poll-interval"): (["wait", *CLAIM, "--poll-interval", "1s", "--root", ROOT], 0),
    ("wait", "--validate"): (["wait", *CLAIM, "--validate", "metadata", "--root", ROOT], 0),
    ("wait", "--quiet"): (["wait", *CLAIM, "--quiet", "--root", ROOT], 0),
    ("wait", "--source"): (["wait", *CLAIM, "--source", "auto", "--root", ROOT], 0),
    ("wait", "--namespace"): (["wait", *CLAIM, *API, "--namespace", "ns"], 5),
    ("wait", "--pod"): (["wait", *TEMPLATE, *API, "--pod", "p"], 5),
    ("wait", "--max-size"): (["wait", *CLAIM, "--max-size", "16MiB", "--root", ROOT], 0),
    ("wait", "--output"): (["wait", *CLAIM, "--output", "json", "--root", ROOT], 0),
    ("wait", "--root"): (["wait", *CLAIM, "--root", ROOT], 0),
    ("wait", "--debug"): (["wait", *CLAIM, "--debug", "--root", ROOT], 0),
    ("exec", "CLAIM"): (["exec", *CLAIM, "--root", ROOT, "--", "true"], 0),
    ("exec", "REQUEST"): (["exec", "training-gpus", "gpu/x", "--root", ROOT, "--", "true"], 1),
    ("exec", "--template"): (["exec", *TEMPLATE, "--root", ROOT, "--", "true"], 0),
    ("exec", "--driver"): (
        ["exec", *CLAIM, "--driver", "gpu.example.com", "--root", ROOT, "--", "true"],
        0,
    ),
    ("exec", "--attribute"): (
        ["exec", *CLAIM, *INDEX, "--root", ROOT, "--", "sh", "-c", "exit $index"],
        0,
    ),
    ("exec", "--join"): (
        ["exec", *CLAIM, *INDEX, "--join", ";", "--root", ROOT, "--", "true"],
        0,
    ),
    ("exec", "--for"): (["exec", *CLAIM, "--for", "file", "--root", ROOT, "--", "true"], 0),
    ("exec", "--require"): (
        ["exec", *NETWORK, "--require", "ips", "--root", ROOT, "--", "true"],
        0,
    ),
    ("exec", "--timeout"): (["exec", *CLAIM, "--timeout", "1s", "--root", ROOT, "--", "true"], 0),
    ("exec", "--poll-interval"): (
        ["exec", *CLAIM, "--for", "file", "--poll-interval", "1s", "--root", ROOT, "--", "true"],
        0,
    ),
    ("exec", "--validate"): (
        ["exec", *CLAIM, "--for", "file", "--validate", "metadata", "--root", ROOT, "--", "true"],
        0,
    ),
    ("exec", "--quiet"): (
        ["exec", *CLAIM, "--for", "file", "--quiet", "--root", ROOT, "--", "true"],
        0,
    ),
    ("exec", "--source"): (
        ["exec", *CLAIM, "--source", "file", "--for", "file", "--root", ROOT, "--", "true"],
        0,
    ),
    ("exec", "--namespace"): (["exec", *CLAIM, *API, "--namespace", "ns", "--", "true"], 5),
    ("exec", "--pod"): (["exec", *TEMPLATE, *API, "--pod", "p", "--", "true"], 5),
    ("exec", "--max-size"): (["exec", *CLAIM, "--max-size", "1", "--root", ROOT, "--", "true"], 3),
    ("exec", "--root"): (["exec", *CLAIM, "--root", ROOT, "--", "true"], 0),
    ("exec", "--debug"): (["exec", *CLAIM, "--debug", "--root", ROOT, "--", "true"], 0),
    ("env", "CLAIM"): (["env", *CLAIM, *INDEX, "--root", ROOT], 0),
    ("env", "REQUEST"): (["env", "training-gpus", "gpu/high", *INDEX, "--root", ROOT], 1),
    ("env", "--template"): (["env", *TEMPLATE, "--attribute", "index", "--root", ROOT], 0),
    ("env", "--driver"): (["env", *CLAIM, *INDEX, "--root", ROOT], 0),
    ("env", "--attribute"): (["env", *CLAIM, *INDEX[:1], "index=I", *INDEX[2:], "--root", ROOT], 0),
    ("env", "--join"): (["env", *CLAIM, *INDEX, "--join", ";", "--root", ROOT], 0),
    ("env", "--max-size"): (["env", *CLAIM, *INDEX, "--max-size", "10MB", "--root", ROOT], 0),
    ("env", "--root"): (["env", *CLAIM, *INDEX, "--root", ROOT], 0),
    ("env", "--debug"): (["env", *CLAIM, *INDEX, "--debug", "--root", ROOT], 0),
    ("validate", "PATH"): (["validate", FILE], 0),
    ("validate", "--strict"): (["validate", "--strict", FILE], 0),
    ("validate", "--output"): (["validate", "--output", "table", FILE], 0),
    ("validate", "--max-size"): (["validate", "--max-size", "1", FILE], 1),
    ("validate", "--root"): (["validate", "--root", ROOT], 0),
    ("validate", "--debug"): (["validate", "--debug", FILE], 0),
    ("ls", "--output"): (["ls", "--output", "table", "--root", ROOT], 0),
    ("ls", "--max-size"): (["ls", "--max-size", "1", "--root", ROOT], 3),
    ("ls", "--root"): (["ls", "--root", ROOT], 0),
    ("ls", "--debug"): (["ls", "--debug", "--root", ROOT], 0),
    ("path", "CLAIM"): (["path", *CLAIM, "--root", ROOT], 0),
    ("path", "REQUEST"): (["path", "training-gpus", "gpu/high", "--root", ROOT], 0),
    ("path", "--template"): (["path", *TEMPLATE, "--root", ROOT], 0),
    ("path", "--driver"): (["path", *CLAIM, "--driver", "gpu.example.com", "--root", ROOT], 0),
    ("path", "--root"): (["path", *CLAIM, "--root", ROOT], 0),
    ("path", "--debug"): (["path", *CLAIM, "--debug", "--root", ROOT], 0),
    ("status", "CLAIM"): (["status", "rdma-nics", "--timeout", "2s"], 5),
    ("status", "--template"): (["status", "--template", "nic", "--timeout", "2s"], 5),
    ("status", "--namespace"): (["status", "c", "--namespace", "ml", "--timeout", "2s"], 5),
    ("status", "--pod"): (["status", "--template", "c", "--pod", "p", "--timeout", "2s"], 5),
    ("status", "--timeout"): (["status", "c", "--timeout", "500ms"], 5),
    ("status", "--output"): (["status", "c", "--output", "json", "--timeout", "2s"], 5),
    ("status", "--debug"): (["status", "c", "--debug", "--timeout", "2s"], 1),
    ("health", "--namespace"): (
        ["health", "--pod", "p", "--namespace", "ml", "--timeout", "2s"],
        5,
    ),
    ("health", "--pod"): (["health", "--pod", "p", "--timeout", "2s"], 5),
    ("health", "--container"): (["health", "--pod", "p", "--container", "c", "--timeout", "2s"], 5),
    ("health", "--watch"): (["health", "--pod", "p", "--watch", "--timeout", "2s"], 5),
    ("health", "--fail-on"): (
        ["health", "--pod", "p", "--fail-on", "unhealthy", "--timeout", "2s"],
        5,
    ),
    ("health", "--timeout"): (["health", "--pod", "p", "--timeout", "500ms"], 5),
    ("health", "--output"): (["health", "--pod", "p", "--output", "json", "--timeout", "2s"], 5),
    ("health", "--debug"): (["health", "--pod", "p", "--debug", "--timeout", "2s"], 1),
    ("pools", "DRIVER"): (["pools", "gpu.example.com", "--timeout", "2s"], 5),
    ("pools", "--pool"): (["pools", "gpu.example.com", "--pool", "node-7", "--timeout", "2s"], 5),
    ("pools", "--limit"): (["pools", "gpu.example.com", "--limit", "10", "--timeout", "2s"], 5),
    ("pools", "--timeout"): (["pools", "gpu.example.com", "--timeout", "500ms"], 5),
    ("pools", "--keep"): (["pools", "gpu.example.com", "--keep", "--timeout", "2s"], 5),
    ("pools", "--output"): (["pools", "gpu.example.com", "--output", "json", "--timeout", "2s"], 5),
    ("pools", "--debug"): (["pools", "gpu.example.com", "--debug", "--timeout", "2s"], 1),
    ("pod-resources", "--socket"): (["pod-resources", *NO_KUBELET], 5),
    ("pod-resources", "--pod"): (
        ["pod-resources", "--pod", "p", "--namespace", "n", *NO_KUBELET],
        5,
    ),
    ("pod-resources", "--namespace"): (["pod-resources", "--namespace", "n", *NO_KUBELET], 5),
    ("pod-resources", "--driver"): (
        ["pod-resources", "--driver", "gpu.example.com", *NO_KUBELET],
        5,
    ),
    ("pod-resources", "--timeout"): (["pod-resources", "--timeout", "500ms", *NO_KUBELET], 5),
    ("pod-resources", "--output"): (["pod-resources", "--output", "json", *NO_KUBELET], 5),
    ("pod-resources", "--allocatable"): (["pod-resources", "--allocatable", *NO_KUBELET], 5),
    ("pod-resources", "--debug"): (["pod-resources", "--debug", *NO_KUBELET], 1),
}


def _offered() -> set[tuple[str, str]]:
    """(subcommand, option) for every option and argument each subcommand's --help offers."""
    parser = build_parser()
    (subcommands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    offered = set()
    for name, subparser in subcommands.choices.items():
        for action in subparser._actions:
            if action.help == argparse.SUPPRESS:
                continue
            if action.option_strings:
                offered.add((name, max(action.option_strings, key=len)))
            else:
                offered.add((name, str(action.metavar or action.dest)))
    return offered


def test_every_option_offered_has_a_run_here() -> None:
    assert set(RUNS) == _offered()


@pytest.fixture(scope="module")
def unreachable_api(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose Kubernetes API server refuses every connection (port 1)."""
    kubeconfig = tmp_path_factory.mktemp("kube") / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u, namespace: ns}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )
    unset = {"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "DRA_METADATA_ROOT"}
    environment = {key: value for key, value in os.environ.items() if key not in unset}
    return {**environment, "KUBECONFIG": str(kubeconfig), "POD_NAMESPACE": "ns"}


@pytest.mark.parametrize(("command", "option"), sorted(RUNS))
def test_the_option_is_taken(command: str, option: str, unreachable_api: dict[str, str]) -> None:
    arguments, code = RUNS[command, option]
    assert arguments[0] == command
    if option.startswith("-"):
        assert option in arguments
    result = run(*arguments, root=None, env=unreachable_api, cwd=Path(ROOT))
    assert f"(see dra-metadata {command} --help)" not in result.stderr, result.stderr
    assert result.returncode == code, result.stderr
    if option == "--debug" and code == 1:  # what went wrong, with its traceback
        assert result.stderr.startswith("Traceback (most recent call last):")


def test_an_api_subcommand_offers_no_root_and_refuses_it_either_side() -> None:
    for command in ("status", "health", "pools"):
        arguments = {"status": ["c"], "pools": ["d"]}.get(command, [])
        for given in (["--root", ROOT, command, *arguments], [command, *arguments, "--root", ROOT]):
            result = run(*given, root=None)
            assert result.returncode == 2
            assert result.stderr == (
                f"dra-metadata {command}: --root is the root of metadata files; {command} reads "
                f"the Kubernetes API (see dra-metadata {command} --help)\n"
            )
        assert "--root" not in run(command, "--help", root=None).stdout
