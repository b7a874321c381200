"""Putting bytes into a metadata file safely: the file-system half of dra_metadata.writer.

Every step works on descriptors: the file's directory is opened once (walked component by
component without following symlinks when a root is given), locked with flock(2) so that
concurrent writers and updaters of one directory take turns, and the file is created, renamed
or rewritten relative to it. Every OSError becomes a MetadataWriteError naming the file and the
step; whatever a failed write leaves behind is cleaned up or restored.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from dra_metadata._model._errors import MetadataNotFoundError, MetadataWriteError
from dra_metadata._reading._paths import MAX_FILE_NAME_BYTES, StrPath

WriteMode = Literal["atomic", "in-place"]
WRITE_MODES: tuple[WriteMode, ...] = ("atomic", "in-place")

FILE_MODE = 0o644
"""Permissions of a metadata file, as the upstream writer sets them."""
DIRECTORY_MODE = 0o755
"""Permissions of the directories a writer creates."""

_TEMPORARY_SUFFIX = ".tmp"
_TOKEN_BYTES = 6  # 12 hex digits: collisions between concurrent writers are not a concern
# Errors that mean "this file system cannot reserve space", not "there is no space".
_NO_RESERVATION = frozenset({errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL})


def check_mode(mode: object) -> WriteMode:
    if mode not in WRITE_MODES:
        raise ValueError(f"mode must be 'atomic' or 'in-place', not {mode!r}")
    return mode


@contextlib.contextmanager
def _step(target: Path, what: str) -> Iterator[None]:
    """Turn an OSError of ``what`` into a MetadataWriteError naming ``target``."""
    try:
        yield
    except MetadataWriteError:
        raise
    except OSError as error:
        raise MetadataWriteError(
            f"{what}: {error.strerror or error}", path=target, os_errno=error.errno
        ) from None


def _symlink_refused(target: Path, link: Path, directory: int, name: str) -> MetadataWriteError:
    try:
        pointing = f" (it points to {os.readlink(name, dir_fd=directory)})"
    except OSError:
        pointing = ""
    return MetadataWriteError(
        f"refusing to write through the symbolic link {link}{pointing}: writers never follow "
        "a symlink to the file, nor one below their root",
        path=target,
        os_errno=errno.ELOOP,
    )


def _open_below(target: Path, parent: int, name: str, shown: Path, *, create: bool) -> int:
    """Open directory ``name`` in ``parent`` without following a symlink; create it if asked."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as error:
        if error.errno not in {errno.ELOOP, errno.ENOTDIR}:
            raise
        with _step(target, f"look at {shown}"):
            status = os.lstat(name, dir_fd=parent)
        if stat.S_ISLNK(status.st_mode):
            raise _symlink_refused(target, shown, parent, name) from None
        raise MetadataWriteError(
            f"{shown} is not a directory", path=target, os_errno=errno.ENOTDIR
        ) from None
    with _step(target, f"create directory {shown}"), contextlib.suppress(FileExistsError):
        os.mkdir(name, DIRECTORY_MODE, dir_fd=parent)  # or another writer did, meanwhile
    return _open_below(target, parent, name, shown, create=False)


def _make_directories(target: Path, directory: Path) -> None:
    """mkdir -p ``directory`` (following symlinks), with errors naming the culprit."""
    missing: list[Path] = []
    current = directory
    while _missing_directory(target, current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        with _step(target, f"create directory {path}"), contextlib.suppress(FileExistsError):
            path.mkdir(DIRECTORY_MODE)


def _missing_directory(target: Path, path: Path) -> bool:
    """False for a directory, True when nothing is there; MetadataWriteError for the rest."""
    try:
        mode = os.stat(path).st_mode  # noqa: PTH116
    except (FileNotFoundError, NotADirectoryError):  # the culprit is further up
        if os.path.lexists(path):
            raise MetadataWriteError(
                f"{path} is a symbolic link to nothing", path=target, os_errno=errno.ENOENT
            ) from None
        return True
    except OSError as error:
        raise MetadataWriteError(
            f"look at {path}: {error.strerror}", path=target, os_errno=error.errno
        ) from None
    if not stat.S_ISDIR(mode):
        raise MetadataWriteError(f"{path} is not a directory", path=target, os_errno=errno.ENOTDIR)
    return False


class Directory:
    """The open, locked directory of a metadata file; use as a context manager."""

    def __init__(self, target: Path, descriptor: int) -> None:
        self.target = target
        self.name = target.name
        self.descriptor = descriptor

    @property
    def key(self) -> tuple[int, int, str]:
        """Which file this is, whatever path led to it: the directory's device and inode, and
        the file's name."""
        status = os.fstat(self.descriptor)
        return (status.st_dev, status.st_ino, self.name)

    @classmethod
    def open(cls, path: StrPath, *, root: StrPath | None, create: bool) -> Directory:
        """Open (and with ``create``, make) the directory of ``path``, and lock it.

        Without ``root`` the directories are trusted as given (symlinks followed); with it,
        ``path`` must lie below ``root`` and nothing below ``root`` may be a symlink.
        """
        target = Path(path)
        if not target.name or target.name in {".", ".."}:
            raise ValueError(f"{path!r} does not name a file")
        if root is None:
            if create:
                _make_directories(target, target.parent)
            try:
                with _step(target, f"open directory {target.parent}"):
                    descriptor = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except MetadataWriteError as error:
                if error.errno == errno.ENOENT:
                    raise _missing(target, target.parent) from None
                raise
        else:
            descriptor = _walk(target, Path(root), create=create)
        directory = cls(target, descriptor)
        try:
            with _step(target, f"lock directory {target.parent}"):
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            directory.refuse_symlinked_file()
        except BaseException:
            os.close(descriptor)
            raise
        return directory

    def __enter__(self) -> Directory:  # noqa: PYI034 - typing.Self is 3.11+
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.descriptor)  # which releases the lock

    def status(self) -> os.stat_result | None:
        """The file's own status (a symlink is not followed); None when it does not exist."""
        try:
            return os.lstat(self.name, dir_fd=self.descriptor)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise MetadataWriteError(
                f"look at the file: {error.strerror}", path=self.target, os_errno=error.errno
            ) from None

    def refuse_symlinked_file(self) -> None:
        status = self.status()
        if status is None or stat.S_ISREG(status.st_mode):
            return
        if stat.S_ISLNK(status.st_mode):
            raise _symlink_refused(self.target, self.target, self.descriptor, self.name)
        what, code = (
            ("a directory", errno.EISDIR)
            if stat.S_ISDIR(status.st_mode)
            else ("not a regular file", errno.EINVAL)
        )
        raise MetadataWriteError(f"it is {what}", path=self.target, os_errno=code)

    def write(self, data: bytes, mode: WriteMode) -> None:
        if mode == "atomic":
            self._write_atomically(data)
        else:
            self._write_in_place(data)

    def _write_atomically(self, data: bytes) -> None:
        temporary = temporary_name(self.name)
        shown = self.target.with_name(temporary)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with _step(self.target, f"create temporary file {shown}"):
            descriptor = os.open(temporary, flags, FILE_MODE, dir_fd=self.descriptor)
        try:
            try:
                with _step(self.target, f"write temporary file {shown}"):
                    _write_all(descriptor, data, 0)
                    os.fchmod(descriptor, FILE_MODE)
                    os.fsync(descriptor)
            finally:
                os.close(descriptor)
            with _step(self.target, f"rename {shown} over the file"):
                os.rename(
                    temporary,
                    self.name,
                    src_dir_fd=self.descriptor,
                    dst_dir_fd=self.descriptor,
                )
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=self.descriptor)
            raise
        with _step(self.target, "the new file is in place, but syncing its directory failed"):
            os.fsync(self.descriptor)

    def _write_in_place(self, data: bytes) -> None:
        """Truncate and rewrite the same inode, keeping the old content unless the new one is
        completely written: space is reserved first, and the old content is put back if a
        write fails all the same."""
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        created = False
        with _step(self.target, "open the file"):
            try:
                descriptor = os.open(self.name, flags, dir_fd=self.descriptor)
            except FileNotFoundError:
                flags |= os.O_CREAT | os.O_EXCL
                descriptor = os.open(self.name, flags, FILE_MODE, dir_fd=self.descriptor)
                created = True
        try:
            previous = self._previous_content(descriptor)
            with _step(self.target, "reserve space for the new content (the file is unchanged)"):
                _reserve(descriptor, len(data), len(previous))
            try:
                os.ftruncate(descriptor, 0)
                _write_all(descriptor, data, 0)
                os.fsync(descriptor)
            except OSError as error:
                raise _restored(self.target, descriptor, previous, error, created) from None
            except BaseException:  # interrupted (Ctrl-C): put the old content back all the same
                if not created:
                    _restore(descriptor, previous)
                raise
        except BaseException:
            if created:
                with contextlib.suppress(OSError):
                    os.unlink(self.name, dir_fd=self.descriptor)
            raise
        finally:
            os.close(descriptor)

    def _previous_content(self, descriptor: int) -> bytes:
        with _step(self.target, "read the previous content"):
            regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
            previous = _read_all(descriptor) if regular else b""
        if not regular:  # replaced by something else since it was looked at
            raise MetadataWriteError(
                "it is not a regular file", path=self.target, os_errno=errno.EINVAL
            )
        return previous


def _walk(target: Path, root: Path, *, create: bool) -> int:
    """Open the directory of ``target`` from ``root`` down, refusing symlinks below ``root``."""
    # Lexically ("a/../b" is "b"): resolving symlinks here would defeat the point.
    absolute_root = Path(os.path.abspath(root))  # noqa: PTH100
    parent = Path(os.path.abspath(target)).parent  # noqa: PTH100
    try:
        below = parent.relative_to(absolute_root)
    except ValueError:
        raise ValueError(f"{target} is not below the root {root}") from None
    if create:
        _make_directories(target, absolute_root)
    with _step(target, f"open the root {root}"):
        descriptor = os.open(absolute_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    shown = absolute_root
    try:
        for name in below.parts:
            shown /= name
            inner = _open_below(target, descriptor, name, shown, create=create)
            os.close(descriptor)
            descriptor = inner
    except FileNotFoundError:
        os.close(descriptor)
        raise _missing(target, shown) from None
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _missing(target: Path, directory: Path) -> MetadataNotFoundError:
    return MetadataNotFoundError(
        f"the directory {directory} does not exist (nothing to update)", path=target
    )


def temporary_name(name: str) -> str:
    """``.<name>.<random>.tmp``, with ``name`` shortened so that it fits in a file name."""
    token = os.urandom(_TOKEN_BYTES).hex()  # (the secrets module takes 4 ms to import)
    budget = MAX_FILE_NAME_BYTES - len(token) - len(_TEMPORARY_SUFFIX) - 2
    prefix = name.encode("utf-8", "surrogateescape")[:budget].decode("utf-8", "ignore")
    return f".{prefix}.{token}{_TEMPORARY_SUFFIX}"


def _write_all(descriptor: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(descriptor, view, offset)
        view = view[written:]
        offset += written


def _read_all(descriptor: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(descriptor, 1 << 16, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _reserve(descriptor: int, size: int, previous_size: int) -> None:
    """Make sure ``size`` bytes fit before the old content is given up (ENOSPC otherwise)."""
    if size <= previous_size:
        return  # the old content's blocks are enough
    try:
        os.posix_fallocate(descriptor, 0, size)
    except OSError as error:
        if error.errno not in _NO_RESERVATION:
            os.ftruncate(descriptor, previous_size)  # a partial reservation may have grown it
            raise


def _restore(descriptor: int, previous: bytes) -> OSError | None:
    """Put ``previous`` back as the whole content; the error if that failed too."""
    try:
        os.ftruncate(descriptor, 0)
        _write_all(descriptor, previous, 0)
        os.fsync(descriptor)
    except OSError as error:
        return error
    return None


def _restored(
    target: Path, descriptor: int, previous: bytes, error: OSError, created: bool
) -> MetadataWriteError:
    """Put the previous content back after a failed rewrite; the error to raise says how it went."""
    failure = f"rewrite the file: {error.strerror or error}"
    if created:
        return MetadataWriteError(
            f"{failure}; the new file was removed", path=target, os_errno=error.errno
        )
    second = _restore(descriptor, previous)
    if second is not None:
        return MetadataWriteError(
            f"{failure}; restoring the previous content failed too ({second.strerror}): the "
            "file is left incomplete",
            path=target,
            os_errno=error.errno,
        )
    return MetadataWriteError(
        f"{failure}; the previous content was restored", path=target, os_errno=error.errno
    )
