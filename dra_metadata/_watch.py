"""Watching metadata for generation changes: inotify events are hints, re-reading is the truth.

Facts that shape this module (see the README, "Waiting and watching"):

* Drivers rewrite a file in place (alpha writer) or replace it by rename (beta writer). Inside a
  container each file is a read-only bind mount of one host file: an in-place write fires
  IN_MODIFY/IN_CLOSE_WRITE on a watch of the file, its directory sees nothing, and a reader can
  see an empty or half-written file ("not ready yet"). A host-side rename leaves the container on
  the old inode forever; the only sign is a link count of 0 ("stale").
* inotify is blind or missing in some sandboxes, on network file systems and off Linux, and its
  instances are limited per user across a node: one instance per watcher, a timed re-read at
  every poll interval whatever happens, and polling when inotify cannot be used.
* Generations are per file (per driver) and never compared across files.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import select
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dra_metadata._decode import decode_bytes
from dra_metadata._errors import (
    MetadataDecodeError,
    MetadataNotFoundError,
    NoMetadataError,
    StaleMetadataError,
    WaitTimeoutError,
)
from dra_metadata._models import Device, DeviceMetadata, MetadataSource, camel
from dra_metadata._paths import (
    METADATA_FILE_SUFFIX,
    StrPath,
    driver_of_file_name,
    metadata_file_name,
    request_dir,
)
from dra_metadata._read import list_metadata_files, read_file_bytes, request_view

FORCE_POLLING_ENVIRONMENT_VARIABLE = "DRA_METADATA_FORCE_POLLING"
"""Set to 1 to make every watcher poll instead of using inotify."""

_STOP_CHECK_SECONDS = 0.1  # stop_event is looked at least this often
_FIRST_RETRY_SECONDS = 0.005  # re-read of a file caught in the middle of a write
_CONFIRM_SECONDS = 0.05  # re-read before reporting a file that cannot be decoded

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


class StopEvent(Protocol):
    """Anything with ``is_set()``: threading.Event, asyncio.Event, multiprocessing.Event."""

    def is_set(self) -> bool: ...


class MetadataEventKind(enum.Enum):
    """What happened to a metadata file."""

    CREATED = "created"
    """First seen (at start, or when it appeared)."""
    UPDATED = "updated"
    """The driver raised the file's generation."""
    REPLACED = "replaced"
    """The generation went down, or the content changed under the same generation, or the file
    came back after being removed: the claim was prepared again."""
    STALE = "stale"
    """The file was unlinked on the host; this container's view is frozen (restart it)."""
    REMOVED = "removed"
    """The path is gone."""

    __module__ = "dra_metadata"


@dataclass(frozen=True, slots=True)
class MetadataEvent:
    """One change seen by a watcher."""

    kind: MetadataEventKind
    metadata: DeviceMetadata | None
    """The latest metadata of everything watched (merged across drivers), or None."""
    generations: Mapping[str, int]
    """Generation of each file present, by driver (by file name when it names no driver)."""
    paths: tuple[Path, ...]
    """The file(s) this event is about."""
    driver: str | None = None
    """The driver of the file this event is about, when its name says."""

    __module__ = "dra_metadata"


@dataclass
class _FileState:
    driver: str | None
    identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the last good read
    content: bytes | None = None
    source: MetadataSource | None = None
    stale_reported: bool = False
    retry_at: float | None = None
    retry_delay: float = _FIRST_RETRY_SECONDS
    problem: str | None = None  # why the file is not usable yet
    failed_error: MetadataDecodeError | None = None


def _key(path: Path, driver: str | None) -> str:
    return driver if driver is not None else path.name


@dataclass
class _Watcher:
    """The state machine shared by the sync and async watch functions."""

    directory: Path
    single_file: Path | None
    poll_interval: float
    force_polling: bool
    files: dict[Path, _FileState] = field(default_factory=dict)
    removed: dict[Path, MetadataSource] = field(default_factory=dict)
    dirty: set[Path] = field(default_factory=set)
    full_scan_due: float = 0.0
    problem: str | None = None
    _inotify: Any = None
    _watches: dict[int, tuple[str, Path]] = field(default_factory=dict)  # wd -> (kind, path)
    _file_watches: dict[Path, tuple[int, tuple[int, int]]] = field(default_factory=dict)
    _directory_watch: tuple[int, Path] | None = None
    _poller: Any = None

    defer_inotify: bool = False
    """Start inotify only when there is something to wait for (wait_until: often ready at once)."""
    request_name: str | None = None
    """The request (or subrequest) the caller asked for; None (a single file) selects nothing."""

    def __post_init__(self) -> None:
        if not self.force_polling and not self.defer_inotify:
            self._start_inotify()

    # inotify ---------------------------------------------------------------------------

    def _start_inotify(self) -> None:
        if not sys.platform.startswith("linux"):
            _log_polling(f"inotify is not available on {sys.platform}")
            return
        try:
            from inotify_simple import INotify  # noqa: PLC0415 - only when watching

            self._inotify = INotify(nonblocking=True)
        except (ImportError, OSError) as error:
            _log_polling(f"inotify cannot be used ({error})")
            return
        self._poller = select.poll()
        self._poller.register(self._inotify.fileno(), select.POLLIN)

    def _stop_inotify(self, reason: str) -> None:
        _log_polling(reason)
        self.close()

    def fileno(self) -> int | None:
        return None if self._inotify is None else int(self._inotify.fileno())

    def _add_watch(self, path: Path, mask: int) -> int | None:
        try:
            return int(self._inotify.add_watch(path, mask))
        except OSError as error:
            if error.errno in _FALLBACK_ERRNOS:
                self._stop_inotify(f"inotify watch on {path} failed ({error.strerror})")
            return None  # ENOENT, ENOTDIR, EACCES: gone or not watchable; polling covers it

    def _remove_watch(self, descriptor: int) -> None:
        self._watches.pop(descriptor, None)
        with contextlib.suppress(OSError):  # already gone with its inode
            self._inotify.rm_watch(descriptor)

    def _watch_directory(self) -> None:
        """Watch the request directory, or its deepest existing ancestor until it exists."""
        target = self.directory
        while not target.is_dir() and target.parent != target:
            target = target.parent
        if self._directory_watch is not None and self._directory_watch[1] == target:
            return
        if self._directory_watch is not None:
            self._remove_watch(self._directory_watch[0])
            self._directory_watch = None
        mask = _DIRECTORY_MASK if target == self.directory else _ANCESTOR_MASK
        descriptor = self._add_watch(target, mask)
        if descriptor is not None and self._inotify is not None:
            self._directory_watch = (descriptor, target)
            self._watches[descriptor] = ("directory", target)

    def _watch_file(self, path: Path, identity: tuple[int, int]) -> None:
        current = self._file_watches.get(path)
        if current is not None and current[1] == identity:
            return
        descriptor = self._add_watch(path, _FILE_MASK)
        if descriptor is not None and self._inotify is not None:
            self._file_watches[path] = (descriptor, identity)
            self._watches[descriptor] = ("file", path)

    def _unwatch_file(self, path: Path) -> None:
        current = self._file_watches.pop(path, None)
        if current is not None and self._inotify is not None:
            shared = any(watch[0] == current[0] for watch in self._file_watches.values())
            if not shared:
                self._remove_watch(current[0])

    def drain(self) -> None:
        """Read pending inotify events and remember what they point at."""
        if self._inotify is None:
            return
        try:
            events = self._inotify.read(timeout=0)
        except OSError as error:
            self._stop_inotify(f"reading inotify events failed ({error.strerror})")
            return
        for event in events:
            if event.mask & _IN_Q_OVERFLOW:
                self.full_scan_due = 0.0
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
            if kind == "file":
                self.dirty.add(path)
            else:
                self.dirty.add(path / event.name if event.name else path)

    def wait(self, seconds: float) -> None:
        """Sleep until an inotify event arrives or ``seconds`` pass."""
        if self.defer_inotify:
            self.defer_inotify = False
            if not self.force_polling:
                self._start_inotify()
                self.full_scan_due = 0.0  # look again now that changes cannot be missed
                return
        if self._poller is None or self._inotify is None:
            time.sleep(seconds)
            return
        if self._poller.poll(max(0, int(seconds * 1000 + 0.999))):
            self.drain()

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
        self._inotify = None
        self._poller = None
        self._watches.clear()
        self._file_watches.clear()
        self._directory_watch = None

    # scanning --------------------------------------------------------------------------

    def _candidates(self) -> list[Path]:
        if self.single_file is not None:
            return [self.single_file]
        return list_metadata_files(self.directory)

    def next_wake(self) -> float:
        retries = [state.retry_at for state in self.files.values() if state.retry_at is not None]
        return min([self.full_scan_due, *retries])

    def scan(self, now: float) -> list[MetadataEvent]:
        """Look at the files (re-reading what may have changed) and report what did."""
        full = now >= self.full_scan_due
        if full:
            self.full_scan_due = now + self.poll_interval
        if self._inotify is not None:
            self._watch_directory()
        dirty, self.dirty = self.dirty, set()
        changes: list[tuple[MetadataEventKind, Path, str | None]] = []
        present = self._candidates()
        for path in sorted(set(present) | set(self.files), key=lambda p: os.fsencode(p.name)):
            self._scan_file(path, now, full=full or path in dirty, changes=changes)
        self.problem = self._describe_problem()
        if not changes:
            return []
        metadata = self.current()
        generations = {
            _key(path, state.driver): state.source.generation
            for path, state in sorted(self.files.items())
            if state.source is not None
        }
        return [
            MetadataEvent(kind, metadata, generations, (path,), driver)
            for kind, path, driver in changes
        ]

    def _scan_file(
        self,
        path: Path,
        now: float,
        *,
        full: bool,
        changes: list[tuple[MetadataEventKind, Path, str | None]],
    ) -> None:
        state = self.files.get(path)
        try:
            status = path.stat()
        except FileNotFoundError:
            status = None
        if status is None:
            if state is not None:
                del self.files[path]
                self._unwatch_file(path)
                if state.source is not None:
                    self.removed[path] = state.source
                    changes.append((MetadataEventKind.REMOVED, path, state.driver))
            return
        if state is None:
            name = path.name
            driver = driver_of_file_name(name) if name.endswith(METADATA_FILE_SUFFIX) else None
            state = self.files[path] = _FileState(driver)
        identity = (status.st_dev, status.st_ino)
        if self._inotify is not None:
            self._watch_file(path, identity)
        due = state.retry_at is not None and now >= state.retry_at
        if full or due or state.source is None or identity != state.identity:
            self._read(path, state, identity, now, changes)
        # A link count of 0 on the path itself: a bind mount pinning a file unlinked on the host.
        stale = status.st_nlink == 0 and state.source is not None
        if stale and not state.stale_reported:
            changes.append((MetadataEventKind.STALE, path, state.driver))
        state.stale_reported = stale

    def _read(
        self,
        path: Path,
        state: _FileState,
        identity: tuple[int, int],
        now: float,
        changes: list[tuple[MetadataEventKind, Path, str | None]],
    ) -> None:
        try:
            data = read_file_bytes(path)
        except MetadataNotFoundError:
            return  # removed meanwhile: the next scan reports it
        if data == state.content and identity == state.identity:
            state.retry_at = None
            return
        try:
            if not data:
                raise NoMetadataError("the file is empty (in the middle of a write?)", path=path)
            result = decode_bytes(data, path)
        except MetadataDecodeError as error:
            self._not_decodable(state, error, now)
            return
        previous = state.source
        recreated = previous is None and self.removed.pop(path, None) is not None
        source = MetadataSource(path, state.driver, result.metadata, result.skipped_versions)
        state.identity, state.content, state.source = identity, data, source
        state.retry_at, state.retry_delay, state.problem = None, _FIRST_RETRY_SECONDS, None
        state.failed_error = None
        kind = MetadataEventKind.REPLACED if recreated else _classify(previous, source)
        if kind is not None:
            changes.append((kind, path, state.driver))

    def _not_decodable(self, state: _FileState, error: MetadataDecodeError, now: float) -> None:
        """A file caught mid-write is re-read soon; one still broken after a pause is reported."""
        if isinstance(error, NoMetadataError) or error.truncated:
            state.problem = f"{error.path}: being written or truncated ({error.message})"
            state.retry_at = now + state.retry_delay
            state.retry_delay = min(state.retry_delay * 2, self.poll_interval)
            return
        if state.failed_error is not None and str(state.failed_error) == str(error):
            raise error
        state.failed_error = error
        state.problem = str(error)
        state.retry_at = now + _CONFIRM_SECONDS

    def _describe_problem(self) -> str | None:
        problems = [state.problem for state in self.files.values() if state.problem]
        if problems:
            return "; ".join(problems)
        if not self.files:
            if self.single_file is not None:
                return f"{self.single_file} does not exist yet"
            return f"no *{METADATA_FILE_SUFFIX} file in {self.directory} yet"
        return None

    def current(self) -> DeviceMetadata | None:
        """The latest metadata of all readable files (merged), or None."""
        sources = tuple(
            state.source
            for _, state in sorted(self.files.items(), key=lambda item: os.fsencode(item[0].name))
            if state.source is not None
        )
        if not sources:
            return None
        return request_view(sources, self.directory, self.request_name, stale=self.stale_paths())

    def stale_paths(self) -> list[Path]:
        return [path for path, state in self.files.items() if state.stale_reported]


def _classify(previous: MetadataSource | None, current: MetadataSource) -> MetadataEventKind | None:
    """The kind of change from ``previous`` to ``current`` of one file (None: no change)."""
    if previous is None:
        return MetadataEventKind.CREATED
    if current.generation > previous.generation:
        return MetadataEventKind.UPDATED
    if current.generation < previous.generation or current.metadata != previous.metadata:
        return MetadataEventKind.REPLACED
    return None  # the same generation and content, rewritten


def _log_polling(reason: str) -> None:
    global _polling_logged  # noqa: PLW0603 - log once per process, as documented
    if not _polling_logged:
        _polling_logged = True
        try:
            import logging  # noqa: PLC0415 - only when there is something to say
        except (ImportError, OSError):  # out of descriptors: nothing can be said
            return
        logging.getLogger("dra_metadata").info("%s; watching by polling instead", reason)


def _resolve_force_polling(force_polling: bool | None) -> bool:
    if force_polling is not None:
        return force_polling
    return os.environ.get(FORCE_POLLING_ENVIRONMENT_VARIABLE, "").lower() in {"1", "true", "yes"}


def _make_watcher(
    directory: Path,
    single_file: Path | None,
    poll_interval: float,
    force_polling: bool | None,
    *,
    defer_inotify: bool = False,
    request_name: str | None = None,
) -> Callable[[], _Watcher]:
    """Check the options now; the watcher (and its inotify descriptor) is made when iterating."""
    if not poll_interval > 0:
        raise ValueError(f"poll_interval must be positive, not {poll_interval!r}")
    polling = _resolve_force_polling(force_polling)
    return lambda: _Watcher(
        directory,
        single_file,
        poll_interval,
        polling,
        defer_inotify=defer_inotify,
        request_name=request_name,
    )


def _claim_watcher(
    claim_name: str,
    request_name: str,
    *,
    template: bool,
    driver: str | None,
    root: StrPath | None,
    poll_interval: float,
    force_polling: bool | None,
    defer_inotify: bool = False,
) -> Callable[[], _Watcher]:
    """A watcher maker for a request directory, or for one driver's file in it."""
    directory = request_dir(claim_name, request_name, template=template, root=root)
    single = directory / metadata_file_name(driver) if driver is not None else None
    return _make_watcher(
        directory,
        single,
        poll_interval,
        force_polling,
        defer_inotify=defer_inotify,
        request_name=request_name,
    )


def _checked_timeout(timeout: float | None) -> float | None:
    if timeout is not None and not timeout >= 0:
        raise ValueError(f"timeout must be None (no limit) or >= 0 seconds, not {timeout!r}")
    return timeout


def _file_watcher(
    path: StrPath, poll_interval: float, force_polling: bool | None
) -> Callable[[], _Watcher]:
    file_path = Path(path)
    return _make_watcher(file_path.parent, file_path, poll_interval, force_polling)


def _run(
    watcher: _Watcher, *, timeout: float | None, stop_event: StopEvent | None
) -> Iterator[MetadataEvent | float]:
    """The watch loop, shared by sync and async: yields events, and seconds to wait."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while stop_event is None or not stop_event.is_set():
            yield from watcher.scan(time.monotonic())
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return
            wake = watcher.next_wake()
            if deadline is not None:
                wake = min(wake, deadline)
            seconds = max(0.0, wake - now)
            if stop_event is not None:
                seconds = min(seconds, _STOP_CHECK_SECONDS)
            yield seconds
    finally:
        watcher.close()


def _watch(
    make_watcher: Callable[[], _Watcher], timeout: float | None, stop_event: StopEvent | None
) -> Iterator[MetadataEvent]:
    watcher = make_watcher()
    for item in _run(watcher, timeout=timeout, stop_event=stop_event):
        if isinstance(item, MetadataEvent):
            yield item
        else:
            watcher.wait(item)


async def _awatch(
    make_watcher: Callable[[], _Watcher], timeout: float | None, stop_event: StopEvent | None
) -> AsyncIterator[MetadataEvent]:
    import asyncio  # noqa: PLC0415 - only for the async twins

    loop = asyncio.get_running_loop()
    watcher = make_watcher()
    woke = asyncio.Event()
    descriptor = watcher.fileno()
    if descriptor is not None:
        loop.add_reader(descriptor, woke.set)
    try:
        for item in _run(watcher, timeout=timeout, stop_event=stop_event):
            if isinstance(item, MetadataEvent):
                yield item
                continue
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(woke.wait(), timeout=item)
            woke.clear()
            watcher.drain()
            if descriptor is not None and watcher.fileno() is None:  # fell back to polling
                loop.remove_reader(descriptor)
                descriptor = None
    finally:
        if descriptor is not None:
            loop.remove_reader(descriptor)
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
) -> Iterator[MetadataEvent]:
    """Yield a MetadataEvent whenever the metadata of a claim's request changes.

    Files absent at the start are waited for. Ends after ``timeout`` seconds, when
    ``stop_event`` is set, or when the caller stops iterating; every descriptor is closed then.
    ``force_polling`` (or ``DRA_METADATA_FORCE_POLLING=1``) polls every ``poll_interval``
    seconds instead of using inotify, which is otherwise complemented by a re-read at that
    interval.
    """
    watcher = _claim_watcher(
        claim_name,
        request_name,
        template=False,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
    )
    return _watch(watcher, _checked_timeout(timeout), stop_event)


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
) -> Iterator[MetadataEvent]:
    """watch_claim_metadata for a claim made from a template (by its pod claim name)."""
    watcher = _claim_watcher(
        pod_claim_name,
        request_name,
        template=True,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
    )
    return _watch(watcher, _checked_timeout(timeout), stop_event)


def watch_metadata_file(
    path: StrPath,
    *,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
) -> Iterator[MetadataEvent]:
    """watch_claim_metadata for any one metadata file."""
    return _watch(
        _file_watcher(path, poll_interval, force_polling), _checked_timeout(timeout), stop_event
    )


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
) -> AsyncIterator[MetadataEvent]:
    """The asyncio twin of watch_claim_metadata: ``async for event in awatch_...``.

    The inotify descriptor is registered with the event loop; nothing busy-waits.
    """
    watcher = _claim_watcher(
        claim_name,
        request_name,
        template=False,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
    )
    return _awatch(watcher, _checked_timeout(timeout), stop_event)


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
) -> AsyncIterator[MetadataEvent]:
    """The asyncio twin of watch_template_metadata."""
    watcher = _claim_watcher(
        pod_claim_name,
        request_name,
        template=True,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
    )
    return _awatch(watcher, _checked_timeout(timeout), stop_event)


def awatch_metadata_file(
    path: StrPath,
    *,
    timeout: float | None = None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
) -> AsyncIterator[MetadataEvent]:
    """The asyncio twin of watch_metadata_file."""
    return _awatch(
        _file_watcher(path, poll_interval, force_polling), _checked_timeout(timeout), stop_event
    )


Condition = Callable[[DeviceMetadata], "str | None"]
"""Returns None when the metadata is ready, else a sentence saying why it is not."""


def _generations(metadata: DeviceMetadata) -> str:
    sources = metadata.sources
    if len(sources) == 1:
        return f"generation {sources[0].generation}"
    return ", ".join(f"{source.driver} generation {source.generation}" for source in sources)


def wait_until(  # noqa: PLR0913 - wait_for's options, and progress reporting
    condition: Condition,
    claim_name: str,
    request_name: str,
    *,
    template: bool = False,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    progress: Callable[[str], None] | None = None,
    progress_interval: float = 5.0,
) -> DeviceMetadata:
    """Wait until ``condition(metadata)`` returns None (ready) and return that metadata.

    ``condition`` returns a sentence saying why the metadata is not ready otherwise; it ends up
    in the WaitTimeoutError raised after ``timeout`` seconds (None waits for ever), with the
    last metadata seen. StaleMetadataError is raised when a file the metadata comes from was
    replaced on the host and this container can no longer see updates. ``progress`` is called
    with that sentence every ``progress_interval`` seconds while waiting.
    """
    timeout = _checked_timeout(timeout)
    watcher = _claim_watcher(
        claim_name,
        request_name,
        template=template,
        driver=driver,
        root=root,
        poll_interval=poll_interval,
        force_polling=force_polling,
        defer_inotify=True,
    )()
    deadline = None if timeout is None else time.monotonic() + timeout
    next_progress = time.monotonic() + progress_interval
    metadata: DeviceMetadata | None = None
    try:
        while True:
            watcher.scan(time.monotonic())
            metadata = watcher.current()
            reason = condition(metadata) if metadata is not None else None
            if metadata is not None and reason is None:
                return metadata
            reason = "; ".join(filter(None, [reason, watcher.problem])) or "not ready"
            stale = watcher.stale_paths()
            if stale:
                raise StaleMetadataError(
                    f"the driver replaced {', '.join(map(str, stale))} on the host and this "
                    f"container keeps seeing the old file ({reason}); restart the container "
                    "to see the new one",
                    metadata=metadata,
                    path=stale[0],
                )
            now = time.monotonic()
            stopped = stop_event is not None and stop_event.is_set()
            if stopped or (deadline is not None and now >= deadline):
                raise WaitTimeoutError(
                    ("stopped; " if stopped else "") + reason,
                    metadata=metadata,
                    path=watcher.single_file or watcher.directory,
                    timeout=timeout if timeout is not None else 0.0,
                )
            if progress is not None and now >= next_progress:
                progress(reason)
                next_progress = now + progress_interval
            wake = watcher.next_wake()
            if deadline is not None:
                wake = min(wake, deadline)
            if progress is not None:
                wake = min(wake, next_progress)
            seconds = max(0.0, wake - now)
            if stop_event is not None:
                seconds = min(seconds, _STOP_CHECK_SECONDS)
            watcher.wait(seconds)
    finally:
        watcher.close()


def wait_for(
    predicate: Callable[[Device], bool],
    claim_name: str,
    request_name: str,
    *,
    template: bool = False,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None,
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
) -> DeviceMetadata:
    """Wait until every device of the request satisfies ``predicate``; return the metadata.

    ``template=True`` names a claim made from a template by its pod claim name. Raises
    WaitTimeoutError (a TimeoutError) with the last metadata seen and the reason, or
    StaleMetadataError.
    """

    def condition(metadata: DeviceMetadata) -> str | None:
        devices = metadata.devices
        if not devices:
            return f"{_generations(metadata)}, no devices"
        failing = [device.name for device in devices if not predicate(device)]
        if failing:
            names = ", ".join(failing)
            return f"{_generations(metadata)}, device {names} not ready"
        return None

    return wait_until(
        condition,
        claim_name,
        request_name,
        template=template,
        driver=driver,
        root=root,
        timeout=timeout,
        poll_interval=poll_interval,
        force_polling=force_polling,
        stop_event=stop_event,
    )


NETWORK_FIELDS = ("interface_name", "ips", "hardware_address")
"""Fields of NetworkDeviceData that wait_for_network_data can require."""


def network_data_condition(require: tuple[str, ...]) -> Condition:
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


def wait_for_network_data(
    claim_name: str,
    request_name: str,
    *,
    template: bool = False,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None,
    require: tuple[str, ...] = ("interface_name",),
    poll_interval: float = 1.0,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
) -> DeviceMetadata:
    """Wait until every device of the request has network data with the ``require``d fields.

    Which fields are required is the caller's choice (IPs can legitimately be empty without
    IPAM): any of "interface_name", "ips", "hardware_address". Raises as wait_for does.
    """
    return wait_until(
        network_data_condition(require),
        claim_name,
        request_name,
        template=template,
        driver=driver,
        root=root,
        timeout=timeout,
        poll_interval=poll_interval,
        force_polling=force_polling,
        stop_event=stop_event,
    )
