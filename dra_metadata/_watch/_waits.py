"""Waiting until metadata files are ready: a condition on a DeviceMetadata, fed by a watcher.

One notion of "ready" for every wait: ``condition(metadata)`` returns None or True, or a
sentence (or False) saying why not (``_model._conditions``, shared with the waits on the API).
The loop (``_wait_steps``) yields the seconds to pause and returns the ready metadata, so a
sync driver (``_drive``) and an asyncio one (``_adrive``) share it. The public functions,
which also wait on the Kubernetes API (``source=``), are in ``_sources``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable

from dra_metadata._model._conditions import (
    Condition,
    Verdict,
    checked_condition,
    checked_predicate,
)
from dra_metadata._model._errors import StaleMetadataError, WaitTimeoutError
from dra_metadata._model._metadata import DeviceMetadata
from dra_metadata._model._models import Device, camel
from dra_metadata._model._notices import warn
from dra_metadata._reading._missing import describe_missing, describe_other_kind
from dra_metadata._reading._paths import StrPath
from dra_metadata._watch._engine import Watcher, claim_watcher
from dra_metadata._watch._options import checked_timeout
from dra_metadata._watch._pacing import AsyncPacer, Pacer

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from dra_metadata._watch._type_names import StopEvent

NETWORK_FIELDS = ("interface_name", "ips", "hardware_address")
"""Fields of NetworkDeviceData that wait_for_network_data can require."""


def required_fields(require: object) -> tuple[str, ...]:
    """``require=`` of the network-data waits as a tuple: one field name as a str, or an
    iterable of names; anything else is a TypeError (a str is never split into letters)."""
    if isinstance(require, str):
        return (require,)
    if isinstance(require, (bytes, bytearray)) or not isinstance(require, Iterable):
        raise TypeError(
            "require must be a field name (str) or an iterable of them, not "
            f"{type(require).__name__}"
        )
    fields = tuple(require)
    for name in fields:
        if not isinstance(name, str):
            raise TypeError(f"require: each field name must be a str, not {type(name).__name__}")
    return fields


def _generations(metadata: DeviceMetadata) -> str:
    sources = metadata.sources
    if len(sources) == 1:
        return f"generation {sources[0].generation}"
    return ", ".join(f"{source.driver} generation {source.generation}" for source in sources)


def _verdict(watcher: Watcher, condition: Verdict) -> tuple[DeviceMetadata | None, str | None]:
    """The metadata seen and why it is not ready (None: ready).

    Raises StaleMetadataError on a stale view, ready or not: a view that can no longer change
    is never returned as if it were what the driver has now (the error carries it).
    """
    metadata = watcher.current()
    reason = condition(metadata) if metadata is not None else None
    ready = metadata is not None and reason is None
    if not ready:
        reason = "; ".join(filter(None, [reason, watcher.problem])) or "not ready"
    stale = watcher.stale_paths()
    if stale:
        seen = "in which the condition holds" if ready else reason
        raise StaleMetadataError(
            f"the driver replaced {', '.join(map(str, stale))} on the host and this "
            f"container keeps seeing the old file ({seen}); restart the container "
            "to see the new one",
            metadata=metadata,
            path=stale[0],
            reason=reason,
        )
    return metadata, reason


class Missing:
    """What a wait says when nothing is there: the names it waits for, in a reader's terms."""

    __slots__ = ("claim_name", "driver", "request_name", "root", "template")

    def __init__(
        self,
        claim_name: str,
        request_name: str,
        template: bool,
        driver: str | None,
        root: StrPath | None,
    ) -> None:
        self.claim_name = claim_name
        self.request_name = request_name
        self.template = template
        self.driver = driver
        self.root = root

    def other_kind(self) -> str | None:
        """Where the claim is mounted as the other kind (named or from a template): why the
        wait will not see it, and what to pass instead; else None."""
        return describe_other_kind(
            self.claim_name, self.request_name, template=self.template, root=self.root
        )

    def why(self) -> str | None:
        """Why nothing is there (what is mounted instead, what to do); None when files are."""
        return describe_missing(
            self.claim_name,
            self.request_name,
            template=self.template,
            driver=self.driver,
            root=self.root,
            waiting=True,
        )


def _announce(watcher: Watcher, missing: Missing) -> str | None:
    """At the start of a wait: say once, on the dra_metadata logger, that the claim is
    mounted as the other kind; that sentence, which every reason then ends with."""
    notice = missing.other_kind()
    if notice is not None:
        warn(
            "%s: this wait is likely in vain: %s", watcher.single_file or watcher.directory, notice
        )
    return notice


def _final(reason: str, metadata: DeviceMetadata | None, missing: Missing) -> str:
    """The reason of a wait that ends unready: where nothing was ever there, also what is."""
    why = None if metadata is not None else missing.why()
    return reason if why is None or reason.endswith(why) else f"{reason}; {why}"


def _wait_steps(wait: FileWait) -> Generator[float, None, DeviceMetadata]:
    """Scan when due, judge the metadata after each scan; yield the seconds to pause."""
    watcher, condition, missing = wait.watcher, wait.condition, wait.missing
    timeout, stop_event, progress = wait.timeout, wait.stop_event, wait.progress
    progress_interval = wait.progress_interval
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    next_progress = start + progress_interval
    metadata: DeviceMetadata | None = None
    reason = "not ready"
    notice = _announce(watcher, missing)
    while True:
        now = time.monotonic()
        if watcher.due(now):
            watcher.scan(now)
            metadata, verdict = _verdict(watcher, condition)
            if verdict is None:
                assert metadata is not None  # noqa: S101 - ready means there is metadata
                return metadata
            reason = verdict if notice is None or metadata is not None else f"{verdict}; {notice}"
            if watcher.start_hints():  # not ready at once: now watch for changes
                continue
            now = time.monotonic()
        stopped = stop_event is not None and stop_event.is_set()
        if stopped or (deadline is not None and now >= deadline):
            raise WaitTimeoutError(
                ("stopped; " if stopped else "") + _final(reason, metadata, missing),
                metadata=metadata,
                path=watcher.single_file or watcher.directory,
                timeout=timeout,
            )
        if progress is not None and now >= next_progress:
            progress(reason)
            next_progress = now + progress_interval
        wake = watcher.next_wake()
        if deadline is not None:
            wake = min(wake, deadline)
        if progress is not None:
            wake = min(wake, next_progress)
        yield wake - now


def _drive(
    watcher: Watcher, steps: Generator[float, None, DeviceMetadata], stop_event: StopEvent | None
) -> DeviceMetadata:
    pacer = Pacer(watcher, stop_event)
    try:
        while True:
            try:
                seconds = next(steps)
            except StopIteration as done:
                ready: DeviceMetadata = done.value
                return ready
            pacer.pause(seconds)
    finally:
        pacer.close()
        watcher.close()


async def _adrive(
    watcher: Watcher, steps: Generator[float, None, DeviceMetadata], stop_event: StopEvent | None
) -> DeviceMetadata:
    # Cancelling the awaiting task ends the pause at once; the finally closes every descriptor.
    pacer = AsyncPacer(watcher, stop_event)
    try:
        while True:
            try:
                seconds = next(steps)
            except StopIteration as done:
                ready: DeviceMetadata = done.value
                return ready
            await pacer.pause(seconds)
    finally:
        steps.close()
        pacer.close()
        watcher.close()


def checked_progress_interval(progress_interval: float) -> float:
    if not progress_interval > 0:
        raise ValueError(f"progress_interval must be positive, not {progress_interval!r}")
    return progress_interval


class FileWait:
    """One wait on the files of a request directory, its options checked at the call."""

    __slots__ = (
        "condition",
        "missing",
        "progress",
        "progress_interval",
        "stop_event",
        "timeout",
        "watcher",
    )

    def __init__(
        self,
        watcher: Watcher,
        condition: Verdict,
        timeout: float | None,
        stop_event: StopEvent | None,
        progress: Callable[[str], None] | None,
        progress_interval: float,
        missing: Missing,
    ) -> None:
        self.watcher = watcher
        self.condition = condition
        self.timeout = timeout
        self.stop_event = stop_event
        self.progress = progress
        self.progress_interval = progress_interval
        self.missing = missing

    @classmethod
    def checked(  # noqa: PLR0913 - the options of wait_until that concern files
        cls,
        condition: Condition,
        claim_name: str,
        request_name: str,
        *,
        template: bool,
        driver: str | None,
        root: StrPath | None,
        timeout: float | None,
        poll_interval: float,
        force_polling: bool | None,
        max_size: int,
        stop_event: StopEvent | None,
        progress: Callable[[str], None] | None,
        progress_interval: float,
    ) -> FileWait:
        watcher = claim_watcher(
            claim_name,
            request_name,
            template=template,
            driver=driver,
            root=root,
            poll_interval=poll_interval,
            force_polling=force_polling,
            max_size=max_size,
        )
        return cls(
            watcher,
            checked_condition(condition),
            checked_timeout(timeout),
            stop_event,
            progress,
            checked_progress_interval(progress_interval),
            Missing(claim_name, request_name, template, driver, root),
        )

    def run(self) -> DeviceMetadata:
        """Wait in this thread."""
        return _drive(self.watcher, _wait_steps(self), self.stop_event)

    async def arun(self) -> DeviceMetadata:
        """Wait on the running event loop (inotify's descriptor is one of its readers)."""
        return await _adrive(self.watcher, _wait_steps(self), self.stop_event)


def device_condition(predicate: Callable[[Device], bool]) -> Verdict:
    """The condition of wait_for: every device of the request satisfies ``predicate`` (a
    str answer is a TypeError)."""
    predicate = checked_predicate(predicate)

    def condition(metadata: DeviceMetadata) -> str | None:
        devices = metadata.devices
        if not devices:
            return f"{_generations(metadata)}, no devices"
        failing = [device.name for device in devices if not predicate(device)]
        if failing:
            names = ", ".join(failing)
            return f"{_generations(metadata)}, device {names} not ready"
        return None

    return condition


def network_data_condition(require: tuple[str, ...]) -> Verdict:
    """The condition of wait_for_network_data: every device has the required network fields."""
    unknown = [name for name in require if name not in NETWORK_FIELDS]
    if unknown:
        raise ValueError(f"unknown network data field(s) {unknown}; known: {NETWORK_FIELDS}")

    def condition(metadata: DeviceMetadata) -> str | None:
        if not metadata.devices:
            return f"{_generations(metadata)}, no devices"
        for device in metadata.devices:
            data = device.network_data
            if data is None:
                return f"{_generations(metadata)}, device {device.name} has no networkData"
            missing = [name for name in require if not getattr(data, name)]
            if missing:
                return f"{_generations(metadata)}, device {device.name} has no " + " and no ".join(
                    f"networkData.{camel(name)}" for name in missing
                )
        return None

    return condition
