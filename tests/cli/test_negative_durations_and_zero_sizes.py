"""Every duration option refuses a negative value in the same words, whether it is given as
``--timeout -1s`` or ``--timeout=-1s``; a size limit of 0 is a usage error, not a limit that
then refuses every file. The options are found by walking the parser, so a new one is checked
as soon as it exists."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from dra_metadata.cli import build_parser
from dra_metadata.cli._arguments import (
    parse_duration,
    parse_poll_interval,
    parse_size,
    parse_timeout,
)

from helpers import SAMPLE
from helpers import run_command as run

POSITIONALS = {
    "show": ["c", "r"],
    "wait": ["c", "r"],
    "exec": ["c", "r"],
    "env": ["c", "r"],
    "path": ["c", "r"],
    "status": ["c"],
    "pools": ["gpu.example.com"],
}
"""What each subcommand needs before its options (the others need nothing)."""
DURATIONS = {parse_duration, parse_timeout, parse_poll_interval}


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _options(kinds: set[object]) -> Iterator[tuple[str, str]]:
    for name, subparser in _subcommands().items():
        for action in subparser._actions:
            if action.type in kinds:
                yield name, max(action.option_strings, key=len)


def _arguments(command: str, option: str, value: str, *, joined: bool) -> list[str]:
    given = [f"{option}={value}"] if joined else [option, value]
    tail = ["--", "true"] if command == "exec" else []
    return [command, *POSITIONALS.get(command, []), *given, *tail]


DURATION_OPTIONS = sorted(_options(DURATIONS))
SIZE_OPTIONS = sorted(_options({parse_size}))


def test_the_parser_has_the_options_this_file_checks() -> None:
    assert ("wait", "--timeout") in DURATION_OPTIONS
    assert ("pools", "--timeout") in DURATION_OPTIONS
    assert ("exec", "--poll-interval") in DURATION_OPTIONS
    assert ("ls", "--max-size") in SIZE_OPTIONS
    assert set(POSITIONALS) <= set(_subcommands())


@pytest.mark.parametrize(("command", "option"), DURATION_OPTIONS)
def test_a_negative_duration_gets_its_message_however_it_is_given(
    command: str, option: str
) -> None:
    spaced = run(*_arguments(command, option, "-1s", joined=False), root=None)
    joined = run(*_arguments(command, option, "-1s", joined=True), root=None)
    assert spaced.returncode == joined.returncode == 2
    expected = (
        f"dra-metadata {command}: argument {option}: invalid duration '-1s': a duration cannot "
        f"be negative (use e.g. 90s, 2m, 1h) (see dra-metadata {command} --help)\n"
    )
    assert spaced.stderr == joined.stderr == expected
    for fraction in ("-.5", "-.5s"):  # argparse itself takes "-.5" for a number, not "-.5s"
        result = run(*_arguments(command, option, fraction, joined=False), root=None)
        assert result.returncode == 2
        assert f"invalid duration '{fraction}': a duration cannot be negative" in result.stderr


@pytest.mark.parametrize(("command", "option"), SIZE_OPTIONS)
@pytest.mark.parametrize("value", ["0", "0MiB", "-1"])
def test_a_size_limit_of_nothing_is_a_usage_error(command: str, option: str, value: str) -> None:
    result = run(*_arguments(command, option, value, joined=False), root=SAMPLE)
    assert result.returncode == 2, result.stderr
    reason = (
        f"invalid size '{value}' (a number of bytes, or with a unit: 10M, 16MiB, 500KB)"
        if value.startswith("-")
        else f"'{value}': the size limit must be more than 0 bytes (every file has some)"
    )
    assert result.stderr == (
        f"dra-metadata {command}: argument {option}: {reason} (see dra-metadata {command} --help)\n"
    )
    assert result.stdout == ""


def test_the_smallest_size_limit_is_one_byte() -> None:
    assert parse_size("1") == 1
    result = run("show", "training-gpus", "gpu", "--max-size", "1")
    assert result.returncode == 3
    assert "give --max-size SIZE" in result.stderr
