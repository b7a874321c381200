"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

``docs/reference/cli.md`` holds a marker that is replaced, at every build, by the command
reference generated from the argparse parser (``tools/cli_reference.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import cli_reference  # found next to this file (mkdocs loads hooks by path)


def on_page_markdown(markdown: str, *, page: Any, config: Any, files: Any) -> str:  # noqa: ARG001
    """Put the generated command reference where the page has the marker."""
    if cli_reference.MARKER not in markdown:
        return markdown
    return markdown.replace(cli_reference.MARKER, cli_reference.markdown())
