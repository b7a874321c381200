"""The command never prints a traceback without --debug, and shows text from files safely.

Every wrong argument is a usage error in one line; a closed stdout ends quietly; names that are
not UTF-8 and stdouts that cannot encode the text still give output; control characters from
files never reach the terminal as they are.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dra_metadata import Device, DeviceAttribute, NetworkDeviceData
from dra_metadata.testing import MetadataTree

from helpers import COMMAND, SAMPLE
from helpers import run_command as run

USAGE_ERRORS = [
    (["show"], "show needs CLAIM and REQUEST (or --file PATH)"),
    (["show", "a"], "show needs CLAIM and REQUEST"),
    (["show", "a", "b", "--file", "x"], "CLAIM REQUEST cannot go with it"),
    (["show", "--file", "x", "--template"], "--template cannot go with it"),
    (["show", "--file", "x", "--driver", "d"], "--driver cannot go with it"),
    (["show", "--file", "x"], "--root cannot go with it"),  # run() gives --root
    (["show", "c", "r", "-A", "-o", "json"], "JSON always has every attribute"),
    (["show", "c", "r", "-o", "yaml"], "invalid choice: 'yaml'"),
    (["show", "c", "r", "--temp"], "unrecognized arguments: --temp"),  # no abbreviations
    (["show", "../x", "gpu"], "dra-metadata show: CLAIM '../x': must not contain '/'"),
    (["show", "..", "gpu"], "CLAIM '..': '..' is not a name"),
    (["show", "--template", "é" * 200, "gpu"], "is 400 bytes long, at most 253 allowed"),
    (["show", "c", "a/b/c"], "only one '/' (before the subrequest) is allowed"),
    (["show", "c", "r", "--driver", ""], "--driver '': must not be empty"),
    (["path", "c", "r", "--driver", "d/e"], "--driver 'd/e': must not contain '/'"),
    (["wait", "c", "r", "--poll-interval", "0"], "the poll interval must be more than 0"),
    (["wait", "c", "r", "--poll-interval", "25h"], "at most 24h"),
    (["wait", "c", "r", "--poll-interval=-1s"], "invalid duration '-1s'"),
    (["wait", "c", "r", "--timeout", "soon"], "invalid duration 'soon'"),
    (["wait", "c", "r", "--timeout", ""], "empty duration"),
    (["wait", "c", "r", "--timeout", "1e3"], "invalid duration '1e3'"),
    (["wait", "c", "r", "--timeout", "\u0663s"], "invalid duration"),  # an Arabic-Indic 3
    (["wait", "c", "r", "--timeout", "9" * 400], "is too large"),
    (["wait", "c", "r", "--for", "generation=\u00b2"], "N must be a whole number"),
    (["wait", "c", "r", "--for", "generation=" + "9" * 5000], "N must be a whole number"),
    (["wait", "c", "r", "--for", "generation=9223372036854775808"], "N must be a whole"),
    (["wait", "c", "r", "--for", "generation="], "N must be a whole number"),
    (["wait", "c", "r", "--for", "attribute="], "give an attribute name"),
    (["wait", "c", "r", "--for", "magic"], "use file, network-data, generation=N or"),
    (["wait", "c", "r", "--for", ""], "use file, network-data"),
    (["wait", "c", "r", "--require", "mtu"], "--require 'mtu': use a comma-separated list"),
    (["wait", "c", "r", "--require", "ips,"], "--require 'ips,'"),
    (["wait", "c", "r", "--require", "ips", "--for", "file"], "--require only goes with"),
    (["wait", "c", "r", "-o", "table"], "invalid choice: 'table'"),
    (["validate", "x", "--root", "y"], "--root cannot go with PATHs"),
    (["env", "c", "r"], "the following arguments are required: --attribute"),
    (["env", "c", "r", "--attribute", "=X"], "give an attribute name"),
    (["env", "c", "r", "--attribute", "x=1BAD"], "'1BAD' is not a shell variable name"),
    (["env", "c", "r", "--attribute", "x=A-B"], "'A-B' is not a shell variable name"),
    (["env", "c", "r", "--attribute", "x=\u00c9"], "is not a shell variable name"),
    (["exec", "c", "r"], "exec needs -- COMMAND"),
    (["exec", "c", "r", "--"], "exec needs -- COMMAND"),
    (["exec", "c", "r", "app"], "unrecognized arguments: app"),
    (["exec", "c", "r", "-q", "--", "true"], "-q/--quiet only applies to a wait"),
    (["exec", "c", "r", "--join", ",", "--", "true"], "--join only applies to --attribute"),
    (["path", "c"], "the following arguments are required: REQUEST"),
    (["ls", "extra"], "unrecognized arguments: extra"),
    (["nope"], "invalid choice: 'nope'"),
]


@pytest.mark.parametrize(("arguments", "message"), USAGE_ERRORS, ids=lambda a: repr(a)[:40])
def test_usage_errors_are_one_line(arguments: list[str], message: str) -> None:
    result = run(*arguments)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("dra-metadata")
    assert message in result.stderr
    assert result.stderr.endswith("--help)\n")


def test_a_name_that_is_not_utf8_is_a_usage_error() -> None:
    result = subprocess.run(
        [COMMAND, "--root", str(SAMPLE), "show", b"claim\xff", "gpu"],
        capture_output=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == (
        b"dra-metadata show: CLAIM 'claim\\udcff': is not valid Unicode text "
        b"(see dra-metadata show --help)\n"
    )


def test_debug_shows_the_traceback_and_nothing_else_does() -> None:
    assert "Traceback" in run("--debug", "show", "nope", "gpu").stderr
    assert "Traceback" not in run("show", "nope", "gpu").stderr


def test_a_closed_pipe_ends_quietly() -> None:
    reader, writer = os.pipe()
    os.close(reader)  # whoever reads the output has gone, as `| head -1` does
    try:
        result = subprocess.run(
            [COMMAND, "--root", str(SAMPLE), "ls", "-o", "table"],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        os.close(writer)
    assert (result.returncode, result.stderr) == (141, "")
    shell = subprocess.run(
        ["sh", "-c", f'"{COMMAND}" --root "$0" ls -o table | head -1', str(SAMPLE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shell.stdout.startswith("KIND")
    assert shell.stderr == ""


def test_a_closed_stdout_is_one_line() -> None:
    result = subprocess.run(
        ["sh", "-c", '"$0" --root "$1" ls >&-', COMMAND, str(SAMPLE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr == "dra-metadata: cannot write the output: stdout is closed\n"
    gate = subprocess.run(
        ["sh", "-c", '"$0" --root "$1" exec fast-net vf -- sh -c "echo ran >&2" >&-', COMMAND,
         str(SAMPLE)],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert (gate.returncode, gate.stderr) == (0, "ran\n")  # exec writes nothing itself


def test_a_full_disk_is_one_line() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    with Path("/dev/full").open("w") as full:
        result = subprocess.run(
            [COMMAND, "--root", str(SAMPLE), "ls"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert result.returncode == 1
    assert result.stderr == "dra-metadata: cannot write the output: No space left on device\n"


@pytest.fixture
def hostile_tree(tmp_path: Path) -> MetadataTree:
    """A claim whose device name, attribute and file name hold control characters, and a file
    whose name is not UTF-8."""
    tree = MetadataTree(tmp_path)
    tree.add_claim(
        "c",
        "r",
        "gpu.example.com",
        [
            Device(
                name="gpu-0\x1b[2J",
                attributes={
                    "model": DeviceAttribute(string="H200 \x1b]0;owned\x07\u202eé"),
                    "uuid": DeviceAttribute(string="GPU-1\nsecond line"),
                },
                network_data=NetworkDeviceData("net\r1"),
            )
        ],
    )
    path = tree.add_claim("c", "bytes", "d.example.com", ["n"])
    path.rename(os.fsdecode(os.fsencode(path.parent) + b"/d\xff.example.com-metadata.json"))
    return tree


def test_control_characters_are_escaped_in_tables(hostile_tree: MetadataTree) -> None:
    result = run("show", "c", "r", "-o", "table", "-A", root=hostile_tree.root)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout
    assert "\u202e" not in result.stdout
    assert "\r" not in result.stdout
    assert "gpu-0\\x1b[2J" in result.stdout
    assert "model='H200 \\x1b]0;owned\\x07\\u202eé'" in result.stdout  # quoted shell-style
    assert "uuid='GPU-1\\nsecond line'" in result.stdout
    assert "net\\r1" in result.stdout
    listing = run("ls", "-o", "table", root=hostile_tree.root)
    assert "d\\xff.example.com" in listing.stdout


def test_messages_from_files_stay_one_line(hostile_tree: MetadataTree) -> None:
    result = run(
        "wait", "c", "r", "--for", "attribute=uuid=x", "--timeout", "0", root=hostile_tree.root
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "device gpu-0\\x1b[2J has uuid=GPU-1\\nsecond line" in result.stderr


def test_names_from_the_command_line_stay_one_line() -> None:
    result = run("show", "line\nbreak\x1b[2J", "gpu")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "no claim line\\nbreak\\x1b[2J referenced by name" in result.stderr


def test_json_of_names_that_are_not_utf8(hostile_tree: MetadataTree) -> None:
    for arguments in (["ls"], ["show", "c", "bytes"], ["validate", str(hostile_tree.root)]):
        result = run(
            *arguments, "-o", "json", root=None if "validate" in arguments else hostile_tree.root
        )
        assert result.returncode == (1 if "validate" in arguments else 0), result.stderr
        assert "\\udcff" in result.stdout
        document = json.loads(result.stdout)  # Python's json turns the escapes back into names
        paths = [
            entry["path"]
            for entry in (document if isinstance(document, list) else document["files"])
        ]
        assert any(
            os.fsencode(path).endswith(b"/d\xff.example.com-metadata.json") for path in paths
        )


def test_a_stdout_that_cannot_encode_the_text(hostile_tree: MetadataTree) -> None:
    environment = {**os.environ, "PYTHONIOENCODING": "ascii"}
    table = run("show", "c", "r", "-o", "table", root=hostile_tree.root, env=environment)
    assert table.returncode == 0, table.stderr
    assert "\\u202e\\xe9" in table.stdout
    document = run("show", "c", "r", "-o", "json", root=hostile_tree.root, env=environment)
    assert document.returncode == 0, document.stderr
    assert document.stdout.isascii()
    model = json.loads(document.stdout)["requests"][0]["devices"][0]["attributes"]["model"]
    assert model == {"string": "H200 \x1b]0;owned\x07\u202eé"}
    exported = run("env", "c", "r", "--attribute", "model", root=hostile_tree.root, env=environment)
    assert exported.returncode == 0, exported.stderr
    # env's output is for a shell: the value's bytes exactly (UTF-8), whatever the locale.
    assert exported.stdout == "export MODEL='H200 \x1b]0;owned\x07\u202eé'\n"
