"""One inotify instance per process for sync watchers, one per event loop for async ones.

inotify instances are limited per user ID across a whole node (``fs.inotify.max_user_instances``,
128 on most distributions), and a container's root is usually the node's root: an instance per
watcher would take them from every other root process of the node (kubelet and the container
runtime included). So every watcher of a process shares one instance (``ThreadHub``, read by one
daemon thread) and every watcher of an event loop another (``LoopHub``, one of the loop's
readers); the instance is made when a first watcher needs it and closed when the last one ends.

A watch descriptor is per inode, not per caller: inotify returns the same descriptor when the
same inode is watched again (and replaces its mask unless IN_MASK_ADD is given). So the hub
adds watches with IN_MASK_ADD, remembers which watchers hold each descriptor with the mask each
asked for, hands an event only to the watchers whose mask it matches, and removes a descriptor
when the last watcher holding it lets it go. The descriptor's IN_IGNORED (the kernel removed it:
its inode is gone) reaches every watcher that held it; one for a descriptor the hub removed
itself, and already forgot, is dropped.

inotify can be blind (gVisor, virtio-fs, a write through a shared mapping), so each watcher's
paths must still be looked at every poll interval. Rather than each watcher waking up to re-read
its files, the hub stats every path its watchers registered (``expect``), once per poll interval
and all together (the reading thread's poll timeout; the loop's call_later), and wakes only the
watchers whose paths changed: inode, device, size, modification and change times, link count,
or absent/present. A watcher then re-reads through its usual path; its own full re-read is a
backstop at a longer interval (``_engine``).

A child made by fork(2) shares the parent's instance (the descriptor is inherited) but not its
reading thread; reading it would steal the parent's events. So the child forgets every hub it
inherited (closing its copies of their descriptors) and its watchers move to a new instance.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import threading
import time
import weakref
from pathlib import Path

from dra_metadata._watch._signatures import Signature, signature

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:  # asyncio itself only where a loop runs: a sync wait never imports it
    import asyncio
    from typing import Any, Protocol

    class Subscriber(Protocol):
        """What a hub calls on a watcher (``_inotify.Hints``), with the hub's lock held."""

        def watching(self, descriptor: int, entry: tuple[bool, Path]) -> None:
            """``descriptor`` now also watches ``entry`` (a directory?, its path)."""

        def hinted(self, descriptor: int, name: str) -> None:
            """An event on ``descriptor`` that the watcher asked for (``name``: in a directory)."""

        def lost(self, descriptor: int) -> None:
            """The kernel removed ``descriptor`` (IN_IGNORED): its inode is gone."""

        def overflowed_queue(self) -> None:
            """Events were lost (IN_Q_OVERFLOW, or the instance failed): look at everything."""

        def stat_changed(self, path: Path) -> None:
            """The periodic check found ``path`` changed (not the expected signature)."""

        def wake(self) -> None:
            """Called after the events of a read were handed out, without the hub's lock."""


# inotify masks (values from <sys/inotify.h>).
IN_Q_OVERFLOW, IN_IGNORED, IN_UNMOUNT = 0x4000, 0x8000, 0x2000
_IN_MASK_ADD, _IN_ONLYDIR, _IN_DELETE_SELF = 0x20000000, 0x01000000, 0x400
_THREAD_LOOK_MILLISECONDS = 1000  # how long the hub's thread may outlive it, at most


class Hub:
    """One inotify instance and the watchers that share it."""

    def __init__(self) -> None:
        from inotify_simple import INotify  # noqa: PLC0415 - only when watching

        self._inotify: Any = INotify(nonblocking=True)
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.failed: str | None = None
        """Why the instance can no longer be read; its watchers poll."""
        self.users: set[Subscriber] = set()
        self._holders: dict[int, dict[Subscriber, int]] = {}  # descriptor -> {watcher: mask}
        self._checks: dict[Subscriber, _Check] = {}

    def fileno(self) -> int:
        return int(self._inotify.fileno())

    @property
    def usable(self) -> bool:
        """False in a forked child (the instance is the parent's) and after a failed read."""
        return self.pid == os.getpid() and self.failed is None

    def add_watch(self, user: Subscriber, path: Path, mask: int, entry: tuple[bool, Path]) -> int:
        """Watch ``path`` for ``user`` (as ``entry``); the descriptor, shared with whoever else
        watches its inode. Raises OSError as inotify_add_watch(2) does."""
        with self.lock:
            descriptor = int(self._inotify.add_watch(path, mask | _IN_MASK_ADD))
            holders = self._holders.setdefault(descriptor, {})
            holders[user] = holders.get(user, 0) | mask
            user.watching(descriptor, entry)
        return descriptor

    def release(self, user: Subscriber, descriptors: list[int]) -> None:
        """``user`` lets ``descriptors`` go; those nobody else holds are removed."""
        with self.lock:
            self._release(user, descriptors)

    def _release(self, user: Subscriber, descriptors: list[int]) -> None:
        for descriptor in descriptors:
            holders = self._holders.get(descriptor)
            if holders is None or holders.pop(user, None) is None or holders:
                continue
            del self._holders[descriptor]
            with contextlib.suppress(OSError):  # already gone with its inode
                self._inotify.rm_watch(descriptor)

    def leave(self, user: Subscriber, descriptors: list[int]) -> bool:
        """``user`` ends; True when it was the last watcher of this hub."""
        with self.lock:
            self._release(user, descriptors)
            self._checks.pop(user, None)
            self.users.discard(user)
            return not self.users

    def expect(self, user: Subscriber, interval: float, signatures: dict[Path, Signature]) -> float:
        """Look at ``signatures``' paths every ``interval`` seconds for ``user`` (replacing what
        it asked before); when one differs, ``stat_changed`` and ``wake``. The next look is
        when it was due already (so that the looks of many watchers stay together), else one
        interval from now; returned (monotonic seconds)."""
        with self.lock:
            before = self._checks.get(user)
            if before is not None and before.interval == interval:
                due = before.due
            else:
                due = time.monotonic() + interval
            self._checks[user] = _Check(due, interval, signatures)
        return due

    def check(self) -> float:
        """Look at the paths whose look is due (or nearly: a quarter of an interval early, so
        that looks made at slightly different times fall together); when the next is due."""
        now = time.monotonic()
        woken: list[Subscriber] = []
        with self.lock:
            for user, check in self._checks.items():
                if check.due - check.interval / 4 > now:
                    continue
                check.due = now + check.interval
                changed = False
                for entry in check.entries:
                    found = signature(entry.name)
                    if found != entry.expected:
                        entry.expected = found
                        user.stat_changed(entry.path)
                        changed = True
                if changed:
                    woken.append(user)
            following = min((check.due for check in self._checks.values()), default=math.inf)
        for user in woken:
            user.wake()
        return following

    def dispatch(self) -> None:
        """Read the pending events and hand each to the watchers that asked for it."""
        try:
            events = self._read()
        except OSError as error:
            self._fail(f"reading inotify events failed ({error.strerror})")
            return
        with self.lock:
            woken = self._hand_out(events)
        for user in woken:
            user.wake()

    def _hand_out(self, events: list[Any]) -> dict[Subscriber, None]:
        """Give each event to its watchers; the watchers that got any, in order."""
        woken: dict[Subscriber, None] = {}
        for descriptor, mask, _, name in events:
            if mask & IN_Q_OVERFLOW:
                for user in self.users:
                    user.overflowed_queue()
                    woken[user] = None
                continue
            holders = self._holders.get(descriptor)
            if holders is None:
                continue  # removed by the hub (its IN_IGNORED), or not asked for
            if mask & IN_IGNORED:
                del self._holders[descriptor]
                for user in holders:
                    user.lost(descriptor)
                    woken[user] = None
                continue
            for user, wanted in holders.items():
                if mask & (wanted | IN_UNMOUNT):
                    user.hinted(descriptor, name)
                    woken[user] = None
        return woken

    def _read(self) -> list[Any]:
        return list(self._inotify.read(timeout=0))

    def _fail(self, reason: str) -> None:
        with self.lock:
            self.failed = reason
            users = list(self.users)
            for user in users:
                user.overflowed_queue()
        for user in users:
            user.wake()

    def close(self) -> None:
        self._inotify.close()

    def abandon(self) -> None:
        """In a forked child: close this process's copies of the descriptors, touch nothing
        else (the lock may have been held by a thread that does not exist here)."""
        self.lock = threading.Lock()
        with contextlib.suppress(OSError):
            self._inotify.close()


class _Check:
    __slots__ = ("due", "entries", "interval")

    def __init__(self, due: float, interval: float, signatures: dict[Path, Signature]) -> None:
        self.due = due
        self.interval = interval
        self.entries = [_Expected(path, expected) for path, expected in signatures.items()]


class _Expected:
    __slots__ = ("expected", "name", "path")

    def __init__(self, path: Path, expected: Signature) -> None:
        self.path = path
        self.name = os.fsencode(path)  # the cheapest argument of os.stat
        self.expected = expected


class ThreadHub(Hub):
    """The process's instance for sync watchers, read by one daemon thread.

    The thread waits on the instance alone (no descriptor of its own to wake it): ``close``
    wakes it by watching and unwatching "/" (the IN_IGNORED that makes), and where that cannot
    be done the thread sees that it must end at its next look, within a second.
    """

    def __init__(self) -> None:
        super().__init__()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="dra-metadata inotify", daemon=True)
        try:
            self._thread.start()
        except RuntimeError:  # can't start new thread
            super().close()
            raise

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.fileno(), select.POLLIN)
        following = math.inf
        while not self._stopping and self.failed is None:
            wait = min(_THREAD_LOOK_MILLISECONDS / 1000, max(following - time.monotonic(), 0))
            if poller.poll(math.ceil(wait * 1000)):
                self.dispatch()
            if time.monotonic() >= following or following == math.inf:
                following = self.check()
            else:
                following = min(following, self._earliest())

    def _earliest(self) -> float:
        with self.lock:
            return min((check.due for check in self._checks.values()), default=math.inf)

    def _read(self) -> list[Any]:
        with self.lock:  # never after close: the descriptor's number may be another's by then
            return [] if self._stopping else super()._read()

    def close(self) -> None:
        with self.lock:
            self._stopping = True
            with contextlib.suppress(OSError):
                self._inotify.rm_watch(self._inotify.add_watch("/", _IN_ONLYDIR | _IN_DELETE_SELF))
        if threading.current_thread() is not self._thread:
            self._thread.join(2 * _THREAD_LOOK_MILLISECONDS / 1000)
        with self.lock:
            super().close()


class LoopHub(Hub):
    """An event loop's instance for async watchers: one of the loop's readers."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._loop = loop
        self._timer: asyncio.TimerHandle | None = None
        try:
            loop.add_reader(self.fileno(), self._readable)
        except (NotImplementedError, RuntimeError):  # a loop without readers
            super().close()
            raise

    def _readable(self) -> None:
        self.dispatch()
        if self.failed is not None:  # would stay readable: stop reading it
            self._loop.remove_reader(self.fileno())

    def expect(self, user: Subscriber, interval: float, signatures: dict[Path, Signature]) -> float:
        due = super().expect(user, interval, signatures)
        timer = self._timer
        if timer is None or timer.when() > due + self._loop.time() - time.monotonic():
            self._schedule(due)
        return due

    def _schedule(self, due: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if due != math.inf and not self._loop.is_closed():
            self._timer = self._loop.call_later(max(due - time.monotonic(), 0), self._checking)

    def _checking(self) -> None:
        self._timer = None
        if self.usable:
            self._schedule(self.check())

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._loop.is_closed():
            self._loop.remove_reader(self.fileno())
        super().close()


_registry_lock = threading.Lock()
_process_hub: ThreadHub | None = None
_loop_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopHub] = (
    weakref.WeakKeyDictionary()
)


def join(user: Subscriber, loop: asyncio.AbstractEventLoop | None) -> Hub:
    """The hub of this process (``loop`` None) or of ``loop``, made if there is none; ``user``
    is one of its watchers until ``leave``. Raises OSError (no instance: EMFILE, ENFILE, ...),
    ImportError (no inotify_simple) or RuntimeError (no thread or reader for it)."""
    global _process_hub  # noqa: PLW0603 - the one hub of the process
    with _registry_lock:
        hub: Hub | None = _process_hub if loop is None else _loop_hubs.get(loop)
        if hub is None or not hub.usable:
            if loop is None:
                hub = _process_hub = ThreadHub()
            else:
                hub = _loop_hubs[loop] = LoopHub(loop)
        with hub.lock:
            hub.users.add(user)
        return hub


def leave(user: Subscriber, hub: Hub, descriptors: list[int]) -> None:
    """``user`` ends: its descriptors go, and the instance with its last watcher."""
    global _process_hub  # noqa: PLW0603 - the one hub of the process
    with _registry_lock:
        if not hub.leave(user, descriptors):
            return
        if hub is _process_hub:
            _process_hub = None
        elif isinstance(hub, LoopHub) and _loop_hubs.get(hub._loop) is hub:  # noqa: SLF001
            del _loop_hubs[hub._loop]  # noqa: SLF001
        hub.close()


def _forget_in_child() -> None:
    global _registry_lock, _process_hub  # noqa: PLW0603 - a forked child starts afresh
    _registry_lock = threading.Lock()
    inherited = [_process_hub, *_loop_hubs.values()]
    _process_hub = None
    _loop_hubs.clear()
    for hub in inherited:
        if hub is not None:
            hub.abandon()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
