"""The console script: signals are handled from its first line, then the command is imported."""

from __future__ import annotations

import gc
import sys
import types

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
    import_pathlib_without_urllib()
    from dra_metadata.cli._main import main  # noqa: PLC0415

    gc.freeze()
    if collecting:
        gc.enable()
    sys.exit(main())


def _quote_from_bytes(bs: bytes, safe: str = "/") -> str:
    """``urllib.parse.quote_from_bytes``, imported when first called (by ``as_uri``)."""
    from urllib.parse import quote_from_bytes  # noqa: PLC0415

    return quote_from_bytes(bs, safe)


def import_pathlib_without_urllib() -> None:
    """Import :mod:`pathlib` without importing :mod:`urllib.parse` (and with it
    :mod:`ipaddress`), as Python 3.13 does.

    On Python 3.10 to 3.12, ``pathlib`` imports ``urllib.parse`` for one function,
    ``quote_from_bytes``, which only ``PurePath.as_uri()`` calls; with the ``ipaddress`` module
    that ``urllib.parse`` imports, that is 4 % of a one-shot command's start-up. While
    ``pathlib`` is imported here, ``sys.modules`` holds a stand-in for ``urllib.parse`` whose
    only attribute imports the real function when it is first called; the stand-in is then taken
    out again, so that any later ``import urllib.parse`` loads the real module. Only the
    console script does this, in the process it owns, before anything else could import either
    module; where ``pathlib`` or ``urllib.parse`` is already imported, or on Python 3.13 and
    later, nothing is done.
    """
    if sys.version_info >= (3, 13) or "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    stand_in = types.ModuleType("urllib.parse")
    vars(stand_in)["quote_from_bytes"] = _quote_from_bytes
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib  # noqa: F401, PLC0415
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
