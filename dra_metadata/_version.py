"""The installed distribution's version, found without ``importlib.metadata``.

``importlib.metadata`` imports email parsing, zip files and CSV reading: more start-up than a
whole read of a claim. ``dra-metadata --version`` and ``dra_metadata.__version__`` read the same
field of the same file themselves, searching ``sys.path`` in order as ``importlib.metadata``
does, and hand over to it only when they find no ``.dist-info`` folder (an egg, a zip file).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DISTRIBUTION = "dra-metadata"
_PREFIX = "dra_metadata-"  # the folder's name: the distribution's name normalised, then "-"


def installed_version() -> str:
    """The ``Version`` of the first ``dra_metadata-*.dist-info`` on ``sys.path``.

    Raises:
        importlib.metadata.PackageNotFoundError: the distribution is not installed (a source
            tree on ``sys.path``).
    """
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # not a folder (a zip file), or gone
            continue
        for name in names:
            if name.lower().startswith(_PREFIX) and name.endswith(".dist-info"):
                found = _version_field(Path(entry or ".", name, "METADATA"))
                if found is not None:
                    return found
    from importlib.metadata import version  # noqa: PLC0415 - what this module avoids, if it must

    return version(DISTRIBUTION)


def _version_field(path: Path) -> str | None:
    """The ``Version:`` header of a core metadata file, or None if it has none or is unreadable."""
    try:
        with path.open(encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():  # the headers end at the first empty line
                    break
                key, separator, value = line.partition(":")
                if separator and key.strip().lower() == "version":
                    return value.strip()
    except OSError:
        return None
    return None
