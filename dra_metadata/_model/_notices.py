"""The library's warnings: on the ``dra_metadata`` logger, or where the command shows them.

A warning imports logging only when there is one to give (a read or a wait that has nothing
to say never loads it). While the command waits, it shows the warnings as its own lines on
stderr: it diverts them here (`divert` and `end_diversion`), so that a wait that warns of
nothing loads no logging either.
"""

from __future__ import annotations

from collections.abc import Callable

_diversions: list[Callable[[str], None]] = []
"""Where warnings go instead of the logger, the last one first (empty: to the logger)."""


def warn(message: str, *arguments: object) -> None:
    """Warn on the ``dra_metadata`` logger, ``message % arguments`` as logging formats it; or,
    while a diversion is set, hand it the formatted text."""
    if _diversions:
        _diversions[-1](message % arguments if arguments else message)
        return
    import logging  # noqa: PLC0415 - only when there is something to say

    logging.getLogger("dra_metadata").warning(message, *arguments)


def divert(show: Callable[[str], None]) -> None:
    """Send the warnings to ``show`` (the text of each) until `end_diversion`."""
    _diversions.append(show)


def end_diversion(show: Callable[[str], None]) -> None:
    """Undo the `divert` of ``show``."""
    _diversions.remove(show)
