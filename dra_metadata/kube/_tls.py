"""The TLS context of a configuration: its certificate authority and client certificate, checked.

Each file is read by us, so that a missing or unreadable certificate file, a client certificate
without its key, or base64 that is not, is a KubeAPIError naming the file, the entry and what is
wrong (lightkube's adapter lets them through as a bare OSError or TypeError). Used by both ways
of making requests: the httpx2 client, and the plain one-shot reads (_plain_http), which is why
nothing here imports httpx2 but the one case that needs its trust store.

``config`` is lightkube's SingleConfig, or a PlainConfig (_plain_config) that has the same
attributes.
"""

from __future__ import annotations

import base64
import binascii
import ssl
from pathlib import Path

from dra_metadata._model._errors import KubeAPIError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from lightkube.config.kubeconfig import SingleConfig

    from dra_metadata.kube._plain_config import PlainConfig


def config_file(config: SingleConfig | PlainConfig, name: str, source: str) -> Path:
    """A file the configuration names, relative to the kubeconfig's directory."""
    path = Path(name).expanduser()
    if path.is_absolute():
        return path
    if config.fname is None:
        raise KubeAPIError(
            f"{source} names the file {name} by a relative path, but has no kubeconfig file it "
            "would be relative to: give an absolute path"
        )
    return Path(config.fname).parent / path


def _read(path: Path, what: str, source: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise KubeAPIError(
            f"the {what} {path} of {source} cannot be read ({error.strerror}): check that the "
            "file exists and that this user may read it"
        ) from None


def _decoded(data: str, what: str, source: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise KubeAPIError(f"the {what} of {source} is not base64; fix it") from None


def entry_name(config: SingleConfig | PlainConfig, kind: str) -> str:
    name = config.context.cluster if kind == "cluster" else config.context.user
    return f'{kind} "{name}"'


def ssl_context(config: SingleConfig | PlainConfig, source: str) -> ssl.SSLContext:
    """The TLS context: the cluster's certificate authority, the user's client certificate."""
    cluster = config.cluster
    where = f"{entry_name(config, 'cluster')} in {source}"
    if cluster.certificate_auth or cluster.certificate_auth_data:
        if cluster.certificate_auth:
            path = config_file(config, cluster.certificate_auth, source)
            what = f"certificate-authority {path}"
            data = _read(path, "certificate-authority", where)
        else:
            what = "certificate-authority-data"
            data = _decoded(str(cluster.certificate_auth_data), what, where)
        try:  # PEM is ASCII text; anything else is handed over as DER
            text: str | bytes = data.decode("ascii")
        except UnicodeDecodeError:
            text = data
        try:
            context = ssl.create_default_context(cadata=text)
        except (ssl.SSLError, ValueError) as error:
            raise KubeAPIError(
                f"the {what} of {where} holds no usable certificate ({error}): it must be the "
                "PEM certificate(s) of the authority that signed the API server's certificate"
            ) from None
    else:  # the trust store httpx2 would use: certifi's, or $SSL_CERT_FILE / $SSL_CERT_DIR
        import httpx2  # noqa: PLC0415 - only here, never on a plain read (it declines)

        context = httpx2.create_ssl_context(verify=not cluster.insecure, trust_env=True)
    if config.user is not None:
        _load_client_certificate(context, config, source)
    return context


def _load_client_certificate(
    context: ssl.SSLContext, config: SingleConfig | PlainConfig, source: str
) -> None:
    user = config.user
    assert user is not None  # noqa: S101 - checked by the caller
    where = f"{entry_name(config, 'user')} in {source}"
    has_certificate = bool(user.client_cert or user.client_cert_data)
    has_key = bool(user.client_key or user.client_key_data)
    if not has_certificate and not has_key:
        return
    if has_certificate != has_key:
        given, missing = ("certificate", "key") if has_certificate else ("key", "certificate")
        raise KubeAPIError(
            f"{where} has a client {given} but no client-{missing}(-data): give both, or neither"
        )
    import tempfile  # noqa: PLC0415 - ssl loads a certificate from files only

    with tempfile.TemporaryDirectory(prefix="dra-metadata-") as scratch:
        files = []
        for kind, name, inline in (
            ("client-certificate", user.client_cert, user.client_cert_data),
            ("client-key", user.client_key, user.client_key_data),
        ):
            if inline:
                copy = Path(scratch) / kind
                copy.write_bytes(_decoded(inline, f"{kind}-data", where))
                files.append((f"{kind}-data", copy))
            else:
                path = config_file(config, str(name), source)
                _read(path, kind, where)  # its own message when it cannot be read
                files.append((f"{kind} {path}", path))
        try:
            context.load_cert_chain(files[0][1], files[1][1])
        except (ssl.SSLError, OSError) as error:  # ssl.SSLError is an OSError
            raise KubeAPIError(
                f"the {files[0][0]} and {files[1][0]} of {where} are not a PEM certificate and "
                f"its private key ({error}); fix them"
            ) from None
