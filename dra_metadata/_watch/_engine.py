"""The watcher engine: the state of each watched file, and the scans that update it.

Facts that shape it (see docs/guides/waiting.md and docs/explanation/stale-views.md):

* Drivers rewrite a file in place (alpha writer) or replace it by rename (beta writer). Inside a
  container each file is a read-only bind mount of one host file: an in-place write fires
  IN_MODIFY/IN_CLOSE_WRITE on a watch of the file, its directory sees nothing, and a reader can
  see an empty or half-written file ("not ready yet"). A host-side rename leaves the container on
  the old inode forever; the only sign is a link count of 0 ("stale").
* inotify is blind or missing in some sandboxes and on network file systems: its events are
  hints (``_inotify.Hints``). Polling, every file is re-read at every poll interval. With
  inotify, the hub the watcher shares stats its paths every poll interval (all watchers'
  together, ``_hub.Hub.check``) and hints the ones whose status changed; every file is still
  re-read every ``BACKSTOP_INTERVALS`` poll intervals, for what neither inotify nor a status
  shows (a rewrite of the same size within one tick of the file system's clock, through a
  blind inotify).
* Generations are per file (per driver) and never compared across files.

A scan touches the file system; nothing else here does (but the hub's status check). Scans
happen when inotify or the status check says something changed, when a file caught mid-write
is due for another look, and at every poll interval (polling) or every BACKSTOP_INTERVALS of
them (inotify): never merely because a caller woke up (to look at its stop_event, say).
"""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path

from dra_metadata._decoding._decode import decode_bytes
from dra_metadata._model._errors import (
    MetadataDecodeError,
    MetadataNotFoundError,
    MetadataReadError,
    NoMetadataError,
)
from dra_metadata._model._metadata import DeviceMetadata, MetadataSource
from dra_metadata._reading._paths import (
    METADATA_FILE_SUFFIX,
    StrPath,
    driver_of_file_name,
    metadata_file_name,
    not_a_directory,
    request_dir,
)
from dra_metadata._reading._pinned import LOOKS, pinned
from dra_metadata._reading._read import (
    DEFAULT_MAX_SIZE,
    list_metadata_files,
    read_file,
    request_view,
)
from dra_metadata._watch._events import MetadataEvent, MetadataEventKind, classify
from dra_metadata._watch._inotify import Hints
from dra_metadata._watch._options import (
    checked_max_size,
    checked_poll_interval,
    resolve_force_polling,
)
from dra_metadata._watch._signatures import Signature, signature, signature_of

BACKSTOP_INTERVALS = 30
"""With inotify, every file is re-read at this many poll intervals whatever happens."""
_FIRST_RETRY_SECONDS = 0.005  # re-read of a file caught in the middle of a write
_CONFIRM_SECONDS = 0.05  # re-read before reporting a file that cannot be decoded

_Change = tuple[MetadataEventKind, Path, "str | None"]


class _FileState:
    """What a watcher knows of one file (plain slots: a dataclass would compile its methods
    when a wait starts)."""

    __slots__ = (
        "content",
        "driver",
        "failed_error",
        "identity",
        "problem",
        "retry_at",
        "retry_delay",
        "source",
        "stale_reported",
    )

    def __init__(self, driver: str | None) -> None:
        self.driver = driver
        self.identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the last good read
        self.content: bytes | None = None
        self.source: MetadataSource | None = None
        self.stale_reported = False
        self.retry_at: float | None = None
        self.retry_delay = _FIRST_RETRY_SECONDS
        self.problem: str | None = None  # why the file is not usable yet
        self.failed_error: MetadataDecodeError | None = None


def _key(path: Path, driver: str | None) -> str:
    return driver if driver is not None else path.name


def unreadable(path: Path, action: str, error: OSError) -> MetadataReadError:
    """The MetadataReadError for an OSError met while looking at ``path``.

    ENOENT never gets here: a missing file or directory is "not there yet" to a watcher.
    """
    if error.errno == errno.ENOTDIR:
        reason = f"{not_a_directory(path)} is not a directory"
    elif error.errno == errno.ELOOP:
        reason = "too many levels of symbolic links (a symlink loop?)"
    else:
        reason = error.strerror or str(error)
    return MetadataReadError(f"{action}: {reason}", path=path, os_errno=error.errno)


class Watcher:
    """The state machine behind every watch and wait, sync or async.

    ``max_size``: files larger than this are refused (MetadataTooLargeError), as the read
    functions do; ``request_name``: the request (or subrequest) the caller asked for (None, a
    single file, selects nothing). After a scan, ``problem`` says why the files are not usable
    yet (absent, being written, undecodable).
    """

    __slots__ = (
        "_last_status",
        "directory",
        "files",
        "force_polling",
        "full_scan_due",
        "hints",
        "max_size",
        "poll_interval",
        "problem",
        "removed",
        "request_name",
        "single_file",
    )

    def __init__(
        self,
        directory: Path,
        single_file: Path | None,
        poll_interval: float,
        force_polling: bool,
        max_size: int = DEFAULT_MAX_SIZE,
        *,
        request_name: str | None = None,
    ) -> None:
        self.directory = directory
        self.single_file = single_file
        self.poll_interval = poll_interval
        self.force_polling = force_polling
        self.max_size = max_size
        self.request_name = request_name
        self.files: dict[Path, _FileState] = {}
        self.removed: dict[Path, MetadataSource] = {}
        self.full_scan_due = 0.0
        self.problem: str | None = None
        self.hints = Hints()
        self._last_status: os.stat_result | None = None

    def start_hints(self) -> bool:
        """Start inotify unless polling is forced or it is running; True when it started."""
        if self.force_polling or self.hints.active:
            return False
        if self.hints.start():
            self.full_scan_due = 0.0  # look again now that no change can be missed
            return True
        return False

    def close(self) -> None:
        self.hints.close()

    def next_wake(self) -> float:
        """When the next scan is due at the latest (monotonic seconds)."""
        retries = [state.retry_at for state in self.files.values() if state.retry_at is not None]
        return min([self.full_scan_due, *retries])

    def due(self, now: float) -> bool:
        """Whether a scan has anything to do: events arrived, a re-read or a retry is due."""
        return self.hints.pending() or now >= self.next_wake()

    def scan(self, now: float) -> list[MetadataEvent]:
        """Look at the files (re-reading what may have changed) and report what did."""
        changed, overflowed = self.hints.take()
        full = now >= self.full_scan_due or overflowed
        if full:
            backstop = self.hints.active and self.poll_interval < math.inf
            interval = self.poll_interval * (BACKSTOP_INTERVALS if backstop else 1)
            self.full_scan_due = now + interval
        self.hints.watch_directory(self.directory)
        changes: list[_Change] = []
        signatures: dict[Path, Signature] = {}
        if self.single_file is None:  # before listing it: a change meanwhile is seen next time
            signatures[self.directory] = signature(self.directory)
        for path in sorted(set(self._candidates()) | set(self.files), key=_sort_key):
            self._scan_file(path, now, full=full or path in changed, changes=changes)
            signatures[path] = signature_of(self._last_status)
        if self.poll_interval < math.inf:
            self.hints.expect(self.poll_interval, signatures)
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

    def _candidates(self) -> list[Path]:
        if self.single_file is not None:
            return [self.single_file]
        return list_metadata_files(self.directory)

    def _status(self, path: Path) -> os.stat_result | None:
        """The status of ``path``; None while it is not there. A status with no link left is
        a frozen view only if the path still names that file once a rename over it would be
        over; else the path is looked at again (``_reading._pinned``)."""
        status = self._look(path)
        for _ in range(LOOKS):
            if status is None or status.st_nlink != 0 or pinned(path, status):
                break
            status = self._look(path)
        return status

    @staticmethod
    def _look(path: Path) -> os.stat_result | None:
        try:
            return os.stat(path)  # noqa: PTH116 - a str or Path, one system call
        except FileNotFoundError:
            return None
        except OSError as error:
            raise unreadable(path, "look at metadata file", error) from None

    def _scan_file(self, path: Path, now: float, *, full: bool, changes: list[_Change]) -> None:
        state = self.files.get(path)
        status = self._last_status = self._status(path)
        if status is None:
            if state is not None:
                del self.files[path]
                self.hints.unwatch_file(path)
                if state.source is not None:
                    self.removed[path] = state.source
                    changes.append((MetadataEventKind.REMOVED, path, state.driver))
            return
        if state is None:
            name = path.name
            driver = driver_of_file_name(name) if name.endswith(METADATA_FILE_SUFFIX) else None
            state = self.files[path] = _FileState(driver)
        identity = (status.st_dev, status.st_ino)
        self.hints.watch_file(path, identity)
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
        changes: list[_Change],
    ) -> None:
        try:
            data = read_file(path, max_size=self.max_size)[0]
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
        kind = MetadataEventKind.REPLACED if recreated else classify(previous, source)
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
            for _, state in sorted(self.files.items(), key=lambda item: _sort_key(item[0]))
            if state.source is not None
        )
        if not sources:
            return None
        return request_view(sources, self.directory, self.request_name, stale=self.stale_paths())

    def stale_paths(self) -> list[Path]:
        return [path for path, state in self.files.items() if state.stale_reported]


def _sort_key(path: Path) -> bytes:
    return os.fsencode(path.name)


def claim_watcher(
    claim_name: str,
    request_name: str,
    *,
    template: bool,
    driver: str | None,
    root: StrPath | None,
    poll_interval: float,
    force_polling: bool | None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> Watcher:
    """A watcher of a request directory, or of one driver's file in it; inotify not started.

    Every argument is checked here, at the call, before anything is opened.
    """
    directory = request_dir(claim_name, request_name, template=template, root=root)
    single = directory / metadata_file_name(driver) if driver is not None else None
    return Watcher(
        directory,
        single,
        checked_poll_interval(poll_interval),
        resolve_force_polling(force_polling),
        checked_max_size(max_size),
        request_name=request_name,
    )


def file_watcher(
    path: StrPath,
    *,
    poll_interval: float,
    force_polling: bool | None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> Watcher:
    """A watcher of any one metadata file; inotify not started."""
    file_path = Path(path)
    return Watcher(
        file_path.parent,
        file_path,
        checked_poll_interval(poll_interval),
        resolve_force_polling(force_polling),
        checked_max_size(max_size),
    )
