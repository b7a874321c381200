"""The subcommands: each module of this package is one, and defines it as ``COMMAND``.

Adding a subcommand is adding a module here; the parser lists them in name order. A run
imports only the module of the subcommand it runs (the others cost start-up time). A name
with ``-`` (``pod-resources``) is the module with ``_`` (``pod_resources``).
"""

from __future__ import annotations

import os
from importlib import import_module

from dra_metadata.cli._arguments import Command


def command_names() -> list[str]:
    """The name of every subcommand, in order."""
    # The modules of this folder, as pkgutil.iter_modules would list them (without its import).
    return sorted(
        name.removesuffix(".py").replace("_", "-")
        for name in os.listdir(__path__[0])
        if name.endswith(".py") and name != "__init__.py"
    )


def load_command(name: str) -> Command:
    """The subcommand called ``name`` (one of command_names())."""
    command: Command = import_module(f"{__name__}.{name.replace('-', '_')}").COMMAND
    return command
