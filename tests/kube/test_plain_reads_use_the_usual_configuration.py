"""A plain read (for a probe) takes a configuration only where the usual way takes it too, and
then reads the same server, certificates, credentials and namespace from it; everything else
(a broken kubeconfig, a field it does not serve, a proxy) it declines, and the usual way
applies it or says what is wrong, as before.

Kubeconfigs are real files, made of the fields client-go knows, of right and wrong types.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_metadata import KubeAPIError
from dra_metadata.kube import _config
from dra_metadata.kube._plain_config import (
    PROXY_VARIABLES,
    PlainConfig,
    _in_cluster,
    _kubeconfig,
    plain_configuration,
    server_address,
)

CA_DATA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n...").decode()


def optional(
    good: list[Any],
    bad: Sequence[Any] = (),
    *,
    rare: bool = False,
    needed: bool = False,
) -> st.SearchStrategy[Any]:
    """A field left out (the marker ``...``), null, one of ``good`` or, less often, of ``bad``;
    a ``rare`` field is left out most of the time, a ``needed`` one given most of the time."""
    left_out = [...] * (8 if rare else 2)
    return st.sampled_from([*left_out, None, *good * (12 if needed else 3), *bad])


def entry(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(fields).map(
        lambda drawn: {key: value for key, value in drawn.items() if value is not ...}
    )


CLUSTERS = entry(
    {
        "server": optional(
            ["https://127.0.0.1:6443", "https://api.example.com", "https://[::1]:6443/prefix/"],
            ["https://h:0", "https://user@h", "http://127.0.0.1:8080", "", 5],
            needed=True,
        ),
        "certificate-authority": optional(["ca.crt", "/etc/ca.crt"], ["", 5]),
        "certificate-authority-data": optional([CA_DATA], [True], needed=True),
        "insecure-skip-tls-verify": optional([True, False], ["true"]),
        "proxy-url": optional(["http://proxy:3128"], rare=True),
        "tls-server-name": optional(["api"], rare=True),
        "extensions": optional([[]], rare=True),
    }
)
USERS = entry(
    {
        "token": optional(["secret"], ["", 5]),
        "tokenFile": optional(["token", "/run/token"], [5]),
        "client-certificate": optional(["client.crt"]),
        "client-certificate-data": optional([CA_DATA]),
        "client-key": optional(["client.key"]),
        "client-key-data": optional([CA_DATA], [[1]]),
        "exec": optional(
            [{"command": "plugin", "apiVersion": "client.authentication.k8s.io/v1"}], rare=True
        ),
        "username": optional(["me"], rare=True),
        "password": optional(["pw"], rare=True),
        "auth-provider": optional([{"name": "gcp"}], rare=True),
        "as": optional(["someone"], rare=True),
    }
)
CONTEXTS = entry(
    {
        "cluster": optional(["c"], ["missing", 5], needed=True),
        "user": optional(["u"], ["missing", ""]),
        "namespace": optional(["ml"], ["", 5]),
        "extensions": optional([[]], rare=True),
    }
)
DOCUMENTS = st.fixed_dictionaries(
    {
        "clusters": st.sampled_from(["list"] * 12 + ["not-a-list", "nameless", "none"]),
        "cluster": CLUSTERS,
        "user": USERS,
        "context": CONTEXTS,
        "current-context": optional(["x"], ["y", 5], needed=True),
        "as_json": st.booleans(),
    }
)


def kubeconfig(drawn: dict[str, Any]) -> dict[str, Any]:
    cluster_list: Any = [{"name": "c", "cluster": drawn["cluster"]}]
    if drawn["clusters"] == "not-a-list":
        cluster_list = {"c": drawn["cluster"]}
    elif drawn["clusters"] == "nameless":
        cluster_list = [{"cluster": drawn["cluster"]}]
    elif drawn["clusters"] == "none":
        cluster_list = None
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": cluster_list,
        "users": [{"name": "u", "user": drawn["user"]}],
        "contexts": [{"name": "x", "context": drawn["context"]}],
    }
    if drawn["current-context"] is not ...:
        document["current-context"] = drawn["current-context"]
    return document


def same_as_usual(plain: PlainConfig, usual: _config.Loaded) -> None:
    config = usual.config
    assert plain.source == usual.source
    assert plain.namespace == usual.namespace
    assert plain.fname == config.fname
    assert plain.cluster.server == config.cluster.server
    assert (plain.context.cluster, plain.context.user or None) == (
        config.context.cluster,
        config.context.user or None,
    )
    for name in ("certificate_auth", "certificate_auth_data", "insecure"):
        assert getattr(plain.cluster, name) == getattr(config.cluster, name), name
    if plain.user is None:
        assert config.user is None
        return
    assert config.user is not None
    for name in PlainUserFields:
        assert getattr(plain.user, name) == getattr(config.user, name), name
    assert config.user.exec is None
    assert config.user.username is None
    assert config.user.auth_provider is None


PlainUserFields = (
    "token",
    "token_file",
    "client_cert",
    "client_cert_data",
    "client_key",
    "client_key_data",
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(DOCUMENTS)
def test_a_kubeconfig_taken_reads_as_the_usual_way_reads_it(
    tmp_path: Path, drawn: dict[str, Any]
) -> None:
    path = tmp_path / "kubeconfig"
    document = kubeconfig(drawn)
    path.write_bytes(
        orjson.dumps(document) if drawn["as_json"] else yaml.safe_dump(document).encode()
    )
    plain = _kubeconfig(path)
    try:
        usual = _config.load_kubeconfig(path, "$KUBECONFIG")
    except KubeAPIError:
        assert plain is None
        return
    if plain is not None:
        same_as_usual(plain, usual)


def clean(tmp_path: Path, **user: Any) -> Path:
    document = {
        "clusters": [
            {
                "name": "c",
                "cluster": {
                    "server": "https://[::1]:6443/k8s/",
                    "certificate-authority-data": CA_DATA,
                },
            }
        ],
        "users": [{"name": "u", "user": user or {"token": "secret"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.parametrize(
    "user",
    [{"token": "secret"}, {"tokenFile": "token"}, {"client-certificate": "c", "client-key": "k"}],
)
def test_the_kubeconfigs_of_tokens_and_certificates_are_taken(
    tmp_path: Path, user: dict[str, str]
) -> None:
    path = clean(tmp_path, **user)
    plain = _kubeconfig(path)
    assert plain is not None
    same_as_usual(plain, _config.load_kubeconfig(path, "$KUBECONFIG"))
    assert plain.namespace == "default"  # lightkube's, for a context that names none
    address = plain.address
    assert (address.hostname, address.port, address.base_path) == ("::1", 6443, "/k8s")
    assert address.host_header() == "[::1]:6443"


def test_the_in_cluster_account_reads_as_the_usual_way_reads_it(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("a-token\n")
    (tmp_path / "namespace").write_text("ml\n")
    (tmp_path / "ca.crt").write_text("not read here")
    plain = _in_cluster(tmp_path, "fd00::1", "443")
    assert plain is not None
    usual = _config._in_cluster(tmp_path, "fd00::1", "443")
    assert plain.cluster.server == usual.config.cluster.server == "https://[fd00::1]:443"
    assert plain.cluster.certificate_auth == usual.config.cluster.certificate_auth
    assert plain.user is not None
    assert usual.config.user is not None
    assert plain.user.token_file == usual.config.user.token_file
    assert (plain.namespace, plain.source) == (usual.namespace, usual.source)
    assert plain.address.host_header() == "[fd00::1]"


@pytest.mark.parametrize("token", ["", "  \n"])
def test_an_in_cluster_account_without_a_token_is_left_to_the_usual_way(
    tmp_path: Path, token: str
) -> None:
    (tmp_path / "token").write_text(token)
    assert _in_cluster(tmp_path, "10.0.0.1", "443") is None
    with pytest.raises(KubeAPIError, match="is empty"):
        _config._in_cluster(tmp_path, "10.0.0.1", "443")


@pytest.mark.parametrize("variable", PROXY_VARIABLES)
def test_a_proxy_in_the_environment_is_left_to_the_usual_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(clean(tmp_path)))
    assert plain_configuration() is not None
    monkeypatch.setenv(variable, "http://proxy.example.com:3128")
    assert plain_configuration() is None


@pytest.mark.parametrize(
    ("server", "taken"),
    [
        ("https://h", ("h", 443, "")),
        ("https://h:6443/", ("h", 6443, "")),
        ("https://h:6443//a/b//", ("h", 6443, "//a/b")),
        ("https://[fe80::1]", ("fe80::1", 443, "")),
        ("https://[fe80::1%25eth0]:6443", None),
        ("https://h:", None),
        ("https://h:65536", None),
        ("https://h:+1", None),
        ("https://h:6443:1", None),
        ("https://[::1", None),
        ("https://[::1]x", None),
        ("https://[]", None),
        ("https://", None),
        ("https://h/a?b", None),
        ("https://h/a#b", None),
        ("https://u:p@h", None),
        ("HTTPS://h", None),
        ("http://h", None),
    ],
)
def test_a_server_url_is_taken_only_in_its_plain_form(
    server: str, taken: tuple[str, int, str] | None
) -> None:
    address = server_address(server)
    if taken is None:
        assert address is None
    else:
        assert address is not None
        assert (address.hostname, address.port, address.base_path) == taken
