"""Pauses between scans: until an inotify event, the next due scan, or a stop.

A pause never touches the file system, and wakes up only when something happened or a scan
is due. inotify events are read by the instance the watcher shares (``_hub``: a thread of the
process for sync watchers, the event loop for async ones), which wakes the watcher's pause. A
stop_event is waited on rather than looked at periodically where it can be: an asyncio.Event
is awaited; a threading.Event (or a multiprocessing one) is waited on directly while polling,
and by a small relay thread while inotify is used (the relay wakes the pauses when the event
is set): one relay per stop_event object, shared by every watch and wait given that object.
Any other object with ``is_set()`` is looked at every 100 ms.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import sys
import time
from collections.abc import Callable

from dra_metadata._watch._engine import Watcher

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:  # asyncio itself only where a loop runs: a sync wait never imports it
    import asyncio

    from dra_metadata._watch._type_names import StopEvent

STOP_CHECK_SECONDS = 0.1
"""A stop_event that cannot be waited on is looked at this often."""
LONGEST_PAUSE = 3600.0
"""Pauses are cut to this: poll(2) and time.sleep overflow on huge or infinite seconds."""
_RELAY_SLICE_SECONDS = 60.0  # how long a relay outlives its last watch at most


def bounded(seconds: float) -> float:
    """``seconds`` as a pause every sleeping primitive accepts: 0 to LONGEST_PAUSE."""
    return min(max(seconds, 0.0), LONGEST_PAUSE)


def _blocking_wait(stop_event: StopEvent | None) -> bool:
    """Whether ``stop_event.wait(seconds)`` blocks a thread until set (no coroutine)."""
    # A threading.Event can only come from a threading module that is loaded already.
    threading = sys.modules.get("threading")
    return (threading is not None and isinstance(stop_event, threading.Event)) or (
        type(stop_event).__module__ == "multiprocessing.synchronize"
        and type(stop_event).__name__ == "Event"
    )


class _StopRelay:
    """A daemon thread that waits on a thread-blocking stop_event and then calls every
    ``notify`` subscribed to it (``relay``), so that pauses wait for inotify and the stop at
    once.

    Nothing can interrupt its wait, so once nobody is subscribed it ends at its next slice
    (60 s; a thread that wakes up once a minute costs next to nothing meanwhile).
    """

    def __init__(self, stop_event: StopEvent) -> None:
        self.stop_event = stop_event
        self.notifies: dict[object, Callable[[], None]] = {}
        import threading  # noqa: PLC0415 - loaded already: a thread-blocking stop_event's

        threading.Thread(target=self._relay, name="dra-metadata stop relay", daemon=True).start()

    def _relay(self) -> None:
        wait = self.stop_event.wait  # type: ignore[attr-defined]
        while True:
            stopped = wait(_RELAY_SLICE_SECONDS)
            with _relays_lock:
                if not stopped and self.notifies:
                    continue
                if _relays.get(id(self.stop_event)) is self:
                    del _relays[id(self.stop_event)]
                notifies = list(self.notifies.values()) if stopped else []
                self.notifies.clear()
            for notify in notifies:
                notify()
            return


_relays_lock = _thread.allocate_lock()
_relays: dict[int, _StopRelay] = {}  # id(stop_event) -> its relay (which holds the event)


def relay(stop_event: StopEvent, notify: Callable[[], None]) -> Callable[[], None]:
    """Call ``notify`` (in another thread) once ``stop_event`` is set; returns the function
    that unsubscribes. Every subscriber of one stop_event object shares one thread."""
    token = object()
    with _relays_lock:
        shared = _relays.get(id(stop_event))
        if shared is None:
            shared = _relays[id(stop_event)] = _StopRelay(stop_event)
        shared.notifies[token] = notify

    def unsubscribe() -> None:
        with _relays_lock:
            shared.notifies.pop(token, None)

    return unsubscribe


def _forget_relays_in_child() -> None:
    global _relays_lock  # noqa: PLW0603 - a forked child has none of the parent's threads
    _relays_lock = _thread.allocate_lock()
    _relays.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_relays_in_child)


class _Wakeup:
    """A flag one thread waits on and any thread sets: a lock held while the flag is clear
    (cheaper than threading.Event, and its wait is interrupted by Ctrl-C all the same)."""

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._lock.acquire()

    def set(self) -> None:
        with contextlib.suppress(RuntimeError):  # set already
            self._lock.release()

    def clear(self) -> None:
        self._lock.acquire(blocking=False)

    def wait(self, seconds: float) -> None:
        """Until set (and clear it again) or ``seconds`` passed."""
        self._lock.acquire(timeout=seconds)


class Pacer:
    """Pauses of one sync watch or wait; ``close`` when it ends."""

    def __init__(self, watcher: Watcher, stop_event: StopEvent | None) -> None:
        self._watcher = watcher
        self._stop_event = stop_event
        self._blocking = _blocking_wait(stop_event)
        self._unrelay: Callable[[], None] | None = None
        self._woken = _Wakeup()
        watcher.hints.wake = self._woken.set

    def pause(self, seconds: float) -> None:
        """Sleep for ``seconds`` at most; return early on an inotify event or a stop."""
        seconds = bounded(seconds)
        stop_event = self._stop_event
        hints = self._watcher.hints
        if not hints.active:
            if stop_event is None:
                time.sleep(seconds)
            elif self._blocking:
                stop_event.wait(seconds)  # type: ignore[attr-defined]
            else:
                _sliced_sleep(seconds, stop_event)
            return
        if self._blocking and self._unrelay is None:
            assert stop_event is not None  # noqa: S101 - _blocking_wait says so
            self._unrelay = relay(stop_event, self._woken.set)
        sliced = stop_event is not None and not self._blocking
        end = time.monotonic() + seconds
        while True:
            self._woken.clear()  # before looking: a wake from now on ends the wait below
            if hints.pending() or (stop_event is not None and stop_event.is_set()):
                return
            remaining = end - time.monotonic()
            if remaining <= 0:
                return
            self._woken.wait(min(remaining, STOP_CHECK_SECONDS) if sliced else remaining)

    def close(self) -> None:
        if self._unrelay is not None:
            self._unrelay()
            self._unrelay = None


def _sliced_sleep(seconds: float, stop_event: StopEvent) -> None:
    end = time.monotonic() + seconds
    while not stop_event.is_set():
        remaining = end - time.monotonic()
        if remaining <= 0:
            return
        time.sleep(min(remaining, STOP_CHECK_SECONDS))


class AsyncPacer:
    """The asyncio counterpart of Pacer: the watcher's inotify instance is the running loop's."""

    def __init__(self, watcher: Watcher, stop_event: StopEvent | None) -> None:
        import asyncio  # noqa: PLC0415 - made in a running loop: asyncio is loaded already

        self._watcher = watcher
        self._stop_event = stop_event
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[bool] | None = None
        self._stop_task: asyncio.Task[object] | None = None
        self._unrelay: Callable[[], None] | None = None
        watcher.hints.loop = self._loop
        watcher.hints.wake = self._wake
        if isinstance(stop_event, asyncio.Event):
            self._stop_task = self._loop.create_task(stop_event.wait())
            self._stop_task.add_done_callback(lambda _: self._wake())
        elif _blocking_wait(stop_event):
            assert stop_event is not None  # noqa: S101 - _blocking_wait says so
            self._unrelay = relay(stop_event, self._stop_relayed)
        self._sliced = stop_event is not None and self._stop_task is None and self._unrelay is None

    def _wake(self) -> None:
        _settle(self._waiter, woken=True)

    def _stop_relayed(self) -> None:  # in the relay's thread
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            self._loop.call_soon_threadsafe(self._wake)

    def _stopped(self) -> bool:
        return self._stop_event is not None and self._stop_event.is_set()

    async def pause(self, seconds: float) -> None:
        """Sleep for ``seconds`` at most; return early on an inotify event or a stop."""
        end = time.monotonic() + bounded(seconds)
        while not self._stopped() and not self._watcher.hints.pending():
            remaining = end - time.monotonic()
            if remaining <= 0:
                return
            slice_ = min(remaining, STOP_CHECK_SECONDS) if self._sliced else remaining
            if await self._sleep(slice_):
                return

    async def _sleep(self, seconds: float) -> bool:
        """True when woken before ``seconds`` passed (an event, or the stop_event set)."""
        waiter: asyncio.Future[bool] = self._loop.create_future()
        self._waiter = waiter
        timer = self._loop.call_later(seconds, _settle, waiter, False)
        try:
            return await waiter
        finally:
            timer.cancel()
            self._waiter = None

    def close(self) -> None:
        if self._unrelay is not None:
            self._unrelay()
            self._unrelay = None
        if self._stop_task is not None:
            self._stop_task.cancel()


def _settle(waiter: asyncio.Future[bool] | None, woken: bool) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(woken)
