"""What a stat of a path says about its content: how a scan and the hub's check tell a change.

Its own module: a scan takes signatures whether or not inotify runs, and the hub (its thread,
its instance) is loaded only when a watch starts inotify.
"""

from __future__ import annotations

import operator
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from pathlib import Path

Signature = tuple[int, ...] | None
"""What a stat of a path says about its content: None while it is absent."""

_CONTENT_FIELDS = operator.attrgetter(
    "st_ino", "st_dev", "st_size", "st_mtime_ns", "st_ctime_ns", "st_nlink"
)
"""The fields of a status that change with a file's content, fetched in C (the periodic check
takes them of every watched path once per interval)."""


def signature(path: Path | bytes) -> Signature:
    """What a stat of ``path`` says about its content (an error: its errno, negated)."""
    try:
        return _CONTENT_FIELDS(os.stat(path))  # noqa: PTH116 - one system call
    except FileNotFoundError:
        return None
    except OSError as error:
        return (-(error.errno or 1),)


def signature_of(status: os.stat_result | None) -> Signature:
    """The signature of a status already at hand (None: absent)."""
    if status is None:
        return None
    return _CONTENT_FIELDS(status)
