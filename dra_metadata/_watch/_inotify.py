"""inotify as a source of hints: which paths may have changed, never what they hold.

Each watcher has its ``Hints``: the request directory (or its deepest existing ancestor until
it exists) and each file it watches, on the inotify instance its process (or event loop) shares
with every other watcher (``_hub``); events only say which paths to look at again. Where inotify
cannot be used (not Linux, no inotify in the sandbox, out of instances or watches) the hints
close themselves and the watcher polls; that is logged once per process, as a warning that
names the limit reached.
"""

from __future__ import annotations

import _thread
import errno
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from dra_metadata._model._notices import warn

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:  # asyncio itself only where a loop runs: a sync wait never imports it
    import asyncio

    from dra_metadata._watch import _hub
    from dra_metadata._watch._signatures import Signature

# inotify masks (values from <sys/inotify.h>).
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_ONLYDIR = 0x01000000
_FILE_MASK = _IN_MODIFY | _IN_CLOSE_WRITE | _IN_ATTRIB | _IN_DELETE_SELF | _IN_MOVE_SELF
_DIRECTORY_MASK = (
    _IN_CREATE | _IN_MOVED_TO | _IN_MOVED_FROM | _IN_DELETE | _IN_CLOSE_WRITE | _IN_ATTRIB
    | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
)  # fmt: skip
_ANCESTOR_MASK = _IN_CREATE | _IN_MOVED_TO | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
_FALLBACK_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOSPC, errno.ENOSYS, errno.EPERM})
_VANISHED_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR})
"""A watch that failed because the path was gone (or no longer a directory) at that moment."""

_polling_logged = False


def log_polling(reason: str) -> None:
    """Warn once per process that watching falls back to polling, and why."""
    global _polling_logged  # noqa: PLW0603 - log once per process, as documented
    if not _polling_logged:
        _polling_logged = True
        try:
            warn("%s; watching by polling instead", reason)
        except (ImportError, OSError):  # out of descriptors (importing logging): nothing said
            return


def _limit(name: str) -> str:
    """The sysctl ``fs.inotify.<name>`` and its value where this process runs (in a user
    namespace, the namespace's own: /proc/sys/user/max_inotify_*)."""
    own = name.replace("max_user_", "max_inotify_")
    values = map(_read_number, (f"/proc/sys/user/{own}", f"/proc/sys/fs/inotify/{name}"))
    value = next((value for value in values if value is not None), None)
    return f"fs.inotify.{name}" if value is None else f"fs.inotify.{name} ({value})"


def _read_number(path: str) -> int | None:
    try:
        with open(path, "rb") as handle:  # noqa: PTH123
            return int(handle.read())
    except (OSError, ValueError):
        return None


def _out_of_descriptors(soft: int) -> bool:
    """Whether this process has all the descriptors its RLIMIT_NOFILE allows."""
    try:
        return len(os.listdir("/proc/self/fd")) >= soft - 1
    except OSError as error:
        return error.errno == errno.EMFILE


def instance_failure(error: OSError) -> str:
    """Why no inotify instance could be had, naming the limit that was reached."""
    reason = f"inotify cannot be used ({error})"
    if error.errno == errno.EMFILE:
        import resource  # noqa: PLC0415 - only when there is something to say

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft != resource.RLIM_INFINITY and _out_of_descriptors(soft):
            return (
                f"{reason}: this process has all the {soft} descriptors RLIMIT_NOFILE allows "
                "(raise ulimit -n)"
            )
        return (
            f"{reason}: this user ID has all the inotify instances {_limit('max_user_instances')}"
            " allows on this node, across all its processes (raise it with sysctl, or end "
            "some of them)"
        )
    if error.errno == errno.ENFILE:
        return f"{reason}: the system's limit of open files (fs.file-max) is reached"
    return reason


def watch_failure(path: Path, error: OSError) -> str:
    """Why ``path`` could not be watched, naming the limit that was reached."""
    reason = f"inotify watch on {path} failed ({error.strerror})"
    if error.errno == errno.ENOSPC:
        return (
            f"{reason}: this user ID has all the inotify watches "
            f"{_limit('max_user_watches')} allows on this node (raise it with sysctl)"
        )
    return reason


def _is_directory(path: Path) -> bool:
    """False for anything that cannot be looked at, too (EACCES: the scan reports it)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)  # noqa: PTH116
    except OSError:
        return False


def _deepest_directory(directory: Path) -> Path:
    """``directory`` when it is one, else its deepest ancestor that is."""
    target = directory
    while not _is_directory(target) and target.parent != target:
        target = target.parent
    return target


_MOVES = 8
"""How many times one scan moves the directory watch after the tree changed under it; a tree
that keeps changing faster is left to the next scan (its events, or the timed re-check)."""


def _nothing() -> None:
    pass


_Entry = tuple[bool, Path]  # (a directory watch, the path watched)


class Hints:
    """One watcher's watches on the shared instance; events say which paths to look at again.

    ``loop`` (set before ``start``) chooses the event loop's instance over the process's;
    ``wake`` is called (from the hub's thread, or the loop) when there is something to take.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.wake: Callable[[], None] = _nothing
        self._lock = _thread.allocate_lock()  # the changes, between the hub and the watcher
        self._changed: set[Path] = set()
        self._overflowed = False
        self._hub: _hub.Hub | None = None
        self._gave_up = False
        self._entries: dict[int, set[_Entry]] = {}  # descriptor -> what it watches for us
        self._file_watches: dict[Path, tuple[int, tuple[int, int]]] = {}
        self._directory_watch: tuple[int, Path] | None = None
        self._directory_changed = False  # its inode had an event (moved, removed, chmod)

    def start(self) -> bool:
        """Join the shared instance; False (and polling logged) where that is not possible."""
        if self._gave_up:
            return False
        if not sys.platform.startswith("linux"):
            log_polling(f"inotify is not available on {sys.platform}")
            return False
        try:
            # Loaded when a watch starts (its thread, its instance); in a process out of
            # descriptors, opening the module fails as the instance would: then it polls.
            from dra_metadata._watch import _hub  # noqa: PLC0415

            self._hub = _hub.join(self, self.loop)
        except OSError as error:
            log_polling(instance_failure(error))
            return False
        except (ImportError, RuntimeError) as error:
            log_polling(f"inotify cannot be used ({error})")
            return False
        return True

    @property
    def active(self) -> bool:
        return self._usable() is not None

    def _usable(self) -> _hub.Hub | None:
        """The hub, after dealing with a fork (a new instance) or a failed one (polling)."""
        hub = self._hub
        if hub is None or hub.usable:
            return hub
        if hub.pid != os.getpid():  # forked: the instance is the parent's; make our own
            self._lock = _thread.allocate_lock()
            self._forget()
            self.overflowed_queue()
            return self._hub if self.start() else None
        self._give_up(str(hub.failed))
        return None

    def _forget(self) -> None:
        self._hub = None
        self._entries.clear()
        self._file_watches.clear()
        self._directory_watch = None

    def close(self) -> None:
        hub = self._hub
        if hub is not None and hub.pid == os.getpid():
            from dra_metadata._watch import _hub  # noqa: PLC0415 - loaded when it started

            _hub.leave(self, hub, list(self._entries))
        self._forget()

    def _give_up(self, reason: str) -> None:
        log_polling(reason)
        self.close()
        self._gave_up = True  # not again: the watcher polls from now on
        self.overflowed_queue()  # events may have been lost: look at everything again

    def pending(self) -> bool:
        """Whether events arrived that ``take`` would return."""
        return bool(self._changed) or self._overflowed

    def take(self) -> tuple[set[Path], bool]:
        """The paths events pointed at, and whether events were lost, since the last take."""
        if not self._changed and not self._overflowed:
            return set(), False  # what arrives meanwhile is pending for the next take
        with self._lock:
            changed, self._changed = self._changed, set()
            overflowed, self._overflowed = self._overflowed, False
        return changed, overflowed

    # Called by the hub, its lock held --------------------------------------------------------

    def hinted(self, descriptor: int, name: str) -> None:
        with self._lock:
            for directory, path in self._entries.get(descriptor, ()):
                self._changed.add(path / name if directory and name else path)
                self._directory_changed |= directory and not name

    def watching(self, descriptor: int, entry: _Entry) -> None:
        self._entries.setdefault(descriptor, set()).add(entry)

    def lost(self, descriptor: int) -> None:
        # Only the entries: the watcher's thread re-adds what it still needs at its next scan.
        entries = self._entries.pop(descriptor, set())
        with self._lock:
            self._changed.update(path for _, path in entries)

    def overflowed_queue(self) -> None:
        with self._lock:
            self._overflowed = True

    def stat_changed(self, path: Path) -> None:
        with self._lock:
            self._changed.add(path)

    def expect(self, interval: float, signatures: dict[Path, Signature]) -> bool:
        """Have the hub look at ``signatures``' paths every ``interval`` seconds and hint
        the ones that differ; False where there is no hub (polling)."""
        hub = self._usable()
        if hub is None:
            return False
        hub.expect(self, interval, signatures)
        return True

    # Watches ---------------------------------------------------------------------------------

    def _try_add(
        self, hub: _hub.Hub, path: Path, mask: int, entry: _Entry
    ) -> tuple[int | None, bool]:
        """The watch's descriptor (None: not watched), and whether ``path`` was gone."""
        try:
            return hub.add_watch(self, path, mask, entry), False
        except OSError as error:
            if error.errno in _FALLBACK_ERRNOS:
                self._give_up(watch_failure(path, error))
            # ENOENT, ENOTDIR, EACCES, ELOOP: not watchable; the re-reads cover it
            return None, error.errno in _VANISHED_ERRNOS

    def _drop(self, hub: _hub.Hub, descriptor: int, entry: _Entry) -> None:
        with hub.lock:
            entries = self._entries.get(descriptor)
            if entries is None:
                return  # lost with its inode
            entries.discard(entry)
            if entries:
                return
            del self._entries[descriptor]
        hub.release(self, [descriptor])

    def watch_directory(self, directory: Path) -> None:
        """Watch ``directory``, or its deepest existing ancestor until it exists.

        A directory can appear (or go) between the look that chose what to watch and the
        watch itself, which then sees nothing of it: so after each watch on an ancestor (or a
        watch that failed) look again, and move the watch while it is no longer the right one.
        """
        hub = self._usable()
        if hub is None:
            return
        current = self._directory_watch
        watched = None if current is None or current[0] not in self._entries else current[1]
        with self._lock:
            changed, self._directory_changed = self._directory_changed, False
        if watched == directory and not changed:
            return  # nothing happened to the directory itself: no need to look at it
        target = _deepest_directory(directory)
        for _ in range(_MOVES):
            if watched == target and not changed:
                return
            watched, vanished = self._move_directory_watch(hub, directory, target)
            if self._hub is None or watched == directory:
                return  # gave up (polling from now on), or the directory itself is watched
            changed = False
            again = _deepest_directory(directory)
            if again == target and not vanished:
                return  # still the right one (or the best there is: one that is not watchable)
            # The tree changed between the look and the watch: follow it. A target that was
            # gone when it was to be watched and is there again is a new directory by that
            # name (removed and made again meanwhile): it is watched on the next round.
            target = again

    def _move_directory_watch(
        self, hub: _hub.Hub, directory: Path, target: Path
    ) -> tuple[Path | None, bool]:
        """Watch ``target`` instead of what was watched: what is watched now (None: nothing),
        and whether ``target`` was gone when it was to be watched."""
        current = self._directory_watch
        mask = _DIRECTORY_MASK if target == directory else _ANCESTOR_MASK
        descriptor, vanished = self._try_add(hub, target, mask, (True, target))
        if current is not None and (current[0], current[1]) != (descriptor, target):
            self._drop(hub, current[0], (True, current[1]))
        if descriptor is not None and self._hub is not None:
            self._directory_watch = (descriptor, target)
            return target, False
        self._directory_watch = None
        return None, vanished

    def watch_file(self, path: Path, identity: tuple[int, int]) -> None:
        """Watch the file at ``path``, again when it is another inode than last time."""
        hub = self._usable()
        if hub is None:
            return
        current = self._file_watches.get(path)
        if current is not None and current[1] == identity and current[0] in self._entries:
            return
        descriptor = self._try_add(hub, path, _FILE_MASK, (False, path))[0]
        if self._hub is None:
            return  # gave up
        if current is not None:
            del self._file_watches[path]
            if current[0] != descriptor:
                self._drop(hub, current[0], (False, path))
        if descriptor is not None:
            self._file_watches[path] = (descriptor, identity)

    def unwatch_file(self, path: Path) -> None:
        hub = self._usable()
        current = self._file_watches.pop(path, None)
        if current is not None and hub is not None:
            self._drop(hub, current[0], (False, path))
