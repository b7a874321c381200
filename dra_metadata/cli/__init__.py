"""The ``dra-metadata`` command (also ``python -m dra_metadata``).

A thin layer over the public API: it parses arguments, calls the library and formats output.
One module per subcommand in ``_commands``; what they share sits in one place each: arguments
(``_arguments``), output formats (``_output``), exit codes and error reporting (``_exit``),
waiting (``_waiting``), attribute variables (``_variables``) and how signals end a run
(``_signals``). ``_main`` puts them together.

The console script, :func:`run`, handles SIGINT and SIGTERM before it imports the rest:
``build_parser`` and ``main`` are imported on first use.
"""

from dra_metadata.cli._entry import run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dra_metadata.cli._main import build_parser, main

__all__ = ["build_parser", "main", "run"]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        if name in {"build_parser", "main"}:
            from dra_metadata.cli import _main  # noqa: PLC0415

            value = getattr(_main, name)
            globals()[name] = value
            return value
        raise AttributeError(f"module 'dra_metadata.cli' has no attribute {name!r}")


del TYPE_CHECKING
