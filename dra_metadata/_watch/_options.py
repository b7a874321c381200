"""Checks of the options every watch and wait takes, done at the call."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from dra_metadata._watch._type_names import WaitSource

FORCE_POLLING_ENVIRONMENT_VARIABLE = "DRA_METADATA_FORCE_POLLING"
"""Set to 1 to make every watcher poll instead of using inotify."""


def checked_timeout(timeout: float | None) -> float | None:
    """None (no limit) or any number of seconds >= 0, infinity included."""
    if timeout is not None and not timeout >= 0:
        raise ValueError(f"timeout must be None (no limit) or >= 0 seconds, not {timeout!r}")
    return timeout


def checked_poll_interval(poll_interval: float) -> float:
    """Any number of seconds > 0, infinity included (then only inotify events wake a watch)."""
    if not poll_interval > 0:
        raise ValueError(f"poll_interval must be positive, not {poll_interval!r}")
    return poll_interval


def checked_max_size(max_size: int) -> int:
    """A number of bytes >= 0 (the size limit of each file read, as the read functions take)."""
    if not max_size >= 0:
        raise ValueError(f"max_size must be a number of bytes >= 0, not {max_size!r}")
    return max_size


def resolve_force_polling(force_polling: bool | None) -> bool:
    if force_polling is not None:
        return force_polling
    return os.environ.get(FORCE_POLLING_ENVIRONMENT_VARIABLE, "").lower() in {"1", "true", "yes"}


WAIT_SOURCES: tuple[WaitSource, ...] = ("file", "api", "auto")
