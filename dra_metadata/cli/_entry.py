"""The console script: signals are handled from its first line, then the command is imported."""

from __future__ import annotations

import gc
import sys

from dra_metadata.cli._signals import end_at_once

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def run() -> NoReturn:
    """The console script (``dra-metadata``, ``python -m dra_metadata``): exits with the code
    :func:`dra_metadata.cli.main` returns.

    The garbage collector stays off while the command's modules are imported (what an import
    makes lives until the process ends: a collection would find nothing to free, and the
    collections an import's allocations set off are a tenth of a one-shot command's
    start-up); those objects are then frozen (``gc.freeze``), so that neither the collections
    of a long run nor the last one at exit walk through them again.
    """
    end_at_once()  # before the imports: a signal during them gets one line and 130 or 143
    collecting = gc.isenabled()
    gc.disable()
    from dra_metadata.cli._main import main  # noqa: PLC0415

    gc.freeze()
    if collecting:
        gc.enable()
    sys.exit(main())
