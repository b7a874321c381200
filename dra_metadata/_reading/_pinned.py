"""Whether a metadata file with no link left is a frozen view or was being replaced.

A link count of 0 means one of two things. In a container each metadata file is a bind mount
of one host file: when the driver replaces that file by rename, the mount keeps showing the old
inode, which has no name left, for good (a stale view). Anywhere, a file replaced by rename
shows the same count for a moment to whoever looks at it then: a descriptor opened just before
the rename holds the old inode, and a rename drops the old inode's link a moment before the
path names the new one, so a look at the path in that moment finds the old inode with no link.

Only the first is stale; the path tells them apart once the rename is over: a frozen view goes
on naming the same inode, a replaced file's path names the new one. A rename holds its
directory's lock from start to end and a listing of the directory waits for that lock, so a
look at the path after a listing sees the rename whole. The replaced inode's number may then
be given to the next new file at once: a file of the same number with a link is not the one
that had none.
"""

from __future__ import annotations

import contextlib
import os
from contextvars import ContextVar
from pathlib import Path

WARN_STALE: ContextVar[bool] = ContextVar("dra_metadata_warn_stale", default=True)
"""Whether readers log stale views (the command reports them itself, with its exit code 4)."""
LOOKS = 8
"""How many times a reader looks again at a file replaced while it was looked at, before it
takes the last look as it is (a driver replacing the file again and again without pause)."""


def same_inode(first: os.stat_result, second: os.stat_result) -> bool:
    """Whether two statuses are of the same file."""
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def pinned(path: Path, status: os.stat_result) -> bool:
    """Whether ``path`` still names the file of ``status``, which has no link left, once any
    rename in its directory is over: a frozen view. False when it names another file (the one
    that replaced it) or nothing, or cannot be looked at."""
    with contextlib.suppress(OSError, ValueError), os.scandir(path.parent) as entries:
        next(entries, None)  # waits for a rename in the directory to end
    try:
        now = os.stat(path)  # noqa: PTH116 - a str or Path, one system call
    except (OSError, ValueError):
        return False
    # With a link: a new file that was given the freed inode's number.
    return now.st_nlink == 0 and same_inode(now, status)
