"""read_pool_status and its asyncio twin: create a ResourcePoolStatusRequest, wait, read, delete.

Facts that shape it (README, "Resource pool status"; tests/data/pool-status/):

* The request is cluster-scoped (``resource.k8s.io/v1alpha3``); kube-controller-manager writes
  its status once, within milliseconds when it runs with the ``DRAResourcePoolStatus`` gate,
  never when it does not, and not while a pool in the window is incomplete. So the wait is a
  watch with ``fieldSelector=metadata.name=<name>`` from the create's resourceVersion, bounded
  by the timeout.
* Nothing may be left behind: the request is deleted after the answer, after a timeout, an
  error, a cancellation or Ctrl-C (unless ``keep=True``). The create and the delete are
  shielded from cancellation: a create whose answer is still on its way is waited for, so
  that the request it made is known and deleted.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from dra_metadata._model._errors import KubeAPIError
from dra_metadata.kube._deadline import REQUEST_TIMEOUT_SECONDS
from dra_metadata.kube._errors import _server_status, decode_object
from dra_metadata.kube._http import Api, connect
from dra_metadata.kube._pool_errors import (
    COLLECTION_PATH,
    GROUP,
    KIND,
    VERSION,
    check_driver,
    check_limit,
    check_pool,
    check_timeout,
    deleted_meanwhile,
    failed,
    no_answer,
    not_served,
    refusal,
    request_target,
    unreachable,
    with_cleanup,
)
from dra_metadata.kube._pool_mapping import (
    FAILED,
    answered,
    conditions_of,
    pool_status_result_from_object,
    request_name,
)
from dra_metadata.kube._pool_models import PoolStatusResult
from dra_metadata.kube._sync import run

if TYPE_CHECKING:
    import httpx2
    from lightkube import AsyncClient, Client

_T = TypeVar("_T")
GENERATE_NAME = "dra-metadata-"
FIELD_MANAGER = "dra-metadata"
WATCH_SECONDS = 290
_RETRY_FIRST_SECONDS = 0.05
_RETRY_MAX_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class _Query:
    """The checked arguments of one read."""

    driver: str
    pool: str | None
    limit: int | None
    timeout: float | None
    keep: bool

    @classmethod
    def checked(
        cls, driver: object, pool: object, limit: object, timeout: object, keep: object
    ) -> _Query:
        if not isinstance(keep, bool):
            raise TypeError(f"keep must be True or False, not {keep!r}")
        return cls(
            check_driver(driver), check_pool(pool), check_limit(limit), check_timeout(timeout), keep
        )

    def body(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"driver": self.driver}
        if self.pool is not None:
            spec["poolName"] = self.pool
        if self.limit is not None:
            spec["limit"] = self.limit
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": KIND,
            "metadata": {"generateName": GENERATE_NAME},
            "spec": spec,
        }


class _Gone(Exception):  # noqa: N818 - control flow inside the wait, never raised out
    """The watch's resourceVersion is gone (410): read the request again."""


class _Retry(Exception):  # noqa: N818 - control flow inside the wait, never raised out
    """A transient failure (dropped connection, 5xx, 429): watch again after a back-off."""


async def _send(
    api: Api, http: httpx2.AsyncClient, verb: str, name: str, method: str, path: str, **options: Any
) -> httpx2.Response:
    import httpx2  # noqa: PLC0415
    from lightkube.core.exceptions import ConfigError  # noqa: PLC0415

    try:
        return await http.request(method, path, **options)
    except httpx2.RequestError as error:
        raise unreachable(verb, name, api.server, error) from None
    except ConfigError as error:  # the token file or exec plugin, read when sending
        raise KubeAPIError(f"cannot authenticate to {api.server}: {error}") from None


async def _server_version(http: httpx2.AsyncClient) -> str | None:
    """``gitVersion`` of /version (readable by anyone by default), None when unknown."""
    try:
        answer = await http.get("/version")
        version = orjson.loads(answer.content).get("gitVersion") if answer.is_success else None
    except Exception:  # noqa: BLE001 - only to word a message: any failure is "unknown"
        return None
    return version if isinstance(version, str) else None


async def _create(api: Api, http: httpx2.AsyncClient, query: _Query) -> Mapping[str, Any]:
    answer = await _send(
        api,
        http,
        "create",
        "",
        "POST",
        COLLECTION_PATH,
        params={"fieldManager": FIELD_MANAGER},
        content=orjson.dumps(query.body()),
        headers={"Content-Type": "application/json"},
    )
    if answer.status_code == 404:
        reason, message = _server_status(answer.content)
        said = f"HTTP 404{' ' + reason if reason else ''}{': ' + message if message else ''}"
        raise not_served(api.server, said, await _server_version(http))
    if answer.status_code not in {200, 201}:
        raise refusal("create", answer.status_code, answer.content, "", api.server)
    return decode_object(request_target(), "create", answer.content)


async def _get(api: Api, http: httpx2.AsyncClient, name: str) -> Mapping[str, Any]:
    answer = await _send(api, http, "get", name, "GET", f"{COLLECTION_PATH}/{name}")
    if answer.status_code == 404:
        raise deleted_meanwhile(name)
    if answer.status_code == 429 or answer.status_code >= 500:
        raise _Retry(refusal("get", answer.status_code, answer.content, name, api.server).message)
    if answer.status_code != 200:
        raise refusal("get", answer.status_code, answer.content, name, api.server)
    return decode_object(request_target(name), "get", answer.content)


def _version(obj: Mapping[str, Any]) -> str | None:
    metadata = obj.get("metadata")
    version = metadata.get("resourceVersion") if isinstance(metadata, Mapping) else None
    return version if isinstance(version, str) and version else None


@dataclass
class _Watch:
    """One request's watch, from a resourceVersion, until the request has a status."""

    api: Api
    http: httpx2.AsyncClient
    name: str
    version: str | None

    async def answer(self) -> Mapping[str, Any]:
        """The request once answered; watched again after a drop, read again after 410."""
        from lightkube.core.exceptions import ConfigError  # noqa: PLC0415

        try:
            return await self._answer()
        except ConfigError as error:  # the token file or exec plugin, read when resuming
            raise KubeAPIError(f"cannot authenticate to {self.api.server}: {error}") from None

    async def _answer(self) -> Mapping[str, Any]:
        import httpx2  # noqa: PLC0415

        delay = _RETRY_FIRST_SECONDS
        while True:
            try:
                if self.version is None:
                    obj = await _get(self.api, self.http, self.name)
                    if answered(obj):
                        return obj
                    self.version = _version(obj)
                found = await self._events()
                if found is not None:
                    return found
                delay = _RETRY_FIRST_SECONDS
                continue
            except _Gone:
                self.version = None
                continue
            except _Retry:
                pass
            except httpx2.RequestError:  # the connection dropped mid-watch
                pass
            except KubeAPIError as error:
                if error.status is not None or error.verb != "get":
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX_SECONDS)

    async def _events(self) -> Mapping[str, Any] | None:
        """Watch until an answered request (returned) or the end of the stream (None)."""
        import httpx2  # noqa: PLC0415

        params = {
            "watch": "true",
            "fieldSelector": f"metadata.name={self.name}",
            "resourceVersion": str(self.version),
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(WATCH_SECONDS),
        }
        timeout = httpx2.Timeout(REQUEST_TIMEOUT_SECONDS, read=WATCH_SECONDS + 30.0)
        async with self.http.stream(
            "GET", COLLECTION_PATH, params=params, timeout=timeout
        ) as stream:
            if stream.status_code != 200:
                body = await stream.aread()
                if stream.status_code == 410:
                    raise _Gone
                error = refusal("watch", stream.status_code, body, self.name, self.api.server)
                if stream.status_code == 429 or stream.status_code >= 500:
                    raise _Retry(error.message)
                raise error
            async for line in stream.aiter_lines():
                if line.strip():
                    found = self._event(line)
                    if found is not None:
                        return found
        return None

    def _event(self, line: str) -> Mapping[str, Any] | None:
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise _Retry("the watch sent a line that is not JSON") from None
        kind = event.get("type") if isinstance(event, dict) else None
        obj = event.get("object") if isinstance(event, dict) else None
        if not isinstance(obj, dict):
            raise _Retry("the watch sent an event without an object")
        if kind == "ERROR":
            code = obj.get("code")
            if code == 410:
                raise _Gone
            code = code if isinstance(code, int) else 500
            body = orjson.dumps(obj)
            if code == 429 or code >= 500:
                raise _Retry(str(obj.get("message")))
            raise refusal("watch", code, body, self.name, self.api.server)
        if kind == "DELETED":
            raise deleted_meanwhile(self.name)
        version = _version(obj)
        if version is not None:  # events and bookmarks
            self.version = version
        if kind in {"ADDED", "MODIFIED"} and answered(obj):
            metadata = obj.get("metadata")
            if isinstance(metadata, Mapping) and metadata.get("name") == self.name:
                return obj
        return None


async def _to_the_end(task: asyncio.Future[_T]) -> bool:
    """Wait for ``task`` however often this is cancelled meanwhile; whether it was."""
    cancelled = False
    while not task.done():
        try:  # asyncio.wait never cancels what it waits for
            await asyncio.wait([task])
        except asyncio.CancelledError:  # noqa: PERF203 - at most once per cancellation
            cancelled = True
    return cancelled


async def _delete(api: Api, http: httpx2.AsyncClient, name: str) -> str | None:
    """Delete the request; None when done (or already gone), else what went wrong."""
    try:
        answer = await _send(api, http, "delete", name, "DELETE", f"{COLLECTION_PATH}/{name}")
    except KubeAPIError as error:
        return error.message
    if answer.status_code in {200, 202, 404}:
        return None
    return refusal("delete", answer.status_code, answer.content, name, api.server).message


@dataclass(frozen=True, slots=True)
class _Left:
    """What became of the request after the read: deleted, kept, or left behind (and why)."""

    told: str
    left_behind: bool
    cancelled: bool = False


async def _cleanup(api: Api, http: httpx2.AsyncClient, name: str) -> _Left:
    """Delete, shielded from cancellation (``cancelled``: it was cancelled meanwhile)."""
    task = asyncio.ensure_future(_delete(api, http, name))
    cancelled = await _to_the_end(task)
    problem = task.result()
    if problem is None:
        return _Left(f'resourcepoolstatusrequest "{name}" was deleted', False, cancelled)
    return _Left(
        f'resourcepoolstatusrequest "{name}" could not be deleted ({problem}): delete it with '
        f"`kubectl delete resourcepoolstatusrequest {name}` (kube-controller-manager deletes "
        "answered requests after 1 h, unanswered ones after 24 h)",
        True,
        cancelled,
    )


async def _leave(api: Api, http: httpx2.AsyncClient, name: str, keep: bool) -> _Left:
    if keep:
        return _Left(f'resourcepoolstatusrequest "{name}" was kept (keep=True)', False)
    return await _cleanup(api, http, name)


async def _created(api: Api, http: httpx2.AsyncClient, query: _Query) -> Mapping[str, Any]:
    """The create, shielded: when cancelled meanwhile, its request is deleted, then re-raised."""
    task = asyncio.ensure_future(_create(api, http, query))
    if not await _to_the_end(task):
        return task.result()
    if task.exception() is None:
        await _leave(api, http, request_name(task.result()), query.keep)
    raise asyncio.CancelledError


async def _answer(
    api: Api, http: httpx2.AsyncClient, query: _Query, created: Mapping[str, Any], started: float
) -> PoolStatusResult:
    """Wait for the controller's answer to the request ``created`` and read it."""
    name = request_name(created)
    obj = created
    if not answered(created):
        watch = _Watch(api, http, name, _version(created))
        remaining = None
        if query.timeout is not None:
            remaining = max(0.0, query.timeout - (time.monotonic() - started))
        try:
            obj = await asyncio.wait_for(watch.answer(), remaining)
        except asyncio.TimeoutError:
            raise no_answer(name, query.driver, query.pool, query.timeout) from None
    result = pool_status_result_from_object(obj)
    for condition in conditions_of(obj):
        if condition.type == FAILED and condition.status == "True":
            raise failed(name, condition.reason, condition.message)
    return result


async def aread_pool_status_with(api: Api, query: _Query) -> PoolStatusResult:
    """The body of read_pool_status / aread_pool_status."""
    started = time.monotonic()
    async with api.async_client() as http:
        created = await _created(api, http, query)
        name = request_name(created)
        try:
            result = await _answer(api, http, query, created, started)
        except KubeAPIError as error:
            left = await _leave(api, http, name, query.keep)
            if left.cancelled:
                raise asyncio.CancelledError from error
            raise with_cleanup(error, left.told) from None
        except BaseException:  # cancelled, Ctrl-C: delete, then go on
            left = await _leave(api, http, name, query.keep)
            if left.left_behind:
                warnings.warn(left.told, RuntimeWarning, stacklevel=2)
            raise
        left = await _leave(api, http, name, query.keep)
        if left.cancelled:
            raise asyncio.CancelledError
        if left.left_behind:
            raise KubeAPIError(
                f"the pool status was read, but {left.told}",
                verb="delete",
                resource="resourcepoolstatusrequests",
                name=name,
            )
        return result


def read_pool_status(
    driver: str,
    *,
    pool: str | None = None,
    limit: int | None = None,
    timeout: float | None = 30.0,
    keep: bool = False,
    client: Client | AsyncClient | None = None,
) -> PoolStatusResult:
    """How many devices each resource pool of ``driver`` has, has allocated and has free.

    Creates a ResourcePoolStatusRequest (``resource.k8s.io/v1alpha3``, alpha in Kubernetes
    1.36; name ``dra-metadata-<random>``), waits with a watch until kube-controller-manager
    writes its status, returns it, and deletes the request (also after a timeout, an error, a
    cancellation or Ctrl-C) unless ``keep=True``. ``pool`` asks for that pool only (``rack-1``
    or ``rack-1/node-7``); ``limit`` (1 to 1000, the server's default 100) caps the number of
    pools returned: `PoolStatusResult.truncated` says when more matched. ``timeout`` (seconds,
    None: no limit) bounds the whole call. ``client`` is a lightkube client whose
    configuration is used (default: in-cluster, else the kubeconfig).

    Needs ``create``, ``get``, ``watch`` and ``delete`` on ``resourcepoolstatusrequests``
    (examples/kubernetes/pool-status-rbac.yaml). Raises ValueError (InvalidNameError for the
    names) naming the argument before anything is sent, and KubeAPIError when the API is not
    served (404), the request is refused (401, 403), no answer comes within ``timeout``
    (kube-controller-manager without its ``DRAResourcePoolStatus`` gate, or an incomplete
    pool), or the controller reports ``Failed``.

    >>> result = read_pool_status("gpu.example.com")  # doctest: +SKIP
    >>> [(p.pool_name, p.available_devices) for p in result.pools]  # doctest: +SKIP
    [('node-a', 1), ('node-b', 1)]
    """
    query = _Query.checked(driver, pool, limit, timeout, keep)
    api = connect(client)
    return run(lambda: aread_pool_status_with(api, query))


async def aread_pool_status(
    driver: str,
    *,
    pool: str | None = None,
    limit: int | None = None,
    timeout: float | None = 30.0,
    keep: bool = False,
    client: Client | AsyncClient | None = None,
) -> PoolStatusResult:
    """The asyncio twin of read_pool_status: ``await aread_pool_status("gpu.example.com")``.

    A cancelled call deletes its request before the cancellation goes on (the delete is
    shielded; it takes at most one request timeout).
    """
    query = _Query.checked(driver, pool, limit, timeout, keep)
    api = connect(client)
    return await aread_pool_status_with(api, query)
