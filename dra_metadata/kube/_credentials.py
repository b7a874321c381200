"""The credentials of a configuration for httpx2: tokens, token files, exec plugins, checked
(its TLS context is _tls's).

lightkube's adapter (``ConnectionParams.httpx_params``) lets an exec plugin that is missing,
fails or prints something else through as FileNotFoundError, KeyError or JSONDecodeError, from
inside a request. Here each plugin is run by us, so that every such problem is a KubeAPIError
naming the entry and what is wrong. A
credential problem raised while a request is sent is a CredentialError (a KubeAPIError): a watch
ends on it instead of retrying.

A plugin runs in a session (and process group) of its own, which is ended (SIGKILL) when the
plugin exits and when it is given up on (the deadline, Ctrl-C), even while it is being started:
a child it left in the background, holding its stdout, can neither keep the request waiting nor
outlive the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncGenerator, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import orjson

from dra_metadata._model._errors import KubeAPIError
from dra_metadata.kube._errors import CredentialError
from dra_metadata.kube._tls import config_file, entry_name

if TYPE_CHECKING:
    from lightkube.config.kubeconfig import SingleConfig
    from lightkube.config.models import UserExec

EXEC_API_VERSIONS = (
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)
_SHOWN_OUTPUT = 200  # characters of a plugin's output or error quoted in a message
PLUGIN_OUTPUT_LIMIT = 1 << 20
"""Bytes an exec plugin may print on stdout (an ExecCredential is a few KiB) or stderr."""
_REAP_SECONDS = 1.0
"""How long the pipes of an ended plugin may take to close (a process that left the plugin's
session may hold them) before they are closed on our side."""


class _PluginProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The pipes of a plugin's process, and ``exited``, done as soon as the plugin itself exits
    (``Process.wait()`` also waits for the pipes, which a child it left may hold open)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=65536, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


def _end_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL to the plugin's process group (its session: the plugin and what it started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


class _Output:
    """What a plugin printed on one stream so far; None past PLUGIN_OUTPUT_LIMIT bytes."""

    def __init__(self) -> None:
        self.data: bytearray | None = bytearray()

    def value(self) -> bytes | None:
        return None if self.data is None else bytes(self.data)


async def _drained(
    stream: asyncio.StreamReader | None, process: asyncio.subprocess.Process, output: _Output
) -> None:
    """Read ``stream`` into ``output`` up to its end; past PLUGIN_OUTPUT_LIMIT bytes, the
    process is killed. The stream is read to its end either way: asyncio ends a process's
    wait() only once its pipes are closed."""
    assert stream is not None  # noqa: S101 - created with PIPE
    while chunk := await stream.read(65536):
        if output.data is None:
            continue
        output.data += chunk
        if len(output.data) > PLUGIN_OUTPUT_LIMIT:
            output.data = None
            with contextlib.suppress(ProcessLookupError):
                process.kill()


def auth(config: SingleConfig, source: str) -> httpx2.Auth | None:
    """How requests authenticate: a token (file), an exec plugin, a password, or not at all."""
    user = config.user
    if user is None:
        return None
    where = f"{entry_name(config, 'user')} in {source}"
    if user.token_file is not None:
        return TokenFileAuth(config_file(config, user.token_file, source), where)
    if user.token is not None:
        return _BearerAuth(user.token)
    if user.exec is not None:
        return ExecAuth(user.exec, where)
    if user.username and user.password:
        return httpx2.BasicAuth(user.username, user.password)
    if user.auth_provider:
        raise KubeAPIError(
            f"{where} uses an auth-provider, which dra-metadata does not support (client-go "
            "dropped them too): use an exec plugin (users[].user.exec) or a token"
        )
    return None


class _AsyncOnly:
    """Requests are made by an httpx2.AsyncClient only: a synchronous flow is a bug."""

    def sync_auth_flow(
        self,
        request: httpx2.Request,  # noqa: ARG002 - the signature httpx2 calls
    ) -> Generator[httpx2.Request, Any, None]:
        raise TypeError(f"{type(self).__name__} authenticates asynchronous requests only")


def _bearer(request: httpx2.Request, token: str) -> None:
    request.headers["Authorization"] = f"Bearer {token}"


class _BearerAuth(_AsyncOnly, httpx2.Auth):
    def __init__(self, token: str) -> None:
        self.token = token

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        _bearer(request, self.token)
        yield request


class TokenFileAuth(_AsyncOnly, httpx2.Auth):
    """A bearer token read from a file, read again after a 401 (the kubelet rotates it)."""

    def __init__(self, path: Path, where: str) -> None:
        self.path = path
        self.where = where
        self.token = self._read(KubeAPIError)

    def _read(self, error: type[KubeAPIError]) -> str:
        try:
            token = self.path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as problem:
            detail = problem.strerror if isinstance(problem, OSError) else "not UTF-8 text"
            raise error(
                f"the token file {self.path} of {self.where} cannot be read ({detail}): check "
                "that it exists and that this user may read it"
            ) from None
        if not token:
            raise error(f"the token file {self.path} of {self.where} is empty")
        return token

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        _bearer(request, self.token)
        response = yield request
        if response.status_code == 401:
            self.token = self._read(CredentialError)
            _bearer(request, self.token)
            yield request


class ExecAuth(_AsyncOnly, httpx2.Auth):
    """A token from an exec plugin (an ExecCredential on its stdout), run again after a 401.

    ``running`` is true while the plugin runs, so that a deadline reached meanwhile can say the
    plugin, not the server, took the time.
    """

    def __init__(self, plugin: UserExec, where: str) -> None:
        self.plugin = plugin
        self.where = where
        self.token: str | None = None
        self.running = False
        if plugin.apiVersion not in EXEC_API_VERSIONS:
            raise KubeAPIError(
                f'the exec plugin of {where} asks for apiVersion "{plugin.apiVersion}", which '
                f"dra-metadata does not speak ({', '.join(EXEC_API_VERSIONS)}); fix it"
            )

    def describe(self) -> str:
        return f'the exec plugin "{self.plugin.command}" of {self.where}'

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        self.running = False
        if self.token is not None:
            _bearer(request, self.token)
            response = yield request
            if response.status_code != 401:
                return
        # Left true when the run is cancelled: the deadline's message is made after that.
        self.running = True
        self.token = await self._run()
        self.running = False
        _bearer(request, self.token)
        yield request

    def _environment(self) -> dict[str, str]:
        environment = dict(os.environ)
        for variable in self.plugin.env or ():
            environment[variable.name] = variable.value
        info = {
            "apiVersion": self.plugin.apiVersion,
            "kind": "ExecCredential",
            "spec": {"interactive": False},
        }
        environment["KUBERNETES_EXEC_INFO"] = orjson.dumps(info).decode()
        return environment

    async def _start(
        self, loop: asyncio.AbstractEventLoop
    ) -> tuple[asyncio.SubprocessTransport, _PluginProtocol]:
        try:
            return await loop.subprocess_exec(
                lambda: _PluginProtocol(loop),
                self.plugin.command,
                *(self.plugin.args or ()),
                env=self._environment(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            hint = f" ({self.plugin.installHint.strip()})" if self.plugin.installHint else ""
            found = "was not found" if isinstance(error, FileNotFoundError) else "cannot be run"
            raise CredentialError(
                f"{self.describe()} {found} ({error.strerror}){hint}: install it, put it on "
                "$PATH, or fix users[].user.exec.command"
            ) from None

    async def _run(self) -> str:
        loop = asyncio.get_running_loop()
        # A start is never cut short: asyncio's clean-up of a start cancelled before its pipes
        # were connected waits for those pipes to close, which a child the plugin left holds
        # open for as long as it lives. Given up on meanwhile (the deadline, Ctrl-C), the start
        # is let finish, then its session is ended as below, and the cancellation goes on.
        starting = loop.create_task(self._start(loop))
        given_up: asyncio.CancelledError | None = None
        while True:
            try:
                transport, protocol = await asyncio.shield(starting)
                break
            except asyncio.CancelledError as cancelled:
                if starting.cancelled():
                    raise
                given_up = cancelled
            except Exception:  # the plugin could not be started (CredentialError)
                if given_up is not None:
                    raise given_up from None
                raise
        process = asyncio.subprocess.Process(transport, protocol, loop)
        printed, complained = _Output(), _Output()
        readers = asyncio.gather(
            _drained(process.stdout, process, printed),
            _drained(process.stderr, process, complained),
        )
        try:
            if given_up is not None:
                raise given_up
            await protocol.exited  # not its pipes: a child it left may hold them open
        finally:  # exited, or cancelled (the deadline, Ctrl-C): its session goes with it
            _end_group(process)
            await _reaped(process, readers, transport)
        stdout, stderr = printed.value(), complained.value()
        if stdout is None or stderr is None:
            stream = "stdout" if stdout is None else "stderr"
            raise CredentialError(
                f"{self.describe()} printed more than {PLUGIN_OUTPUT_LIMIT} bytes on {stream}: "
                "not an ExecCredential; fix the plugin"
            )
        if process.returncode != 0:
            said = stderr.decode("utf-8", "replace").strip()[-_SHOWN_OUTPUT:]
            raise CredentialError(
                f"{self.describe()} failed (exit status {process.returncode})"
                + (f": {' '.join(said.split())}" if said else "")
            )
        return self._token(stdout)

    def _token(self, stdout: bytes) -> str:
        def wrong(what: str) -> CredentialError:
            return CredentialError(
                f"{self.describe()} printed {what}; it must print an ExecCredential "
                f'(apiVersion "{self.plugin.apiVersion}") with status.token'
            )

        try:
            credential = orjson.loads(stdout)
        except orjson.JSONDecodeError:
            shown = stdout[:_SHOWN_OUTPUT]
            raise wrong(f"something that is not JSON ({shown!r})") from None
        if not isinstance(credential, dict):
            raise wrong(f"a JSON {_json_kind(credential)}, not an ExecCredential")
        if credential.get("kind") != "ExecCredential":
            raise wrong(f'a JSON object of kind "{credential.get("kind")}", not an ExecCredential')
        if credential.get("apiVersion") != self.plugin.apiVersion:
            raise wrong(f'an ExecCredential of apiVersion "{credential.get("apiVersion")}"')
        status = credential.get("status")
        token = status.get("token") if isinstance(status, dict) else None
        if not isinstance(token, str) or not token:
            if isinstance(status, dict) and status.get("clientCertificateData"):
                raise wrong(
                    "a client certificate instead of a token (dra-metadata supports "
                    "status.token only)"
                )
            raise wrong("an ExecCredential without status.token")
        return token


async def _reaped(
    process: asyncio.subprocess.Process,
    readers: asyncio.Future[Any],
    transport: asyncio.SubprocessTransport,
) -> None:
    """After the plugin's session was ended: its pipes read to their end (closed on our side
    after _REAP_SECONDS, when a process that left the session still holds them), its exit
    status collected, its transport closed (so that nothing is left for the garbage collector
    to close on an event loop that is gone)."""
    try:
        done, _ = await asyncio.wait({readers}, timeout=_REAP_SECONDS)
        if not done:
            readers.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await readers
            transport.close()  # our ends of the pipes; the plugin was killed already
        await asyncio.wait_for(process.wait(), _REAP_SECONDS)
    except asyncio.TimeoutError:
        pass  # its exit status was not collected in time: the transport is closed below
    finally:
        transport.close()


def _json_kind(value: object) -> str:
    return "array" if isinstance(value, list) else "string" if isinstance(value, str) else "value"


def exec_plugin_running(http: httpx2.AsyncClient) -> str | None:
    """The exec plugin of ``http`` while it runs (for the message of a deadline), else None."""
    authenticator = http.auth
    if isinstance(authenticator, ExecAuth) and authenticator.running:
        return authenticator.describe()
    return None
