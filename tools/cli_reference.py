"""The command reference, generated from the argparse parser of ``dra-metadata`` itself.

The documentation site builds ``docs/reference/cli.md`` with it (``tools/mkdocs_hooks.py``
replaces the page's marker with ``markdown()``), so the reference lists every subcommand with
every option the parser has, and cannot drift from it. ``python tools/cli_reference.py``
prints the generated Markdown.
"""

from __future__ import annotations

import argparse
import html
import re

from dra_metadata.cli import build_parser
from dra_metadata.cli._arguments import CODE_SPAN

MARKER = "<!-- cli-reference -->"
"""Where docs/reference/cli.md receives the generated text."""

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]|])")
_OPTION = re.compile(r"(?<![\w`/-])(--?[A-Za-z][\w-]*(?:=[^\s,;()]+)?)")
"""An option named in running text (``--for``, ``-o``, ``--source=api``): shown as code."""


def _literal(value: str) -> str:
    """Text as Markdown that shows it literally (no emphasis, no HTML, no table breaks)."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(value, quote=False))


def _text(value: str) -> str:
    """Help text as Markdown: its code spans (`export VAR=VALUE`) and the options it names as
    code, the rest literally."""
    parts = re.split(CODE_SPAN, value)  # plain, code, plain, code, ...
    shown = []
    for index, part in enumerate(parts):
        if index % 2:
            shown.append(_code(part))
        else:
            pieces = _OPTION.split(part)
            shown += [_code(p) if i % 2 else _literal(p) for i, p in enumerate(pieces)]
    return "".join(shown)


def _code(value: str) -> str:
    """A code span of a table cell (``|`` escaped for the table)."""
    return "`" + value.replace("|", "\\|") + "`"


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, by name, in the order ``--help`` lists them."""
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its actions there only
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return {
                choice.dest: choice.help or ""
                for choice in action._choices_actions  # noqa: SLF001
            }
    return {}


def _argument(action: argparse.Action) -> str:
    if not action.option_strings:
        return _code(str(action.metavar or action.dest))
    if action.nargs == 0:
        names = ", ".join(action.option_strings)
    else:
        if action.metavar is not None:
            value = str(action.metavar)
        elif action.choices is not None:
            value = "{" + ",".join(map(str, action.choices)) + "}"
        else:
            value = action.dest.upper()
        names = ", ".join(f"{option} {value}" for option in action.option_strings)
    return _code(names)


def options_table(parser: argparse.ArgumentParser) -> list[str]:
    """One row per argument of ``parser`` (positional arguments first, as --help lists them)."""
    rows = ["| Argument | Description |", "|---|---|"]
    actions = [action for action in parser._actions if action.help != argparse.SUPPRESS]  # noqa: SLF001
    actions.sort(key=lambda action: bool(action.option_strings))
    for action in actions:
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            continue
        rows.append(f"| {_argument(action)} | {_text(action.help or '')} |")
    return rows


def _prose(text: str, *, code_language: str = "text") -> list[str]:
    """Help text as paragraphs; its indented lines (examples, commands) as code blocks."""
    lines: list[str] = []
    block: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            lines.extend([_text(" ".join(paragraph)), ""])
            paragraph.clear()
        if block:
            lines.extend([f"```{code_language}", *block, "```", ""])
            block.clear()

    for line in text.strip().splitlines():
        if line.startswith("  "):
            if paragraph:
                flush()
            block.append(line.strip())
        elif line.strip():
            if block:
                flush()
            paragraph.append(line.strip())
        else:
            flush()
    flush()
    return lines


def _usage(parser: argparse.ArgumentParser) -> str:
    return " ".join(parser.format_usage().removeprefix("usage: ").split())


def markdown() -> str:
    """The reference of the command and each subcommand: usage, description, every option."""
    parser = build_parser()
    lines = [
        "## `dra-metadata`",
        "",
        *_prose(parser.description or ""),
        "```text",
        _usage(parser),
        "```",
        "",
        *options_table(parser),
        "",
        "| Subcommand | What it does |",
        "|---|---|",
    ]
    summaries = _summaries(parser)
    commands = subcommands(parser)
    lines += [f"| [`{name}`](#{name}) | {_text(summaries[name])} |" for name in commands]
    for name, subparser in commands.items():
        lines += [
            "",
            f"## `dra-metadata {name}` {{#{name}}}",
            "",
            *_prose(subparser.description or ""),
            "```text",
            _usage(subparser),
            "```",
            "",
            *options_table(subparser),
            "",
            *_prose(subparser.epilog or "", code_language="sh"),
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
