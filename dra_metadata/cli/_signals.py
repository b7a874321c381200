"""How SIGINT and SIGTERM end the command: one line on stderr, exit 130 or 143, at any moment.

Two regimes. Outside a subcommand's run (the imports of start-up, parsing, the last flush) a
signal ends the process at once: the handler writes its line and exits (``os._exit``), so a
signal in the middle of an import never shows a traceback. While a subcommand runs, SIGINT
raises ``KeyboardInterrupt`` and SIGTERM :class:`Terminated` (a ``SystemExit``), so that the
subcommand's own clean-up runs (``finally`` blocks, closing a watch of the Kubernetes API) and
``_main`` says the line.

The console script installs the first regime before it imports anything else of ours, and this
module imports only ``os``, ``_signal`` and ``contextlib``: from a few milliseconds after the
interpreter starts (what it does before running a line of ours is out of any program's hands),
a signal gets its line and its exit code.

``_signal`` is the built-in module that ``signal`` wraps: the same functions, without the enums
``signal`` makes of every signal number at import (3.5 M instructions, 2 % of a ``show``). Its
``getsignal`` gives SIG_DFL and SIG_IGN as the ints they are, which is what ``signal()`` takes
back.
"""

from __future__ import annotations

import os
from contextlib import contextmanager, suppress

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal  # what type checkers know of _signal's functions
    from collections.abc import Iterator
    from types import FrameType
    from typing import NoReturn
else:
    import _signal as signal

PROGRAM = "dra-metadata"
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as a shell reports a command that Ctrl-C ended."""
EXIT_TERMINATED = 143
"""128 + SIGTERM, as a shell reports a command that SIGTERM ended."""
INTERRUPTED = "interrupted"
TERMINATED = "terminated"
_ENDINGS: dict[int, tuple[str, int]] = {
    signal.SIGINT: (INTERRUPTED, EXIT_INTERRUPTED),
    signal.SIGTERM: (TERMINATED, EXIT_TERMINATED),
}


class Terminated(SystemExit):
    """SIGTERM while a subcommand runs: ends the run as ``SystemExit(143)`` would."""

    def __init__(self) -> None:
        super().__init__(EXIT_TERMINATED)


def _end_now(signum: int, frame: FrameType | None) -> NoReturn:  # noqa: ARG001
    message, code = _ENDINGS[signum]
    with suppress(OSError):  # stderr closed (2>&-) or gone: the exit code says it all
        os.write(2, f"{PROGRAM}: {message}\n".encode())
    os._exit(code)


def _raise_terminated(signum: int, frame: FrameType | None) -> NoReturn:  # noqa: ARG001
    raise Terminated


def end_at_once() -> None:
    """From now on SIGINT and SIGTERM end the process at once, with their line and code.

    SIGINT only if Python handles it (it does unless the command was started with SIGINT
    ignored, as a shell starts a background job: that stays ignored).
    """
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _end_now)
    signal.signal(signal.SIGTERM, _end_now)


@contextmanager
def raised_as_exceptions() -> Iterator[None]:
    """While a subcommand runs: SIGINT raises KeyboardInterrupt, SIGTERM :class:`Terminated`.

    On leaving, the handlers that were there come back (after the console script's start:
    ending at once).
    """
    previous_int = signal.getsignal(signal.SIGINT)
    previous_term = signal.getsignal(signal.SIGTERM)
    if previous_int is _end_now:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        if previous_int is _end_now:
            signal.signal(signal.SIGINT, previous_int)


def defaults_before_exec() -> None:
    """SIGPIPE and SIGXFSZ back to their default action, before ``exec`` replaces the process:
    Python ignores them at start-up, and ignored signals stay ignored across exec."""
    for ignored in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(ignored, signal.SIG_DFL)
