"""inotify as a source of hints: which paths may have changed, never what they hold.

One instance per watcher, watching the request directory (or its deepest existing ancestor
until it exists) and each file; events only say which paths to look at again. Where inotify
cannot be used (not Linux, no inotify in the sandbox, out of instances or watches) the hints
close themselves and the watcher polls; that is logged once per process.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from pathlib import Path
from typing import Any

# inotify masks (values from <sys/inotify.h>).
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
_IN_ONLYDIR = 0x01000000
_FILE_MASK = _IN_MODIFY | _IN_CLOSE_WRITE | _IN_ATTRIB | _IN_DELETE_SELF | _IN_MOVE_SELF
_DIRECTORY_MASK = (
    _IN_CREATE | _IN_MOVED_TO | _IN_MOVED_FROM | _IN_DELETE | _IN_CLOSE_WRITE | _IN_ATTRIB
    | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
)  # fmt: skip
_ANCESTOR_MASK = _IN_CREATE | _IN_MOVED_TO | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
_FALLBACK_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOSPC, errno.ENOSYS, errno.EPERM})

_polling_logged = False


def log_polling(reason: str) -> None:
    """Say once per process that watching falls back to polling, and why."""
    global _polling_logged  # noqa: PLW0603 - log once per process, as documented
    if not _polling_logged:
        _polling_logged = True
        try:
            import logging  # noqa: PLC0415 - only when there is something to say
        except (ImportError, OSError):  # out of descriptors: nothing can be said
            return
        logging.getLogger("dra_metadata").info("%s; watching by polling instead", reason)


def _is_directory(path: Path) -> bool:
    """False for anything that cannot be looked at, too (EACCES: the scan reports it)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)  # noqa: PTH116
    except OSError:
        return False


class Hints:
    """An inotify instance and its watches; ``changed`` collects the paths events point at."""

    def __init__(self) -> None:
        self.changed: set[Path] = set()
        self.overflowed = False
        self._inotify: Any = None
        self._watches: dict[int, tuple[str, Path]] = {}  # wd -> (kind, path)
        self._file_watches: dict[Path, tuple[int, tuple[int, int]]] = {}
        self._directory_watch: tuple[int, Path] | None = None

    def start(self) -> bool:
        """Open the inotify instance; False (and polling logged) where that is not possible."""
        if not sys.platform.startswith("linux"):
            log_polling(f"inotify is not available on {sys.platform}")
            return False
        try:
            from inotify_simple import INotify  # noqa: PLC0415 - only when watching

            self._inotify = INotify(nonblocking=True)
        except (ImportError, OSError) as error:
            log_polling(f"inotify cannot be used ({error})")
            return False
        return True

    @property
    def active(self) -> bool:
        return self._inotify is not None

    def fileno(self) -> int | None:
        return None if self._inotify is None else int(self._inotify.fileno())

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
        self._inotify = None
        self._watches.clear()
        self._file_watches.clear()
        self._directory_watch = None

    def _give_up(self, reason: str) -> None:
        log_polling(reason)
        self.close()
        self.overflowed = True  # events may have been lost: look at everything again

    def _add_watch(self, path: Path, mask: int) -> int | None:
        try:
            return int(self._inotify.add_watch(path, mask))
        except OSError as error:
            if error.errno in _FALLBACK_ERRNOS:
                self._give_up(f"inotify watch on {path} failed ({error.strerror})")
            return None  # ENOENT, ENOTDIR, EACCES, ELOOP: not watchable; the re-reads cover it

    def _remove_watch(self, descriptor: int) -> None:
        self._watches.pop(descriptor, None)
        with contextlib.suppress(OSError):  # already gone with its inode
            self._inotify.rm_watch(descriptor)

    def watch_directory(self, directory: Path) -> None:
        """Watch ``directory``, or its deepest existing ancestor until it exists."""
        if self._inotify is None:
            return
        target = directory
        while not _is_directory(target) and target.parent != target:
            target = target.parent
        if self._directory_watch is not None and self._directory_watch[1] == target:
            return
        if self._directory_watch is not None:
            self._remove_watch(self._directory_watch[0])
            self._directory_watch = None
        descriptor = self._add_watch(
            target, _DIRECTORY_MASK if target == directory else _ANCESTOR_MASK
        )
        if descriptor is not None and self._inotify is not None:
            self._directory_watch = (descriptor, target)
            self._watches[descriptor] = ("directory", target)

    def watch_file(self, path: Path, identity: tuple[int, int]) -> None:
        """Watch the file at ``path``, again when it is another inode than last time."""
        if self._inotify is None:
            return
        current = self._file_watches.get(path)
        if current is not None and current[1] == identity:
            return
        descriptor = self._add_watch(path, _FILE_MASK)
        if descriptor is not None and self._inotify is not None:
            self._file_watches[path] = (descriptor, identity)
            self._watches[descriptor] = ("file", path)

    def unwatch_file(self, path: Path) -> None:
        current = self._file_watches.pop(path, None)
        if current is not None and self._inotify is not None:
            shared = any(watch[0] == current[0] for watch in self._file_watches.values())
            if not shared:
                self._remove_watch(current[0])

    def drain(self) -> bool:
        """Read pending events into ``changed``; True when there were any."""
        if self._inotify is None:
            return False
        try:
            events = self._inotify.read(timeout=0)
        except OSError as error:
            self._give_up(f"reading inotify events failed ({error.strerror})")
            return True  # look at everything again, by polling now
        for event in events:
            if event.mask & _IN_Q_OVERFLOW:
                self.overflowed = True
                continue
            watched = self._watches.get(event.wd)
            if event.mask & _IN_IGNORED:
                self._watches.pop(event.wd, None)
                if self._directory_watch is not None and self._directory_watch[0] == event.wd:
                    self._directory_watch = None
                continue
            if watched is None:
                continue
            kind, path = watched
            self.changed.add(path / event.name if kind == "directory" and event.name else path)
        return bool(events)
