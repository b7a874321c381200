"""source= of the waits and --source of the command, where no API server is needed.

The waits on the API itself are tested against a real kube-apiserver in test_kube_api.py and
test_kube_cli.py; here: which source is chosen, which options are refused, that the files
never import the Kubernetes client, and the command's one-line errors without a server.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

import dra_metadata
from dra_metadata import KubeAPIError, MetadataReadError

from helpers import REPO, SAMPLE, run_python
from helpers import run_command as run


def _refused(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("asynchronous", [False, True])
def test_options_of_the_other_source_are_refused(asynchronous: bool) -> None:
    def call(**options: Any) -> Any:
        if asynchronous:
            return asyncio.run(dra_metadata.await_for_network_data("c", "r", timeout=1, **options))
        return dra_metadata.wait_for_network_data("c", "r", timeout=1, **options)

    _refused(lambda: call(source="bogus"), "source must be 'file', 'api' or 'auto', not 'bogus'")
    _refused(
        lambda: call(namespace="ml", client=None),
        "^namespace: only for the Kubernetes API \\(source='api' or 'auto'\\), not for "
        "source='file'$",
    )
    _refused(lambda: call(source="file", pod_name="p", template=True), "^pod_name: only for")
    _refused(
        lambda: call(source="api", root=SAMPLE, poll_interval=0.5),
        "^root, poll_interval: only for metadata files \\(source='file' or 'auto'\\), not for "
        "source='api'$",
    )
    _refused(lambda: call(source="api", force_polling=True), "^force_polling: only for")
    _refused(
        lambda: call(source="api", pod_name="p"),
        "pod_name only applies to a claim made from a template",
    )


def test_auto_waits_on_the_files_where_the_request_directory_exists() -> None:
    metadata = dra_metadata.wait_for_network_data(
        "fast-net", "vf", root=SAMPLE, source="auto", timeout=5, namespace="unused-here"
    )
    assert [source.driver for source in metadata.sources] == ["sriov.example.com"]


def test_auto_refuses_a_root_it_cannot_look_into(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(MetadataReadError, match="look for the request directory") as caught:
        dra_metadata.wait_for_network_data("c", "r", root=a_file, source="auto", timeout=1)
    assert caught.value.path == a_file / "resourceclaims" / "c" / "r"


def test_waits_on_files_import_no_kubernetes_client() -> None:
    result = run_python(
        "import asyncio, sys, dra_metadata\n"
        "tree = 'examples/tree'\n"
        "dra_metadata.wait_for_network_data('fast-net', 'vf', root=tree, timeout=5)\n"
        "dra_metadata.wait_for_network_data('fast-net', 'vf', root=tree, timeout=5, source='file')\n"
        "dra_metadata.wait_for(lambda d: True, 'fast-net', 'vf', root=tree, timeout=5, source='auto')\n"
        "dra_metadata.wait_until(lambda m: None, 'fast-net', 'vf', root=tree, timeout=5)\n"
        "asyncio.run(dra_metadata.await_for_network_data('fast-net', 'vf', root=tree, timeout=5))\n"
        "asyncio.run(dra_metadata.await_until(lambda m: None, 'accelerator', 'gpu', template=True, root=tree, timeout=5, source='auto'))\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in {'lightkube', 'httpx2', 'httpx'}]\n"
        "print(loaded, 'dra_metadata.kube' in sys.modules)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[] False"


def test_auto_without_a_request_directory_goes_to_the_api(tmp_path: Path) -> None:
    result = run_python(
        "import dra_metadata\n"
        "try:\n"
        f"    dra_metadata.wait_for_network_data('c', 'r', root={str(tmp_path)!r}, source='auto', timeout=5)\n"
        "except dra_metadata.KubeAPIError as error:\n"
        "    print(error)\n",
        KUBECONFIG=str(tmp_path / "no-kubeconfig"),
        HOME=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("no Kubernetes API configuration: ")
    assert result.stdout.rstrip().endswith("pass client=lightkube.Client(...) to choose one")


# The command -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["wait", "c", "r", "--namespace", "ml"], "--namespace only applies to the Kubernetes API"),
        (["wait", "c", "r", "--source", "file", "--pod", "p"], "--pod only applies to the"),
        (
            ["--root", "x", "wait", "c", "r", "--source", "api", "--poll-interval", "1s"],
            "--root and --poll-interval only apply to metadata files, not to --source api",
        ),
        (
            ["wait", "c", "r", "--source", "api", "--validate", "strict"],
            "--validate only applies to metadata files",
        ),
        (
            ["wait", "c", "r", "--source", "api", "--for", "generation=2"],
            (
                "--for generation=2: the Kubernetes API publishes no generations of device "
                "metadata (--source api); wait for network-data, or leave out --for"
            ),
        ),
        (
            ["wait", "c", "r", "--source", "api", "--for", "attribute=uuid"],
            "the Kubernetes API publishes no attributes",
        ),
        (["wait", "c", "r", "--source", "api", "--for", "file"], "publishes no metadata files"),
        (["wait", "c", "r", "--source", "api", "--pod", "p"], "--pod names the pod whose claim"),
        (["exec", "c", "r", "--source", "api", "--", "true"], "--source only applies to a wait"),
        (["exec", "c", "r", "--namespace", "ml", "--", "true"], "--namespace only applies to a"),
        (
            [
                "exec",
                "c",
                "r",
                "--source",
                "api",
                "--timeout",
                "1",
                "--attribute",
                "uuid",
                "--",
                "true",
            ],
            "--attribute: the Kubernetes API publishes no device attributes (--source api)",
        ),
        (["status", "c", "--pod", "p"], "--pod names the pod whose claim --template names"),
        (["--root", "x", "status", "c"], "--root is the root of metadata files; status reads"),
        (["health", "--root", "x"], "--root is the root of metadata files; health reads"),
        (["status", "c", "--namespace", "Bad_Name"], "--namespace 'Bad_Name': a Kubernetes name"),
    ],
)
def test_options_that_would_do_nothing_are_usage_errors(arguments: list[str], message: str) -> None:
    result = run(*arguments, root=None)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert result.stderr.count("\n") == 1


def test_auto_chooses_before_anything_else(tmp_path: Path) -> None:
    ready = run("wait", "fast-net", "vf", "--source", "auto", "--for", "network-data")
    assert ready.returncode == 0, ready.stderr
    assert ready.stdout == (
        "ready: network data (interface_name) on every device: 1 device(s), sriov.example.com "
        "generation 2\n"
    )
    refused = run("wait", "c", "r", "--source", "auto", "--validate", "metadata", root=tmp_path)
    assert refused.returncode == 2
    assert (
        f"--validate checks metadata files: --source auto chose the Kubernetes API "
        f"({tmp_path}/resourceclaims/c/r does not exist)" in refused.stderr
    )


def _closed_port_kubeconfig(tmp_path: Path) -> tuple[Path, int]:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_bytes(
        orjson.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return kubeconfig, port


@pytest.mark.parametrize(
    "arguments",
    [
        ["status", "rdma-nics"],
        ["health", "--pod", "trainer-0"],
        ["wait", "rdma-nics", "nics", "--source", "api", "--timeout", "5"],
        ["exec", "rdma-nics", "nics", "--source", "api", "--timeout", "5", "--", "true"],
    ],
)
def test_no_configuration_and_a_refused_connection_exit_5(
    tmp_path: Path, arguments: list[str]
) -> None:
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "POD_NAMESPACE": "ml"}
    missing = run(*arguments, root=None, env={**environment, "KUBECONFIG": str(tmp_path / "none")})
    assert missing.returncode == 5, missing.stderr
    assert missing.stderr.startswith("dra-metadata: no Kubernetes API configuration: ")
    assert missing.stderr.endswith("set KUBECONFIG to a kubeconfig file with a current context\n")
    assert missing.stderr.count("\n") == 1
    kubeconfig, port = _closed_port_kubeconfig(tmp_path)
    refused = run(*arguments, root=None, env={**environment, "KUBECONFIG": str(kubeconfig)})
    assert refused.returncode == 5, refused.stderr
    assert refused.stderr.startswith(
        f"dra-metadata: the Kubernetes API server at https://127.0.0.1:{port} refused the "
        "connection to get "
    )
    assert refused.stderr.count("\n") == 1
    assert "Traceback" not in refused.stderr


def test_the_exit_code_of_the_api_is_documented() -> None:
    from dra_metadata.cli._exit import EXIT_CODES_HELP, EXIT_KUBE_API, exit_code  # noqa: PLC0415

    assert exit_code(KubeAPIError("refused", status=403)) == EXIT_KUBE_API == 5
    assert "5 Kubernetes API or kubelet refused or unreachable" in EXIT_CODES_HELP
    page = (REPO / "docs" / "reference" / "exit-codes.md").read_text()
    assert "| 5 | The Kubernetes API refused" in page
