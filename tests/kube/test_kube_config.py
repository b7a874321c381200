"""Kubeconfigs, certificate files and exec plugins that cannot be used: a KubeAPIError naming the
file and what is wrong in it, exit 5 from the command.

Real files on disk, real plugins (small scripts), real permissions (as an unprivileged user).
No API server is needed: each problem is found before a request reaches one (the kubeconfigs
point at a port nothing listens on, so that a configuration that is fine ends as a refused
connection, which shows that it got that far).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from dra_metadata import KubeAPIError, wait_for_network_data
from dra_metadata.kube import awatch_claim_status, read_claim_status, watch_claim_status
from dra_metadata.kube._config import load_configuration
from dra_metadata.kube._tls import ssl_context

from helpers import run_command, unprivileged

EXEC_VERSION = "client.authentication.k8s.io/v1beta1"


@pytest.fixture(scope="module")
def closed_port() -> int:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def document(
    port: int, *, user: dict[str, Any] | None = None, cluster: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}", **(cluster or {})}}
        ],
        "users": [{"name": "u", "user": user or {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "ml"}}],
        "current-context": "x",
    }


def write(path: Path, content: dict[str, Any] | str | bytes) -> Path:
    if isinstance(content, dict):
        content = orjson.dumps(content)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.fixture
def use(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """$KUBECONFIG points at tmp_path/kubeconfig; not in a pod."""
    for variable in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(variable, raising=False)
    kubeconfig = tmp_path / "kubeconfig"
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.setenv("HOME", str(tmp_path))
    return kubeconfig


def read_error() -> str:
    with pytest.raises(KubeAPIError) as raised:
        read_claim_status("rdma-nics", namespace="ml", timeout=30)
    assert raised.value.status is None
    return str(raised.value)


# The file itself -------------------------------------------------------------------------


def _contexts_without(name: str, port: int) -> dict[str, Any]:
    config = document(port)
    config[name] = []
    return config


FILES: dict[str, tuple[Any, str]] = {
    "empty": ("", "is empty: a kubeconfig is a YAML mapping with clusters, contexts"),
    "only comments": ("# nothing\n\n", "is empty"),
    "random bytes": (bytes(range(256)) * 4, "is not valid YAML (unacceptable character"),
    "not UTF-8": ("clusters: [caf\udce9]".encode("utf-8", "surrogateescape"), "is not valid YAML"),
    "broken YAML": ("clusters: [\n  - name: c\ncontexts: {", "is not valid YAML (while parsing"),
    "two documents": ("a: 1\n---\nb: 2\n", "is not valid YAML (expected a single document"),
    "a list": ("- clusters\n- contexts\n", "is a YAML list, not a mapping"),
    "a string": ("hello", "is a YAML string, not a mapping"),
    "clusters not a list": ("clusters: {c: 1}\n", '"clusters" is a mapping, not a list'),
    "an entry without name": (
        "contexts: [{context: {}}]\n",
        'contexts[0] is not a mapping with a "name"',
    ),
    "current-context a number": ("current-context: 5\n", '"current-context" is a number'),
}


@pytest.mark.parametrize("case", sorted(FILES))
def test_a_kubeconfig_that_is_not_one(use: Path, case: str) -> None:
    content, expected = FILES[case]
    write(use, content)
    message = read_error()
    assert message.startswith(f"the kubeconfig {use} "), message
    assert expected in message, message
    assert "\n" not in message


def test_entries_named_but_absent(use: Path, closed_port: int) -> None:
    config = document(closed_port)
    config["current-context"] = "y"
    write(use, config)
    assert (
        f'the kubeconfig {use} has no context "y" (its current-context); its contexts: x.'
        in read_error()
    )

    config = document(closed_port)
    config["contexts"][0]["context"]["cluster"] = "elsewhere"
    write(use, config)
    assert 'has no cluster "elsewhere" (of context "x"); its clusters: c.' in read_error()

    config = document(closed_port)
    config["users"] = None
    write(use, config)
    assert 'has no user "u" (of context "x"); its users: none.' in read_error()

    config = document(closed_port)
    del config["current-context"]
    write(use, config)
    message = read_error()
    assert message.startswith(f"the kubeconfig {use} has no current context (its contexts: x)")
    assert message.endswith("pass client=lightkube.Client(...) to choose one")


def test_fields_of_the_wrong_kind(use: Path, closed_port: int) -> None:
    config = document(closed_port)
    config["clusters"][0]["cluster"]["server"] = 6443
    write(use, config)
    message = read_error()
    assert message.startswith(f'the kubeconfig {use} is not valid: cluster "c": Expected `str`')
    assert "$.server" in message

    del config["clusters"][0]["cluster"]["server"]
    write(use, config)
    assert f'the kubeconfig {use} is not valid: cluster "c" has no "server"' in read_error()

    write(use, document(closed_port, user={"auth-provider": {"name": "gcp"}}))
    message = read_error()
    assert f'user "u" in kubeconfig {use} uses an auth-provider' in message


@pytest.mark.parametrize(
    ("entry", "field", "value", "consequence"),
    [
        ("cluster", "proxy-url", "http://proxy:3128", "connect to the server directly"),
        ("cluster", "tls-server-name", "api.internal", "against the server's host name"),
        ("user", "as", "admin", "impersonation"),
        ("user", "as-groups", ["system:masters"], "impersonation"),
        ("user", "as-uid", "1234", "impersonation"),
        ("user", "as-user-extra", {"scopes": ["view"]}, "impersonation"),
    ],
)
def test_fields_the_client_would_not_apply_are_refused(
    use: Path, closed_port: int, entry: str, field: str, value: Any, consequence: str
) -> None:
    # Where the requests go and whom they act for: ignoring these would answer for another
    # server path or another identity than the kubeconfig says.
    config = document(closed_port)
    config[f"{entry}s"][0][entry][field] = value
    write(use, config)
    message = read_error()
    named = "c" if entry == "cluster" else "u"
    assert message.startswith(
        f'the kubeconfig {use}: {entry} "{named}" sets "{field}", which dra-metadata does not '
        "support ("
    ), message
    assert consequence in message
    assert message.endswith("): remove it, or pass client=lightkube.Client(...) to choose one")


def test_fields_left_empty_or_informational_are_accepted(use: Path, closed_port: int) -> None:
    config = document(closed_port, cluster={"proxy-url": "", "disable-compression": True})
    config["users"][0]["user"]["as-groups"] = []
    config["clusters"][0]["cluster"]["extensions"] = [{"name": "x", "extension": {}}]
    write(use, config)
    assert f"at http://127.0.0.1:{closed_port} refused the connection" in read_error()


def test_a_kubeconfig_that_cannot_be_read(use: Path) -> None:
    use.mkdir()
    message = read_error()
    assert message.startswith(f"the kubeconfig {use} (from $KUBECONFIG) cannot be read: Is a dir")


def test_a_kubeconfig_without_end(monkeypatch: pytest.MonkeyPatch, use: Path) -> None:
    monkeypatch.setenv("KUBECONFIG", "/dev/zero")
    assert read_error().startswith(
        "the kubeconfig /dev/zero (from $KUBECONFIG) is larger than 16777216 bytes: not a "
        "kubeconfig; pass client="
    )
    assert use.name == "kubeconfig"


def test_a_good_kubeconfig_gets_as_far_as_the_connection(use: Path, closed_port: int) -> None:
    write(use, document(closed_port))
    assert f"at http://127.0.0.1:{closed_port} refused the connection" in read_error()


# Certificate files -------------------------------------------------------------------------


def test_certificate_files_that_are_missing_or_not_certificates(
    use: Path, closed_port: int, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-ca.crt"
    write(use, document(closed_port, cluster={"certificate-authority": str(missing)}))
    message = read_error()
    assert message == (
        f'the certificate-authority {missing} of cluster "c" in kubeconfig {use} cannot be '
        "read (No such file or directory): check that the file exists and that this user may "
        "read it"
    )

    write(tmp_path / "ca.crt", "not a certificate\n")  # relative: next to the kubeconfig
    write(use, document(closed_port, cluster={"certificate-authority": "ca.crt"}))
    message = read_error()
    assert message.startswith(
        f'the certificate-authority {tmp_path / "ca.crt"} of cluster "c" in kubeconfig {use} '
        "holds no usable certificate"
    )

    write(use, document(closed_port, cluster={"certificate-authority-data": "%%%"}))
    assert read_error() == (
        f'the certificate-authority-data of cluster "c" in kubeconfig {use} is not base64; fix it'
    )

    garbage = write(tmp_path / "garbage.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n")
    for user, named in [
        ({"client-certificate": str(missing), "client-key": str(garbage)}, "client-certificate"),
        ({"client-certificate": str(garbage), "client-key": str(missing)}, "client-key"),
    ]:
        write(use, document(closed_port, user=user))
        assert read_error().startswith(
            f'the {named} {missing} of user "u" in kubeconfig {use} cannot be read (No such file'
        )

    write(use, document(closed_port, user={"client-certificate": str(garbage)}))
    assert read_error() == (
        f'user "u" in kubeconfig {use} has a client certificate but no client-key(-data): give '
        "both, or neither"
    )

    write(
        use,
        document(
            closed_port, user={"client-certificate": str(garbage), "client-key": str(garbage)}
        ),
    )
    message = read_error()
    assert message.startswith(
        f'the client-certificate {garbage} and client-key {garbage} of user "u" in kubeconfig '
        f"{use} are not a PEM certificate and its private key"
    )


UNREADABLE = """
import json, sys
from dra_metadata import kube
try:
    kube.read_claim_status("rdma-nics", namespace="ml")
except kube.KubeAPIError as error:
    print(json.dumps(str(error)))
"""


def test_certificate_files_this_user_may_not_read(closed_port: int) -> None:
    options, _ = unprivileged()
    prefix = options.pop("prefix", ())
    directory = Path(tempfile.mkdtemp(prefix="dra-metadata-kubeconfig-"))
    try:
        directory.chmod(0o755)
        locked = write(directory / "locked.pem", "-----BEGIN CERTIFICATE-----\n")
        locked.chmod(0o000)
        readable = write(directory / "readable.pem", "-----BEGIN CERTIFICATE-----\n")
        readable.chmod(0o644)
        cases = {
            "certificate-authority": ({"certificate-authority": str(locked)}, None),
            "client-certificate": (
                None,
                {"client-certificate": str(locked), "client-key": str(readable)},
            ),
            "client-key": (None, {"client-certificate": str(readable), "client-key": str(locked)}),
        }
        for field, (cluster, user) in cases.items():
            kubeconfig = write(
                directory / "kubeconfig", document(closed_port, cluster=cluster, user=user)
            )
            kubeconfig.chmod(0o644)
            result = subprocess.run(
                [*prefix, sys.executable, "-c", UNREADABLE],
                capture_output=True,
                text=True,
                check=False,
                cwd="/",
                env={
                    "PATH": "/usr/bin:/bin",
                    "HOME": str(directory),
                    "KUBECONFIG": str(kubeconfig),
                },
                timeout=60,
                **options,
            )
            assert result.returncode == 0, result.stderr
            message = json.loads(result.stdout)
            assert message.startswith(f"the {field} {locked} of "), message
            assert f"in kubeconfig {kubeconfig} cannot be read (Permission denied)" in message
    finally:
        shutil.rmtree(directory)


# Exec plugins ------------------------------------------------------------------------------


def plugin(tmp_path: Path, name: str, body: str, *, mode: int = 0o755) -> Path:
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(mode)
    return script


def exec_user(command: str, **more: Any) -> dict[str, Any]:
    return {"exec": {"apiVersion": EXEC_VERSION, "command": command, **more}}


def credential(**status: Any) -> str:
    return json.dumps({"apiVersion": EXEC_VERSION, "kind": "ExecCredential", "status": status})


PLUGINS: dict[str, tuple[str, str]] = {
    "prints too much": (
        "exec yes",
        "printed more than 1048576 bytes on stdout: not an ExecCredential",
    ),
    "says too much": ("exec yes >&2", "printed more than 1048576 bytes on stderr"),
    "exits 1": (
        'echo "the session expired:\n  run login" >&2; exit 1',
        "failed (exit status 1): the session expired: run login",
    ),
    "prints garbage": (
        "echo hello",
        "printed something that is not JSON (b'hello\\n'); it must print an ExecCredential",
    ),
    "prints nothing": ("true", "printed something that is not JSON (b'')"),
    "prints a Pod": (
        """echo '{"apiVersion": "v1", "kind": "Pod"}'""",
        'printed a JSON object of kind "Pod", not an ExecCredential',
    ),
    "prints a list": (
        "echo '[1, 2]'",
        "printed a JSON array, not an ExecCredential",
    ),
    "prints no token": (f"echo '{credential()}'", "printed an ExecCredential without status.token"),
    "prints an empty token": (
        f"echo '{credential(token='')}'",
        "printed an ExecCredential without status.token",
    ),
    "prints a certificate": (
        f"echo '{credential(clientCertificateData='x')}'",
        "printed a client certificate instead of a token",
    ),
    "prints another version": (
        """echo '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "t"}}'""",
        'printed an ExecCredential of apiVersion "client.authentication.k8s.io/v1"',
    ),
}


@pytest.mark.parametrize("case", sorted(PLUGINS))
def test_an_exec_plugin_that_gives_no_token(
    use: Path, tmp_path: Path, closed_port: int, case: str
) -> None:
    body, expected = PLUGINS[case]
    script = plugin(tmp_path, "plugin", body)
    write(use, document(closed_port, user=exec_user(str(script))))
    message = read_error()
    assert message.startswith(f'the exec plugin "{script}" of user "u" in kubeconfig {use} '), (
        message
    )
    assert expected in message, message


def test_an_exec_plugin_that_cannot_be_run(use: Path, tmp_path: Path, closed_port: int) -> None:
    write(
        use,
        document(
            closed_port, user=exec_user("dra-metadata-no-such-plugin", installHint="apt install it")
        ),
    )
    assert read_error() == (
        f'the exec plugin "dra-metadata-no-such-plugin" of user "u" in kubeconfig {use} was not '
        "found (No such file or directory) (apt install it): install it, put it on $PATH, or fix "
        "users[].user.exec.command"
    )
    script = plugin(tmp_path, "not-executable", "exit 0", mode=0o644)
    write(use, document(closed_port, user=exec_user(str(script))))
    assert "cannot be run (Permission denied)" in read_error()

    write(use, document(closed_port, user={"exec": {"apiVersion": "v9", "command": "x"}}))
    assert 'asks for apiVersion "v9", which dra-metadata does not speak' in read_error()


def test_a_good_exec_plugin_gets_as_far_as_the_connection(
    use: Path, tmp_path: Path, closed_port: int
) -> None:
    seen = tmp_path / "seen"
    printed = credential(token="t")  # noqa: S106 - a test token
    script = plugin(
        tmp_path, "plugin", f"echo \"$EXTRA $KUBERNETES_EXEC_INFO\" > {seen}\necho '{printed}'"
    )
    write(
        use,
        document(closed_port, user=exec_user(str(script), env=[{"name": "EXTRA", "value": "yes"}])),
    )
    assert "refused the connection" in read_error()
    extra, info = seen.read_text().split(" ", 1)
    assert extra == "yes"
    assert json.loads(info) == {
        "apiVersion": EXEC_VERSION,
        "kind": "ExecCredential",
        "spec": {"interactive": False},
    }


@pytest.mark.timeout(120)
def test_an_exec_plugin_that_hangs_ends_at_the_deadline(
    use: Path, tmp_path: Path, closed_port: int
) -> None:
    script = plugin(tmp_path, "plugin", "exec sleep 600")
    write(use, document(closed_port, user=exec_user(str(script))))
    with pytest.raises(KubeAPIError) as raised:
        read_claim_status("rdma-nics", namespace="ml", timeout=1.5)
    assert str(raised.value).startswith(
        f'the exec plugin "{script}" of user "u" in kubeconfig {use} did not give a credential '
        'to get resourceclaim "rdma-nics" in namespace "ml" within 1.5 s, the deadline of the '
        "request"
    )


@pytest.mark.timeout(120)
def test_a_plugin_failing_in_watches_and_waits(use: Path, tmp_path: Path, closed_port: int) -> None:
    script = plugin(tmp_path, "plugin", "exit 3")
    write(use, document(closed_port, user=exec_user(str(script))))
    expected = f'the exec plugin "{script}" of user "u" in kubeconfig {use} failed (exit status 3)'
    with pytest.raises(KubeAPIError, match="^" + re.escape(expected)):
        next(iter(watch_claim_status("rdma-nics", namespace="ml", timeout=30)))

    async def first() -> None:
        async for _ in awatch_claim_status("rdma-nics", namespace="ml", timeout=30):
            return

    with pytest.raises(KubeAPIError, match="^" + re.escape(expected)):
        asyncio.run(first())
    with pytest.raises(KubeAPIError, match="^" + re.escape(expected)):
        wait_for_network_data("rdma-nics", "nics", namespace="ml", source="api", timeout=30)


# In a pod: the ServiceAccount ---------------------------------------------------------------


def test_an_in_cluster_token_that_cannot_be_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    (tmp_path / "token").mkdir()
    with pytest.raises(
        KubeAPIError,
        match=f"^the ServiceAccount token {tmp_path}/token cannot be read \\(Is a directory\\)",
    ):
        load_configuration(tmp_path)
    (tmp_path / "token").rmdir()
    write(tmp_path / "token", "\n")
    with pytest.raises(KubeAPIError, match="is empty: the kubelet has not written it"):
        load_configuration(tmp_path)
    write(tmp_path / "token", "secret\n")
    loaded = load_configuration(tmp_path)  # no namespace file: resolve_namespace says so
    assert (loaded.config.cluster.server, loaded.namespace) == ("https://10.0.0.1:443", None)
    with pytest.raises(KubeAPIError) as raised:
        ssl_context(loaded.config, loaded.source)
    assert str(raised.value).startswith(
        f'the certificate-authority {tmp_path}/ca.crt of cluster "default" in the in-cluster '
        f"ServiceAccount ({tmp_path}) cannot be read (No such file or directory)"
    )


# The command ------------------------------------------------------------------------------


COMMAND_CASES: dict[str, Callable[[Path, int], tuple[dict[str, Any] | str, str]]] = {
    "empty": lambda _tmp, _port: ("", "is empty"),
    "broken YAML": lambda _tmp, _port: ("a: [", "is not valid YAML"),
    "a list": lambda _tmp, _port: ("- a\n", "is a YAML list, not a mapping"),
    "plugin missing": lambda tmp, port: (
        document(port, user=exec_user(str(tmp / "missing-plugin"))),
        "was not found",
    ),
    "plugin exits 1": lambda tmp, port: (
        document(port, user=exec_user(str(plugin(tmp, "p", "exit 1")))),
        "failed (exit status 1)",
    ),
    "plugin prints garbage": lambda tmp, port: (
        document(port, user=exec_user(str(plugin(tmp, "p", "echo garbage")))),
        "is not JSON",
    ),
    "certificate missing": lambda tmp, port: (
        document(port, cluster={"certificate-authority": str(tmp / "none.crt")}),
        "cannot be read",
    ),
    "impersonation": lambda _tmp, port: (
        document(port, user={"token": "t", "as": "admin"}),
        (
            'sets "as", which dra-metadata does not support (it would act as this user itself, '
            "not as the user it names (impersonation)): remove it, or set KUBECONFIG to a "
        ),
    ),
}


@pytest.mark.parametrize("case", sorted(COMMAND_CASES))
@pytest.mark.parametrize(
    "arguments",
    [["status", "rdma-nics"], ["wait", "rdma-nics", "nics", "--source", "api", "--timeout", "30"]],
)
def test_the_command_exits_5_naming_the_kubeconfig(
    tmp_path: Path, closed_port: int, case: str, arguments: list[str]
) -> None:
    content, expected = COMMAND_CASES[case](tmp_path, closed_port)
    kubeconfig = write(tmp_path / "kubeconfig", content)
    result = run_command(
        *arguments,
        "--namespace",
        "ml",
        root=None,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig)},
    )
    assert result.returncode == 5, result.stderr
    assert result.stderr.startswith("dra-metadata: "), result.stderr
    assert f"kubeconfig {kubeconfig}" in result.stderr, result.stderr
    assert expected in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
