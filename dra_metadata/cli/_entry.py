"""The console script: signals are handled from its first line, then the command is imported."""

from __future__ import annotations

import sys

from dra_metadata.cli._signals import end_at_once

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def run() -> NoReturn:
    """The console script (``dra-metadata``, ``python -m dra_metadata``): exits with the code
    :func:`dra_metadata.cli.main` returns."""
    end_at_once()  # before the imports: a signal during them gets one line and 130 or 143
    from dra_metadata.cli._main import main  # noqa: PLC0415

    sys.exit(main())
