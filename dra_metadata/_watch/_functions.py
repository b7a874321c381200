"""The public watch functions, sync and asyncio twins with the same signatures."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

from dra_metadata._reading._paths import StrPath
from dra_metadata._reading._read import DEFAULT_MAX_SIZE
from dra_metadata._watch._engine import Watcher, claim_watcher, file_watcher
from dra_metadata._watch._events import MetadataEvent
from dra_metadata._watch._options import checked_timeout
from dra_metadata._watch._pacing import AsyncPacer, Pacer

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from dra_metadata._watch._type_names import StopEvent


def _steps(
    watcher: Watcher, *, timeout: float | None, stop_event: StopEvent | None
) -> Iterator[MetadataEvent | float]:
    """The watch loop, shared by sync and async: yields events, and seconds to pause."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while stop_event is None or not stop_event.is_set():
        now = time.monotonic()
        if watcher.due(now):
            yield from watcher.scan(now)
            now = time.monotonic()
        if deadline is not None and now >= deadline:
            return
        wake = watcher.next_wake() if deadline is None else min(watcher.next_wake(), deadline)
        yield wake - now


def _watch(
    watcher: Watcher, timeout: float | None, stop_event: StopEvent | None
) -> Iterator[MetadataEvent]:
    # A generator: nothing is opened before the first next(), everything is closed when the
    # loop ends, is broken out of or the generator is garbage-collected.
    pacer = Pacer(watcher, stop_event)
    try:
        watcher.start_hints()
        for item in _steps(watcher, timeout=timeout, stop_event=stop_event):
            if isinstance(item, MetadataEvent):
                yield item
            else:
                pacer.pause(item)
    finally:
        pacer.close()
        watcher.close()


async def _awatch(
    watcher: Watcher, timeout: float | None, stop_event: StopEvent | None
) -> AsyncIterator[MetadataEvent]:
    pacer = AsyncPacer(watcher, stop_event)  # first: it puts inotify on the running loop
    try:
        watcher.start_hints()
        for item in _steps(watcher, timeout=timeout, stop_event=stop_event):
            if isinstance(item, MetadataEvent):
                yield item
            else:
                await pacer.pause(item)
    finally:
        pacer.close()
        watcher.close()


def watch_claim_metadata(
    claim_name: str,
    request_name: str,
    *,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> Iterator[MetadataEvent]:
    """Yield a MetadataEvent whenever the metadata of a claim's request changes.

    Files absent at the start are waited for. Ends after ``timeout`` seconds, when
    ``stop_event`` is set, or when the caller stops iterating; every descriptor is closed then.
    ``force_polling`` (or ``DRA_METADATA_FORCE_POLLING=1``) polls every ``poll_interval``
    seconds instead of using inotify, which is otherwise complemented by a re-read at that
    interval. ``max_size`` (bytes, 4 MiB by default) is the size limit of each file, as for
    read_metadata_file: a larger file raises MetadataTooLargeError. Raises MetadataReadError
    for a file or directory that cannot be looked at (permission denied, a symlink loop, a path
    through a regular file) and MetadataDecodeError for a file that stays undecodable.

    Args:
        claim_name: The claim's name (``spec.resourceClaims[].resourceClaimName``).
        request_name: The request (``gpu``), or one subrequest of it (``gpu/high-memory``).
        driver: Watch only this driver's file; by default every driver's file of the request,
            merged as read_claim_metadata merges them.
        root: The metadata root; by default ``$DRA_METADATA_ROOT``, else CONTAINER_DIR.
        timeout: Seconds after which the iteration ends quietly; None: no limit.
        poll_interval: Seconds between looks at the files, whatever inotify says: a status
            check of each file (and a full re-read every 30 of them) while inotify works, a
            re-read when polling.
        force_polling: True: poll only; None: ``$DRA_METADATA_FORCE_POLLING`` decides.
        stop_event: Ends the watch when set (a threading.Event at once; any object with
            ``is_set()`` is looked at every 100 ms).
        max_size: The size limit of each file in bytes (4 MiB by default).

    Examples:
        >>> for event in dra_metadata.watch_claim_metadata("fast-net", "vf"):
        ...     print(event.kind.name, event.generations)
        ...     break
        CREATED {'sriov.example.com': 2}
    """
    watcher = claim_watcher(
        claim_name,
        request_name,
        template=False,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
        max_size=max_size,
    )
    return _watch(watcher, checked_timeout(timeout), stop_event)


def watch_template_metadata(
    pod_claim_name: str,
    request_name: str,
    *,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> Iterator[MetadataEvent]:
    """Yield a MetadataEvent whenever the metadata of a template claim's request changes.

    watch_claim_metadata for a claim made from a ResourceClaimTemplate, named by the pod's own
    name for it (``spec.resourceClaims[].name``): its generated name cannot be known in advance,
    so its files are under ``resourceclaimtemplates/<pod_claim_name>/``. Arguments, events,
    ending and errors are those of watch_claim_metadata.

    Examples:
        >>> watch = dra_metadata.watch_template_metadata("accelerator", "gpu", timeout=60)
        >>> next(watch).metadata.pod_claim_name
        'accelerator'
        >>> watch.close()  # closes its descriptors at once
    """
    watcher = claim_watcher(
        pod_claim_name,
        request_name,
        template=True,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
        max_size=max_size,
    )
    return _watch(watcher, checked_timeout(timeout), stop_event)


def watch_metadata_file(
    path: StrPath,
    *,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> Iterator[MetadataEvent]:
    """Yield a MetadataEvent whenever one metadata file, named by its path, changes.

    For a file outside the protocol's layout (a host-side file, a test's): no claim or request
    names are involved. The file may be absent at the start; it is waited for. Arguments other
    than ``path``, events, ending and errors are those of watch_claim_metadata.

    Examples:
        >>> path = dra_metadata.resource_claim_file_path("sriov.example.com", "fast-net", "vf")
        >>> for event in dra_metadata.watch_metadata_file(path, timeout=60):
        ...     print(event.kind.name, event.metadata.devices[0].network_data.interface_name)
        ...     break
        CREATED net1
    """
    watcher = file_watcher(
        path, poll_interval=poll_interval, force_polling=force_polling, max_size=max_size
    )
    return _watch(watcher, checked_timeout(timeout), stop_event)


def awatch_claim_metadata(
    claim_name: str,
    request_name: str,
    *,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> AsyncIterator[MetadataEvent]:
    """The asyncio twin of watch_claim_metadata: ``async for event in awatch_...``.

    The inotify descriptor is registered with the event loop; nothing busy-waits. An
    asyncio.Event as ``stop_event`` is awaited, and ends the watch at once; cancelling the task
    that iterates ends it too, and closes its descriptors. Arguments, events and errors are
    those of watch_claim_metadata.

    Examples:
        >>> async def first_kind() -> str:
        ...     async for event in dra_metadata.awatch_claim_metadata("fast-net", "vf"):
        ...         return event.kind.name
        ...     return "ended"
        >>> asyncio.run(first_kind())
        'CREATED'
    """
    watcher = claim_watcher(
        claim_name,
        request_name,
        template=False,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
        max_size=max_size,
    )
    return _awatch(watcher, checked_timeout(timeout), stop_event)


def awatch_template_metadata(
    pod_claim_name: str,
    request_name: str,
    *,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> AsyncIterator[MetadataEvent]:
    """The asyncio twin of watch_template_metadata: ``async for event in awatch_...``.

    A claim made from a template, named by its pod claim name; everything else is as in
    awatch_claim_metadata (the event loop, ``stop_event``, cancellation, the errors).
    """
    watcher = claim_watcher(
        pod_claim_name,
        request_name,
        template=True,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
        max_size=max_size,
    )
    return _awatch(watcher, checked_timeout(timeout), stop_event)


def awatch_metadata_file(
    path: StrPath,
    *,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> AsyncIterator[MetadataEvent]:
    """The asyncio twin of watch_metadata_file: ``async for event in awatch_metadata_file(...)``.

    One metadata file, named by its path; everything else is as in awatch_claim_metadata (the
    event loop, ``stop_event``, cancellation, the errors).
    """
    watcher = file_watcher(
        path, poll_interval=poll_interval, force_polling=force_polling, max_size=max_size
    )
    return _awatch(watcher, checked_timeout(timeout), stop_event)
