"""watch_device_health and its asyncio twin: a pod's device health now and at every change.

One watch on the pod (``fieldSelector=metadata.name``), the machinery of the claim watches
(_stream: resumed after cuts, started over on 410 Gone); the claims that name the devices are
read when the health first points to them (_health). A snapshot is yielded when it differs
from the last one: a status update that changes nothing about the health yields nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dra_metadata.kube._errors import Target, deadline_error, pod_target
from dra_metadata.kube._health import ClaimResolver, PodHealthView
from dra_metadata.kube._http import Api, connect
from dra_metadata.kube._identity import check_name, resolve_pod_name
from dra_metadata.kube._models import DeviceHealth
from dra_metadata.kube._stream import WatchState, object_updates
from dra_metadata.kube._sync import iterate
from dra_metadata.kube._watch import Clock, checked_timeout

if TYPE_CHECKING:
    from dra_metadata import StopEvent


@dataclass(frozen=True, slots=True)
class _Where:
    namespace: str | None
    pod_name: str | None
    container: str | None

    @classmethod
    def checked(cls, namespace: str | None, pod_name: str | None, container: str | None) -> _Where:
        if namespace is not None:
            check_name("namespace", namespace, label=True)
        if pod_name is not None:
            check_name("pod_name", pod_name)
        if container is not None:
            check_name("container_name", container, label=True)
        return cls(namespace, pod_name, container)

    def target(self, api: Api) -> Target:
        return pod_target(resolve_pod_name(self.pod_name), api.namespace(self.namespace))


async def awatch_snapshots(
    api: Api,
    where: _Where,
    timeout: float | None,
    stop_event: StopEvent | None,
    *,
    awaitable: bool,
) -> AsyncIterator[tuple[DeviceHealth, ...]]:
    """The body of watch_device_health / awatch_device_health."""
    clock = Clock(timeout, stop_event, awaitable=awaitable)
    target = where.target(api)
    resolver = ClaimResolver(target.namespace)

    def view(pod: Mapping[str, Any]) -> PodHealthView:
        return PodHealthView.of(pod, where.container)

    async with api.async_client() as http:
        updates = object_updates(
            api, http, target, view, state=WatchState(), wake=clock.wake, stop=clock.awaited_stop
        )
        last: tuple[DeviceHealth, ...] | None = None
        try:
            async for update in updates:
                if clock.stopped():
                    return
                if update is not None:
                    snapshot = await resolver.named(api, http, update)
                    if snapshot != last:
                        last = snapshot
                        yield snapshot
                if clock.expired():
                    if last is None:  # not even the current state within the watch's time
                        raise deadline_error(
                            target, "get", api.server, timeout or 0.0, adjustable=True
                        )
                    return
        finally:
            await updates.aclose()


def watch_device_health(
    *,
    namespace: str | None = None,
    pod_name: str | None = None,
    container: str | None = None,
    timeout: float | None = None,
    stop_event: StopEvent | None = None,
) -> Iterator[tuple[DeviceHealth, ...]]:
    """Yield the pod's device health now, then again each time it changes (a Kubernetes watch).

    Each item is a snapshot: one DeviceHealth per device the kubelet reports, as
    read_device_health returns them (devices named through the pod's claims where that is
    unambiguous). The first is the current state; then one per change of any device's health
    or message (or a device added, removed, or newly named); a pod update that changes nothing
    about the health yields nothing. This pod unless ``pod_name`` (``$POD_NAME``, else the host
    name); every container unless ``container``; ``namespace`` as in read_device_health.

    One watch on the pod, selected by name: resumed from the last resourceVersion after a
    dropped connection, started over (a GET) when that version is gone (410), so no change is
    missed and one that happened meanwhile is yielded once. Idle, it holds one connection and
    wakes for nothing but the server's events (and, with a ``stop_event`` that is no
    asyncio.Event, every 0.1 s to look at it).

    ``timeout``: how long the watch lasts, in seconds (None: until stopped); it then ends
    without an error, as watch_claim_status does. The current state must arrive within it:
    if it does not (an API server that does not answer), KubeAPIError is raised instead of an
    empty end. Ends too when ``stop_event`` is set, or when the caller stops iterating.

    Needs ``get`` and ``watch`` on ``pods``; naming the devices the kubelet keys by CDI device
    IDs needs ``get`` on ``resourceclaims`` (without it: an UnresolvedDeviceWarning, once, and
    the health unresolved). Raises MetadataNotFoundError when the pod or container does not
    exist or the pod is deleted, KubeAPIError when the API refuses or cannot be reached at the
    start.

    Example:
        >>> for snapshot in kube.watch_device_health(container="trainer"):  # doctest: +SKIP
        ...     if any(device.health == "Unhealthy" for device in snapshot):
        ...         break
    """
    where = _Where.checked(namespace, pod_name, container)
    checked_timeout(timeout)
    api = connect(None)
    return iterate(lambda: awatch_snapshots(api, where, timeout, stop_event, awaitable=False))


def awatch_device_health(
    *,
    namespace: str | None = None,
    pod_name: str | None = None,
    container: str | None = None,
    timeout: float | None = None,
    stop_event: StopEvent | None = None,
) -> AsyncIterator[tuple[DeviceHealth, ...]]:
    """The asyncio twin of watch_device_health: ``async for snapshot in awatch_device_health()``.

    An asyncio.Event as ``stop_event`` is awaited: the watch ends as soon as it is set; a
    threading.Event is looked at every 0.1 s.
    """
    where = _Where.checked(namespace, pod_name, container)
    checked_timeout(timeout)
    api = connect(None)
    return awatch_snapshots(api, where, timeout, stop_event, awaitable=True)
