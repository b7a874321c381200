"""The subcommands: each module of this package is one, and defines it as ``COMMAND``.

Adding a subcommand is adding a module here; the parser lists them in name order.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module

from dra_metadata.cli._arguments import Command


def all_commands() -> list[Command]:
    """Every subcommand, in name order."""
    names = sorted(module.name for module in pkgutil.iter_modules(__path__))
    commands: list[Command] = [import_module(f"{__name__}.{name}").COMMAND for name in names]
    return commands
