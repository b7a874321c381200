"""The watch of one object (a claim, a pod): events -> values, resumed, started over on 410.

Facts that shape it (see docs/guides/kubernetes-api.md, "Watching"):

* The watch is a GET on the collection with ``fieldSelector=metadata.name=<claim>``: RBAC
  authorizes it as a request for that one name. The server ends each watch after
  ``timeoutSeconds`` (or its own limit); it is resumed from the last resourceVersion seen
  (events and bookmarks), so no change is missed.
* A connection that drops (the API server restarts) is resumed the same way, after a short
  back-off; after a restart the new server answers an old resourceVersion with an ERROR event
  carrying 410 Gone (on an HTTP 200 response): then the claim is read again (GET) and watched
  from there, and the status is reported if it changed while nobody was watching.
* A refused watch (401, 403) is an HTTP answer, never an event: it is raised, not retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import orjson

from dra_metadata._model._errors import KubeAPIError, MetadataNotFoundError
from dra_metadata.kube._deadline import REQUEST_TIMEOUT_SECONDS, Deadline
from dra_metadata.kube._errors import (
    CredentialError,
    Target,
    deadline_error,
    status_error,
    status_error_from,
    transport_error,
)
from dra_metadata.kube._http import Api, aget_object, within
from dra_metadata.kube._mapping import claim_status_from_object
from dra_metadata.kube._models import ClaimStatus

if TYPE_CHECKING:
    import httpx2

_T = TypeVar("_T")

WATCH_SECONDS = 290
"""How long the server keeps one watch open before it is resumed (client-go: 5 to 10 min)."""
_RETRY_FIRST_SECONDS = 0.05
_RETRY_MAX_SECONDS = 2.0


@dataclass
class WatchState:
    """What a wait reports besides the status: why the watch cannot see changes right now."""

    problem: str | None = None


class _Restart(Exception):  # noqa: N818 - control flow inside the reader, never raised out
    """The resourceVersion is gone (410): read the claim again and watch from there."""


class _Retry(Exception):  # noqa: N818 - control flow inside the reader, never raised out
    """A transient failure (dropped connection, 5xx, 429): resume after a back-off."""


@dataclass
class _Cursor:
    """Where the watch is: the last resourceVersion seen (None: read the claim again)."""

    resource_version: str | None = None


WATCH_GRACE_SECONDS = 30.0
"""How long past its timeoutSeconds a watch may stay open before it is ended and resumed."""


async def _open(
    http: httpx2.AsyncClient, target: Target, params: dict[str, str]
) -> tuple[httpx2.Response, bytes | None]:
    """The watch's answer, streamed when it is 200; else the answer and its whole body."""
    import httpx2  # noqa: PLC0415

    timeout = httpx2.Timeout(REQUEST_TIMEOUT_SECONDS, read=WATCH_SECONDS + WATCH_GRACE_SECONDS)
    request = http.build_request("GET", target.collection_path, params=params, timeout=timeout)
    answer = await http.send(request, stream=True)
    if answer.status_code == 200:
        return answer, None
    try:
        return answer, await answer.aread()
    finally:
        await answer.aclose()


def _refused(target: Target, code: int, body: bytes) -> Exception:
    """What an answer other than 200 to a watch means: start over, retry, or an error."""
    if code == 410:
        return _Restart()
    if code == 429 or code >= 500:
        return _Retry(status_error(target, "watch", code, body).message)
    return status_error(target, "watch", code, body)


async def _read_events(
    api: Api,
    http: httpx2.AsyncClient,
    target: Target,
    cursor: _Cursor,
    on_object: Callable[[Mapping[str, Any]], None],
) -> None:
    """Watch from the cursor until the server ends the stream, moving the cursor along.

    Establishing the watch (credentials, connection, the answer's head) has the deadline of a
    request; the stream then has until the server's timeoutSeconds and a grace period.
    """
    import httpx2  # noqa: PLC0415

    from dra_metadata.kube._credentials import exec_plugin_running  # noqa: PLC0415

    params = {
        "watch": "true",
        "fieldSelector": f"metadata.name={target.name}",
        "resourceVersion": str(cursor.resource_version),
        "allowWatchBookmarks": "true",
        "timeoutSeconds": str(WATCH_SECONDS),
    }
    opened = time.monotonic()
    establish = Deadline.after(REQUEST_TIMEOUT_SECONDS)

    def not_established() -> KubeAPIError:
        plugin = exec_plugin_running(http)
        return deadline_error(target, "watch", api.server, establish.seconds, plugin)

    try:
        answer, body = await within(establish, _open(http, target, params), not_established)
    except httpx2.TimeoutException:
        raise not_established() from None
    if body is not None:
        raise _refused(target, answer.status_code, body)

    async def events() -> None:
        async for line in answer.aiter_lines():
            if line.strip():
                _on_event(target, line, cursor, on_object)

    stream = Deadline.after(WATCH_SECONDS + WATCH_GRACE_SECONDS)

    def overdue() -> _Retry:
        return _Retry(
            f"the watch of {target.describe()} was still open {stream.seconds:g} s after it "
            f"began, though the server was asked to end it after {WATCH_SECONDS} s"
        )

    try:
        await within(stream, events(), overdue)
    finally:
        await answer.aclose()
    if time.monotonic() - opened < 1.0:  # asked for WATCH_SECONDS: something cut it short
        raise _Retry(f"the watch of {target.describe()} was ended at once by the server")


def _on_event(
    target: Target,
    line: str,
    cursor: _Cursor,
    on_object: Callable[[Mapping[str, Any]], None],
) -> None:
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise _Retry(f"the watch of {target.describe()} sent a line that is not JSON") from None
    kind = event.get("type") if isinstance(event, dict) else None
    obj = event.get("object") if isinstance(event, dict) else None
    if not isinstance(obj, dict):
        raise _Retry(f"the watch of {target.describe()} sent an event without an object")
    if kind == "ERROR":
        code = obj.get("code")
        if code == 410:
            raise _Restart
        code = code if isinstance(code, int) else 500
        if code == 429 or code >= 500:
            raise _Retry(f"the watch of {target.describe()} failed: {obj.get('message')}")
        raise status_error_from(
            target, "watch", code, str(obj.get("reason") or ""), str(obj.get("message") or "")
        )
    if kind == "DELETED":
        raise MetadataNotFoundError(f"{target.describe()} was deleted", path=None)
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return
    if kind in {"ADDED", "MODIFIED"} and metadata.get("name") == target.name:
        on_object(obj)
    version = metadata.get("resourceVersion")
    if isinstance(version, str) and version:  # events and bookmarks
        cursor.resource_version = version


@dataclass
class _Reader(Generic[_T]):
    """The list-and-watch loop: puts each changed value of the object, or the error that ends
    it (``convert`` makes the value; values that compare equal are put once)."""

    api: Api
    http: httpx2.AsyncClient
    target: Target
    state: WatchState
    put: Callable[[_T | BaseException], None]
    convert: Callable[[Mapping[str, Any]], _T]
    last: _T | None = None
    started: bool = False

    def on_object(self, obj: Mapping[str, Any]) -> None:
        value = self.convert(obj)
        if value != self.last:
            self.put(value)
        self.last = value

    async def run(self) -> None:
        cursor = _Cursor()
        delay = _RETRY_FIRST_SECONDS
        try:
            while True:
                problem = await self._step(cursor)
                self.state.problem = problem
                if problem is None:
                    delay = _RETRY_FIRST_SECONDS
                    continue
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RETRY_MAX_SECONDS)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - handed to the consumer, which raises it
            self.put(error)

    async def _step(self, cursor: _Cursor) -> str | None:
        """Read (if needed) and watch until the stream ends; a transient problem, or None."""
        import httpx2  # noqa: PLC0415

        try:
            if cursor.resource_version is None:  # the start, or after 410 Gone
                obj = await aget_object(self.api, self.http, self.target)
                self.on_object(obj)
                cursor.resource_version = _resource_version(self.target, obj)
                self.started = True
            await _read_events(self.api, self.http, self.target, cursor, self.on_object)
        except _Restart:
            cursor.resource_version = None
        except _Retry as retry:
            return str(retry)
        except httpx2.RequestError as error:  # no answer: transport, decoding
            return transport_error(self.target, "watch", self.api.server, error).message
        except KubeAPIError as error:
            # A GET without an answer is retried, but not at the start: a wrong address or a
            # TLS failure must not look like a claim that is not ready yet. Credentials that
            # cannot be had (an exec plugin that fails) end the watch.
            if not self.started or error.status is not None or isinstance(error, CredentialError):
                raise
            return error.message
        return None


def _resource_version(target: Target, obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    version = metadata.get("resourceVersion") if isinstance(metadata, Mapping) else None
    if not isinstance(version, str) or not version:
        raise KubeAPIError(
            f"the API server returned {target.describe()} without metadata.resourceVersion"
        )
    return version


def claim_updates(
    api: Api,
    http: httpx2.AsyncClient,
    target: Target,
    *,
    state: WatchState,
    wake: Callable[[], float | None],
    stop: asyncio.Event | None = None,
) -> AsyncGenerator[ClaimStatus | None, None]:
    """The claim's status at the start and after each change; None after ``wake()`` seconds
    without one (None from wake: no limit), or as soon as ``stop`` is set, so that callers
    can look at clocks and events."""
    return object_updates(
        api, http, target, claim_status_from_object, state=state, wake=wake, stop=stop
    )


async def object_updates(
    api: Api,
    http: httpx2.AsyncClient,
    target: Target,
    convert: Callable[[Mapping[str, Any]], _T],
    *,
    state: WatchState,
    wake: Callable[[], float | None],
    stop: asyncio.Event | None = None,
) -> AsyncGenerator[_T | None, None]:
    """``convert`` of the object at the start and after each change of that value (as
    claim_updates: None when ``wake()`` seconds passed or ``stop`` is set)."""
    queue: asyncio.Queue[_T | BaseException] = asyncio.Queue()
    reader = asyncio.ensure_future(
        _Reader(api, http, target, state, queue.put_nowait, convert).run()
    )
    getter: asyncio.Future[_T | BaseException] | None = None
    stopper = None if stop is None else asyncio.ensure_future(stop.wait())
    try:
        while True:
            if getter is None:  # kept across time-outs: cancelling a get could lose an item
                getter = asyncio.ensure_future(queue.get())
            awaited: set[asyncio.Future[Any]] = {getter}
            if stopper is not None and not stopper.done():
                awaited.add(stopper)
            done, _ = await asyncio.wait(
                awaited, timeout=wake(), return_when=asyncio.FIRST_COMPLETED
            )
            if getter not in done:
                yield None
                continue
            item = getter.result()
            getter = None
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        for task in (reader, getter, stopper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
