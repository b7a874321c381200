"""The deadline of a read: everything from the credentials to the last byte of the answer.

Apart from the connection (_http) so that a plain read (_plain_http) has it without asyncio.
"""

from __future__ import annotations

import math
import time

REQUEST_TIMEOUT_SECONDS = 10.0
"""The default deadline of a read: everything from the credentials (an exec plugin) to the last
byte of the answer must be done by then, however slowly the server trickles (``timeout=``)."""


def checked_request_timeout(timeout: float) -> float:
    """A read's ``timeout=``: a number of seconds > 0 (math.inf: no deadline)."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(
            f"timeout must be a number of seconds > 0 (the deadline of the read), not {timeout!r}"
        )
    return float(timeout)


class Deadline:
    """When a call (one read, or the requests of one read) must be done."""

    __slots__ = ("end", "seconds")

    def __init__(self, seconds: float, end: float) -> None:
        self.seconds = seconds
        self.end = end

    def __repr__(self) -> str:
        return f"Deadline(seconds={self.seconds!r}, end={self.end!r})"

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(seconds, time.monotonic() + seconds)

    def remaining(self) -> float | None:
        """Seconds left (0 once passed); None without a deadline."""
        if math.isinf(self.seconds):
            return None
        return max(0.0, self.end - time.monotonic())

    def passed(self) -> bool:
        remaining = self.remaining()
        return remaining is not None and remaining <= 0

    def httpx_timeout(self) -> float | None:
        """The time-out of each connect, read and write: never shorter than the deadline."""
        return None if math.isinf(self.seconds) else self.seconds
