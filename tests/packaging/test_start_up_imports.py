"""What `import dra_metadata` and `dra-metadata show` load: nothing beyond an allowlist.

Start-up time is checked by benchmarks/bench_cli.py, never by a timed test; this guard is its
exact counterpart: the modules a run has loaded when it exits (``sys.modules``), compared with
the floor (what ``python -c "import orjson"`` loads in the same environment: the interpreter,
site and its .pth files, orjson's own imports; a read cannot load less) and an allowlist that
says why each further module is needed. A new import on these paths fails here until it is
listed with its reason, or made lazy.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import COMMAND, SAMPLE

# Beyond the floor, every one of these paths may load these standard-library modules.
STANDARD_LIBRARY = {
    "__future__",  # `from __future__ import annotations` in our modules
    "pathlib",  # paths in the models (MetadataSource.path), errors and the reader
    "fnmatch",  # pathlib's imports
    "ntpath",
    "errno",
    "math",  # urllib.parse's, on 3.12 and later
    "pathlib._abc",  # on 3.13 pathlib is a package, which imports these
    "pathlib._local",
    "glob",
    "grp",
    "pwd",
    "warnings",
    "contextvars",  # how not-found messages are worded (library or command), per context
    "_contextvars",
}
# pathlib's import of urllib.parse (for PurePath.as_uri alone) on 3.10 to 3.12, and
# urllib.parse's of ipaddress: a read from Python loads them, the console script never does (it
# imports pathlib without them, as 3.13 does).
URLLIB = {"urllib", "urllib.parse", "ipaddress"}
# What a one-shot command needs of those for its own work.
OWN_NEEDS = {"validate": {"ipaddress"}}  # it checks the IP addresses of network data
# The command adds argument parsing and signal handling.
COMMAND_LINE = {
    "argparse",  # the parser of the command and its subcommands
    "gettext",  # argparse's messages are translatable
    "locale",  # gettext's language lookup
    "_locale",
    "gc",  # built in: collections off while the command imports, its objects frozen after
    "select",  # stdout a pipe (as here): whether its reader is gone, before a write fails
    "shlex",  # show -o env, a value that needs quoting for a shell (not loaded otherwise)
}
# Ours: the public faces, then the stages a read needs, nothing of watching, validation, the
# Kubernetes API or writing.
IMPORT_PACKAGE = {"dra_metadata"}
READING = {
    "dra_metadata._model",  # the models and their errors
    "dra_metadata._model._checks",
    "dra_metadata._model._errors",
    "dra_metadata._model._metadata",
    "dra_metadata._model._object_meta",  # ObjectMeta and its entries
    "dra_metadata._model._models",
    "dra_metadata._model._repr",
    "dra_metadata._model._attributes",  # DeviceAttribute, AttributeMap
    "dra_metadata._model._building",  # the decoder's unchecked constructors
    "dra_metadata._model._frozen",  # the models' methods, made without compiling any
    "dra_metadata._model._raw_json",  # comparing raw JSON (fieldsV1) without recursion
    "dra_metadata._model._semver",  # Version, a version attribute's value
    "dra_metadata._model._typed_reads",  # Device.attribute(..., type=int): the models' own
    "dra_metadata._model._versions",
    "dra_metadata._decoding",  # the fast path: splitting, orjson, the compiled check
    "dra_metadata._decoding._convert",
    "dra_metadata._decoding._decode",
    "dra_metadata._decoding._fields",
    "dra_metadata._decoding._gotime",
    "dra_metadata._decoding._result",  # DecodeResult
    "dra_metadata._decoding._speedups",
    "dra_metadata._decoding._split",
    "dra_metadata._reading",  # paths, the bounded read, selection, not-found help
    "dra_metadata._reading._missing",
    "dra_metadata._reading._paths",
    "dra_metadata._reading._pinned",  # a file with no link: frozen view or being replaced
    "dra_metadata._reading._read",
    "dra_metadata._reading._select",
}
SHOW = {
    "dra_metadata._model._export",  # show's JSON: the object as the wire has it
    "dra_metadata._model._wire",
    "dra_metadata.cli",  # the console script: signals first, then the parser of `show` only
    "dra_metadata.cli._entry",
    "dra_metadata.cli._signals",
    "dra_metadata.cli._main",
    "dra_metadata.cli._arguments",
    "dra_metadata.cli._commands",
    "dra_metadata.cli._commands.show",
    "dra_metadata.cli._exit",
    "dra_metadata.cli._install",  # the extra a subcommand needs, checked before it runs
    "dra_metadata.cli._kube",  # --root refused by the subcommands that read only the API
    "dra_metadata.cli._output",
}
# Never on a one-shot command's path: type hints are for type checkers (`TYPE_CHECKING = False`),
# the models' field annotations need nothing of typing, and typing costs as much as the models.
TYPING = {"typing", "_typing", "typing.io", "typing.re"}
# Never on a one-shot command's path: each is a large import tree (and the reason why).
NEVER = {
    "asyncio",  # only the awatch_* and await_* coroutines
    "ssl",  # only the Kubernetes API
    "socket",
    "logging",  # only when there is a warning to log
    "email",  # importlib.metadata's: --version reads the version itself
    "importlib.metadata",
    "pkgutil",  # the subcommands are listed from their folder
    "shutil",  # argparse's terminal width, found without it
    "inspect",  # (through dataclasses; in the floor while orjson imports it)
    "pydantic",  # only json_schema() and validation
    "inotify_simple",  # only watching
    "threading",  # only a watch or wait that starts inotify (the hub's thread)
    "signal",  # its enums of every signal: the handlers are set through _signal (built in)
    "lightkube",
    "httpx2",
}


def _modules_at_exit(code: str, tmp_path: Path) -> set[str]:
    """The modules loaded when a fresh interpreter running ``code`` exits."""
    listing = tmp_path / "modules.txt"
    harness = (
        "import atexit, sys\n"  # atexit is the harness's own (a built-in module)
        f"atexit.register(lambda: open({str(listing)!r}, 'w').write('\\n'.join(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", harness + code],
        cwd=tmp_path,  # not the checkout: -c puts the working directory first on sys.path
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return set(listing.read_text().split())


def _console_script(*arguments: str) -> str:
    """Code that runs the installed console script as the shell would, in this interpreter."""
    return (
        f"sys.argv = [{COMMAND!r}, *{list(arguments)!r}]\n"
        f"exec(compile(open({COMMAND!r}).read(), {COMMAND!r}, 'exec'))\n"
    )


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    return _modules_at_exit("import orjson", tmp_path_factory.mktemp("floor"))


def test_import_dra_metadata_loads_only_the_package(floor: set[str], tmp_path: Path) -> None:
    loaded = _modules_at_exit("import dra_metadata", tmp_path)
    assert sorted(loaded - floor - IMPORT_PACKAGE) == []


def test_a_read_loads_the_reading_stages_only(floor: set[str], tmp_path: Path) -> None:
    code = (
        "import dra_metadata\n"
        f"dra_metadata.read_claim_metadata('training-gpus', 'gpu', root={str(SAMPLE)!r})\n"
    )
    loaded = _modules_at_exit(code, tmp_path)
    allowed = STANDARD_LIBRARY | URLLIB | IMPORT_PACKAGE | READING
    assert sorted(loaded - floor - allowed) == []
    assert sorted(loaded & (NEVER | TYPING) - floor) == []


def test_show_loads_only_the_allowlist(floor: set[str], tmp_path: Path) -> None:
    code = _console_script("--root", str(SAMPLE), "show", "training-gpus", "gpu")
    loaded = _modules_at_exit(code, tmp_path)
    allowed = STANDARD_LIBRARY | COMMAND_LINE | IMPORT_PACKAGE | READING | SHOW
    assert sorted(loaded - floor - allowed) == []
    assert sorted(loaded & (NEVER | TYPING | URLLIB) - floor) == []
    assert "dra_metadata.cli._commands.show" in loaded  # the guard sees what the run did


@pytest.mark.parametrize(
    "arguments",
    [
        ("path", "training-gpus", "gpu"),
        ("env", "fast-net", "vf", "--attribute", "resource.kubernetes.io/pciBusID=BUS"),
        ("wait", "fast-net", "vf", "--for", "network-data"),
        ("ls",),
        ("validate",),
        ("--help",),
        ("--version",),
        ("health", "--help"),
    ],
    ids=lambda arguments: " ".join(arguments[:1]) + (" --help" if "--help" in arguments else ""),
)
def test_no_one_shot_command_loads_a_large_tree(
    floor: set[str], tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    loaded = _modules_at_exit(_console_script("--root", str(SAMPLE), *arguments), tmp_path)
    needed = OWN_NEEDS.get(arguments[0], set())
    assert sorted(loaded & (NEVER | TYPING | URLLIB) - floor - needed) == []


def test_version_loads_no_subcommand(floor: set[str], tmp_path: Path) -> None:
    loaded = _modules_at_exit(_console_script("--version"), tmp_path)
    assert sorted(name for name in loaded if name.startswith("dra_metadata.cli._commands.")) == []


@pytest.mark.parametrize("arguments", [("--help",), ("--version",)], ids=" ".join)
def test_help_and_version_load_no_reader_nor_model_nor_typing(
    floor: set[str], tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    # They list the subcommands (--help their summaries): nothing is read, decoded, modelled
    # (the errors apart: the command says every ending in their terms) or typed.
    loaded = _modules_at_exit(_console_script(*arguments), tmp_path)
    readers = {
        name
        for name in loaded
        if name.startswith(
            (
                "dra_metadata._decoding",
                "dra_metadata._reading._read",
                "dra_metadata._reading._listing",
                "dra_metadata._model.",
            )
        )
    } - {"dra_metadata._model._errors"}
    assert sorted(readers | (loaded & TYPING - floor)) == []
