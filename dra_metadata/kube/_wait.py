"""Waiting on a claim watch until a condition on its DeviceMetadata holds (source "api").

The same notion of "ready" as the file waits: a Condition takes the DeviceMetadata of one
request (ClaimStatus.to_metadata) and returns None or True when ready, else the reason (or
False); the reason ends up in the same WaitTimeoutError. A claim that is not allocated yet is
not ready, whatever the condition says (as a request directory without files is not).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dra_metadata._model._conditions import Verdict, checked_condition, checked_predicate
from dra_metadata._model._errors import WaitTimeoutError, shown_names
from dra_metadata._model._metadata import DeviceMetadata
from dra_metadata._model._models import Device, camel
from dra_metadata.kube._http import Api, connect
from dra_metadata.kube._identity import check_name
from dra_metadata.kube._models import ClaimStatus
from dra_metadata.kube._stream import WatchState, claim_updates
from dra_metadata.kube._sync import run
from dra_metadata.kube._watch import ClaimRef, Clock, checked_timeout

if TYPE_CHECKING:
    from lightkube import AsyncClient, Client

    from dra_metadata import Condition, StopEvent

_NETWORK_FIELDS = ("interface_name", "ips", "hardware_address")


def network_data_condition(require: tuple[str, ...]) -> Verdict:
    """wait_for_network_data's condition, with reasons that speak of the claim status."""
    unknown = [name for name in require if name not in _NETWORK_FIELDS]
    if unknown:
        raise ValueError(f"unknown network data field(s) {unknown}; known: {_NETWORK_FIELDS}")

    def condition(metadata: DeviceMetadata) -> str | None:
        if not metadata.devices:
            return "claim status has no allocated devices"
        for device in metadata.devices:
            data = device.network_data
            if data is None:
                return f"claim status has no networkData for device {device.name}"
            missing = [f"networkData.{camel(name)}" for name in require if not getattr(data, name)]
            if missing:
                return f"claim status has no {' and no '.join(missing)} for device {device.name}"
        return None

    return condition


def device_condition(predicate: Callable[[Device], bool]) -> Verdict:
    """wait_for's condition (every device satisfies ``predicate``; a str answer is a
    TypeError), for the claim status."""
    predicate = checked_predicate(predicate)

    def condition(metadata: DeviceMetadata) -> str | None:
        if not metadata.devices:
            return "claim status has no allocated devices"
        failing = [device.name for device in metadata.devices if not predicate(device)]
        if failing:
            return f"claim status: device {shown_names(failing)} not ready"
        return None

    return condition


def _where(status: ClaimStatus) -> str:
    return (
        f"resourceclaim {status.namespace}/{status.name}, resourceVersion {status.resource_version}"
    )


@dataclass(frozen=True, slots=True)
class _Wait:
    """The checked options of one wait."""

    condition: Verdict
    ref: ClaimRef
    request_name: str
    driver: str | None
    timeout: float | None
    stop_event: StopEvent | None
    progress: Callable[[str], None] | None
    progress_interval: float

    @classmethod
    def checked(
        cls,
        condition: Condition,
        claim_name: str,
        request_name: str,
        *,
        template: bool,
        driver: str | None,
        pod_name: str | None,
        namespace: str | None,
        timeout: float | None,
        stop_event: StopEvent | None,
        progress: Callable[[str], None] | None,
        progress_interval: float,
    ) -> _Wait:
        ref = ClaimRef.checked(
            claim_name, template=template, pod_name=pod_name, namespace=namespace
        )
        base, separator, subrequest = request_name.partition("/")
        check_name("request_name", base, label=True)
        if separator:
            check_name("request_name", subrequest, label=True)
        if driver is not None:
            check_name("driver", driver)
        checked_timeout(timeout)
        if not progress_interval > 0:
            raise ValueError(f"progress_interval must be positive, not {progress_interval!r}")
        return cls(
            checked_condition(condition),
            ref,
            request_name,
            driver,
            timeout,
            stop_event,
            progress,
            progress_interval,
        )

    async def run(self, api: Api, *, awaitable: bool) -> DeviceMetadata:
        """The wait; ``awaitable``: an asyncio.Event stop_event belongs to this loop."""
        clock = Clock(self.timeout, self.stop_event, awaitable=awaitable)
        state = WatchState()
        next_progress = time.monotonic() + self.progress_interval
        metadata: DeviceMetadata | None = None
        reason = "the claim status was not read yet"

        def wake() -> float | None:
            if self.progress is None:
                return clock.wake()
            return clock.wake(max(0.0, next_progress - time.monotonic()))

        async with api.async_client() as http:
            target = await self.ref.target(api, http)
            updates = claim_updates(
                api, http, target, state=state, wake=wake, stop=clock.awaited_stop
            )
            try:
                async for status in updates:
                    if status is not None:
                        metadata = status.to_metadata(self.request_name, driver=self.driver)
                        found = (
                            "claim is not allocated yet (no status.allocation)"
                            if not status.allocated
                            else self.condition(metadata)
                        )
                        if found is None:
                            return metadata
                        reason = f"{found} ({_where(status)})"
                    full = "; ".join(filter(None, [reason, state.problem]))
                    stopped = clock.stopped()
                    if stopped or clock.expired():
                        raise WaitTimeoutError(
                            ("stopped; " if stopped else "") + full,
                            metadata=metadata,
                            path=None,
                            timeout=self.timeout,
                        )
                    if self.progress is not None and time.monotonic() >= next_progress:
                        self.progress(full)
                        next_progress = time.monotonic() + self.progress_interval
            finally:
                await updates.aclose()
        raise AssertionError("the claim watch ended")  # pragma: no cover - it never ends


@dataclass(frozen=True, slots=True)
class ApiWait:
    """A wait on the API, its options checked and its configuration loaded: run it once."""

    wait: _Wait
    api: Api

    def run(self) -> DeviceMetadata:
        """Wait from synchronous code (on a private event loop)."""
        return run(lambda: self.wait.run(self.api, awaitable=False))

    async def arun(self) -> DeviceMetadata:
        """Wait on the running event loop; an asyncio.Event stop_event is awaited."""
        return await self.wait.run(self.api, awaitable=True)


def api_wait(  # noqa: PLR0913 - wait_until's options that concern the API
    condition: Condition,
    claim_name: str,
    request_name: str,
    *,
    template: bool,
    driver: str | None,
    pod_name: str | None,
    namespace: str | None,
    client: Client | AsyncClient | None,
    timeout: float | None,
    stop_event: StopEvent | None,
    progress: Callable[[str], None] | None,
    progress_interval: float,
) -> ApiWait:
    """The wait of wait_until(source="api"): every option checked, the configuration loaded."""
    wait = _Wait.checked(
        condition,
        claim_name,
        request_name,
        template=template,
        driver=driver,
        pod_name=pod_name,
        namespace=namespace,
        timeout=timeout,
        stop_event=stop_event,
        progress=progress,
        progress_interval=progress_interval,
    )
    return ApiWait(wait, connect(client))


async def await_until(  # noqa: PLR0913 - wait_until's options, as the file wait has them
    condition: Condition,
    claim_name: str,
    request_name: str,
    *,
    template: bool = False,
    driver: str | None = None,
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
    timeout: float | None,
    stop_event: StopEvent | None = None,
    progress: Callable[[str], None] | None = None,
    progress_interval: float = 5.0,
) -> DeviceMetadata:
    """Wait on a watch of the claim until ``condition`` holds for the request's metadata.

    Returns the DeviceMetadata of ``request_name`` (a top-level request also covers its
    subrequests; ``driver`` keeps one driver's devices) once ``condition`` returns None (or
    True; any answer but None, a bool or a str is a TypeError).
    Raises WaitTimeoutError after ``timeout`` seconds (None: for ever) or when ``stop_event``
    is set (an asyncio.Event is awaited), with the last metadata and the reason;
    MetadataNotFoundError when the claim, the pod's claim or the request does not exist (or
    the claim is deleted); KubeAPIError when the API refuses or cannot be reached at the
    start. ``progress`` gets the reason every ``progress_interval`` seconds while waiting.
    """
    wait = api_wait(
        condition,
        claim_name,
        request_name,
        template=template,
        driver=driver,
        pod_name=pod_name,
        namespace=namespace,
        client=client,
        timeout=timeout,
        stop_event=stop_event,
        progress=progress,
        progress_interval=progress_interval,
    )
    return await wait.arun()


def wait_until(  # noqa: PLR0913 - wait_until's options, as the file wait has them
    condition: Condition,
    claim_name: str,
    request_name: str,
    *,
    template: bool = False,
    driver: str | None = None,
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
    timeout: float | None,
    stop_event: StopEvent | None = None,
    progress: Callable[[str], None] | None = None,
    progress_interval: float = 5.0,
) -> DeviceMetadata:
    """await_until for synchronous code, on an event loop of its own (in a worker thread
    when this thread runs an event loop; ``progress`` is then called from that thread)."""
    wait = api_wait(
        condition,
        claim_name,
        request_name,
        template=template,
        driver=driver,
        pod_name=pod_name,
        namespace=namespace,
        client=client,
        timeout=timeout,
        stop_event=stop_event,
        progress=progress,
        progress_interval=progress_interval,
    )
    return wait.run()
