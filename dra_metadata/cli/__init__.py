"""The ``dra-metadata`` command (also ``python -m dra_metadata``).

A thin layer over the public API: it parses arguments, calls the library and formats output.
One module per subcommand in ``_commands``; what they share sits in one place each: arguments
(``_arguments``), output formats (``_output``), exit codes and error reporting (``_exit``),
waiting (``_waiting``) and attribute variables (``_variables``). ``_main`` puts them together.
"""

from dra_metadata.cli._main import build_parser, main, run

__all__ = ["build_parser", "main", "run"]
