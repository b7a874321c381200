"""watch_claim_status and its asyncio twin: a claim's status now and at every change.

The watch itself is in _stream; this module resolves which claim (a template claim's name is
read from the pod), keeps the clock (timeout, stop_event) and offers the sync twin, which runs
the asyncio code on an event loop of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dra_metadata.kube._deadline import REQUEST_TIMEOUT_SECONDS, Deadline
from dra_metadata.kube._errors import Target, claim_target, deadline_error, pod_target
from dra_metadata.kube._http import Api, aget_object, connect
from dra_metadata.kube._identity import check_name, resolve_pod_name
from dra_metadata.kube._mapping import generated_claim_name
from dra_metadata.kube._models import ClaimStatus
from dra_metadata.kube._stream import WatchState, claim_updates
from dra_metadata.kube._sync import iterate

if TYPE_CHECKING:
    import httpx2
    from lightkube import AsyncClient, Client

    from dra_metadata import StopEvent
    from dra_metadata._model._errors import KubeAPIError

STOP_CHECK_SECONDS = 0.1
"""A stop_event is looked at least this often."""


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """Which claim is watched: by name, or by a pod's claim name (then resolved from the pod)."""

    claim_name: str
    template: bool
    pod_name: str | None
    namespace: str | None

    @classmethod
    def checked(
        cls, claim_name: str, *, template: bool, pod_name: str | None, namespace: str | None
    ) -> ClaimRef:
        if template:
            check_name("pod_claim_name", claim_name, label=True)
        else:
            check_name("claim_name", claim_name)
        if pod_name is not None:
            if not template:
                raise ValueError(
                    "pod_name only applies to a claim made from a template (template=True), "
                    "whose name is read from that pod; a claim referenced by name is watched by "
                    "its own name"
                )
            check_name("pod_name", pod_name)
        if namespace is not None:
            check_name("namespace", namespace, label=True)
        return cls(claim_name, template, pod_name, namespace)

    async def target(
        self, api: Api, http: httpx2.AsyncClient, deadline: Deadline | None = None
    ) -> Target:
        """The claim to watch (for a template claim: its generated name, read from the pod by
        ``deadline``; default: that of a request)."""
        namespace = api.namespace(self.namespace)
        if not self.template:
            return claim_target(self.claim_name, namespace)
        pod = pod_target(resolve_pod_name(self.pod_name), namespace)
        name = generated_claim_name(await aget_object(api, http, pod, deadline), self.claim_name)
        return claim_target(name, namespace)


def checked_timeout(timeout: float | None) -> float | None:
    if timeout is not None and not timeout >= 0:
        raise ValueError(f"timeout must be None (no limit) or >= 0 seconds, not {timeout!r}")
    return timeout


class Clock:
    """A deadline and a stop event, as the watches and waits look at them.

    An asyncio.Event of the caller's loop (``awaitable``: the async twins) is awaited
    (``awaited_stop``); any other stop_event is looked at every STOP_CHECK_SECONDS.
    """

    def __init__(
        self, timeout: float | None, stop_event: StopEvent | None, *, awaitable: bool
    ) -> None:
        self.timeout = timeout
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.stop_event = stop_event
        self.awaited_stop = (
            stop_event if awaitable and isinstance(stop_event, asyncio.Event) else None
        )

    def stopped(self) -> bool:
        return self.stop_event is not None and self.stop_event.is_set()

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def wake(self, also: float | None = None) -> float | None:
        """Seconds until something must be looked at: deadline, stop event, ``also``."""
        candidates = [] if also is None else [also]
        if self.deadline is not None:
            candidates.append(max(0.0, self.deadline - time.monotonic()))
        if self.stop_event is not None and self.awaited_stop is None:
            candidates.append(STOP_CHECK_SECONDS)
        return min(candidates) if candidates else None


async def awatch_statuses(
    api: Api, ref: ClaimRef, timeout: float | None, stop_event: StopEvent | None, *, awaitable: bool
) -> AsyncIterator[ClaimStatus]:
    """The body of watch_claim_status / awatch_claim_status (``awaitable``: the caller's loop).

    A ``timeout`` that passes before the claim's status was read (an API server that does not
    answer, an exec plugin still running) is a KubeAPIError, as the request's own deadline
    would be, not the quiet end of a watch that had nothing to report.
    """
    clock = Clock(timeout, stop_event, awaitable=awaitable)
    shorter = timeout is not None and timeout < REQUEST_TIMEOUT_SECONDS
    async with api.async_client() as http:
        target = await ref.target(api, http, Deadline.after(timeout or 0.0) if shorter else None)
        updates = claim_updates(
            api, http, target, state=WatchState(), wake=clock.wake, stop=clock.awaited_stop
        )
        started = False
        try:
            async for status in updates:
                if clock.stopped():
                    return
                if status is not None:
                    started = True
                    yield status
                if clock.expired():
                    if not started:
                        raise _not_started(api, http, target, timeout or 0.0)
                    return
        finally:
            await updates.aclose()


def _not_started(
    api: Api, http: httpx2.AsyncClient, target: Target, timeout: float
) -> KubeAPIError:
    """The error of a watch whose ``timeout`` passed before the claim's status was read."""
    from dra_metadata.kube._credentials import exec_plugin_running  # noqa: PLC0415

    plugin = exec_plugin_running(http)
    return deadline_error(target, "get", api.server, timeout, plugin, adjustable=True)


def watch_claim_status(
    claim_name: str,
    *,
    template: bool = False,
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
    timeout: float | None = None,
    stop_event: StopEvent | None = None,
) -> Iterator[ClaimStatus]:
    """Yield the claim's ClaimStatus now and each time its status changes (a Kubernetes watch).

    ``template=True`` names a claim made from a template by its pod claim name (this pod's,
    unless ``pod_name``). The watch is resumed from the last resourceVersion after a dropped
    connection and starts over (a GET) when that version is gone (410), so no change is
    missed; a status that changed meanwhile is yielded once. Ends after ``timeout`` seconds,
    when ``stop_event`` is set (looked at every 0.1 s) or when the caller stops iterating.
    Needs ``get`` and ``watch`` on ``resourceclaims`` (and ``get`` on ``pods`` for a template
    claim). Raises MetadataNotFoundError when the claim does not exist or is deleted, and
    KubeAPIError when the API refuses or cannot be reached at the start, also when ``timeout``
    passes before the claim's status could be read.
    """
    ref = ClaimRef.checked(claim_name, template=template, pod_name=pod_name, namespace=namespace)
    checked_timeout(timeout)
    api = connect(client)
    return iterate(lambda: awatch_statuses(api, ref, timeout, stop_event, awaitable=False))


def awatch_claim_status(
    claim_name: str,
    *,
    template: bool = False,
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
    timeout: float | None = None,
    stop_event: StopEvent | None = None,
) -> AsyncIterator[ClaimStatus]:
    """The asyncio twin of watch_claim_status: ``async for status in awatch_claim_status(...)``.

    An asyncio.Event as ``stop_event`` is awaited: the watch ends as soon as it is set.
    """
    ref = ClaimRef.checked(claim_name, template=template, pod_name=pod_name, namespace=namespace)
    checked_timeout(timeout)
    api = connect(client)
    return awatch_statuses(api, ref, timeout, stop_event, awaitable=True)
