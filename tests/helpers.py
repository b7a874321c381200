"""Building blocks that tests of every stage import (``from helpers import ...``): the
repository's paths, the command in a subprocess, who this process runs as, and the upstream
test object as wire JSON.

``tests/`` is on ``sys.path`` (``pythonpath`` in pyproject.toml), so this module, ``kube_harness``
and ``kube_pools_harness`` are imported by their names from any folder; conftest.py files hold
fixtures only.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from dra_metadata import MetadataDecodeError, decode_stream

TESTS = Path(__file__).parent
REPO = TESTS.parent
UPSTREAM = TESTS / "data" / "upstream"
SHARED_UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream"

V1ALPHA1 = "metadata.resource.k8s.io/v1alpha1"
V1BETA1 = "metadata.resource.k8s.io/v1beta1"

_UPSTREAM_TEST_OBJECT: dict[str, Any] = {
    "kind": "DeviceMetadata",
    "apiVersion": V1ALPHA1,
    "metadata": {"name": "my-claim", "namespace": "default", "uid": "uid-1234", "generation": 1},
    "requests": [
        {
            "name": "gpu",
            "devices": [
                {
                    "driver": "gpu.example.com",
                    "pool": "worker-0",
                    "name": "gpu-0",
                    "attributes": {"model": {"string": "LATEST-GPU-MODEL"}},
                }
            ],
        }
    ],
}


def wire_object(api_version: str | None = V1ALPHA1, **top_level: Any) -> dict[str, Any]:
    """The object of upstream's decode tests; keyword arguments replace top-level keys
    (``None`` removes the key)."""
    obj = copy.deepcopy(_UPSTREAM_TEST_OBJECT)
    obj["apiVersion"] = api_version
    obj.update(top_level)
    return {key: value for key, value in obj.items() if value is not None}


def compact(obj: Any) -> bytes:
    """One stream object as upstream's tests write it: compact JSON and a newline."""
    return orjson.dumps(obj) + b"\n"


def stream(*objects: Any) -> bytes:
    return b"".join(compact(obj) for obj in objects)


def outcome(data: bytes) -> tuple[Any, ...]:
    """Everything a caller can see of a decode: the result, or the error and its attributes."""
    try:
        result = decode_stream(data)
    except MetadataDecodeError as error:
        return (
            type(error).__name__,
            str(error),
            error.object_index,
            error.api_version,
            error.field,
            error.truncated,
            getattr(error, "unknown_versions", None),
        )
    return (result.metadata, result.api_version, result.skipped_versions)


def read_every_object_exactly(patch: pytest.MonkeyPatch) -> None:
    """Make decode_stream read every object with the exact parser, as it does for what orjson
    refuses: the writer's stream takes the general way, which reads with ``_read_value``."""
    from dra_metadata._decoding import _decode as decode_module  # noqa: PLC0415

    patch.setattr(
        decode_module,
        "_read_value",
        lambda data, start, first: decode_module._read_value_exactly(data, start),  # noqa: ARG005
    )
    general = decode_module._decode_objects
    patch.setattr(decode_module, "decode_bytes", lambda data, path=None: general(data, path, None))


def compiler_and_headers() -> str | None:
    """Why this machine cannot compile the package's extension module, or None if it can."""
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler}) on this machine"
    if not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        return "no Python headers (Python.h) on this machine"
    return None


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def unprivileged() -> tuple[dict[str, Any], str]:
    """How to start this Python without the privilege to bypass file permissions.

    As user nobody where this Python can be run so; else as root without the capabilities
    that bypass permissions (setpriv), which is what matters for a mode-000 file.
    """
    if not running_as_root():
        return {}, "not root already"
    nobody: dict[str, Any] = {"user": 65534, "group": 65534, "extra_groups": []}
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "import dra_metadata"],
            capture_output=True,
            check=False,
            cwd="/",
            **nobody,
        )
    except PermissionError:
        probe = None
    if probe is not None and probe.returncode == 0:
        return nobody, "user nobody"
    if shutil.which("setpriv") is None:
        pytest.skip("this Python cannot run as nobody here, and setpriv is missing")
    dropped = "-dac_override,-dac_read_search,-fowner"
    return {
        "prefix": ("setpriv", f"--bounding-set={dropped}", "--inh-caps=-all")
    }, "root without DAC caps"


def can_unshare() -> str | None:
    """None when this process may make a private mount namespace (for real bind mounts), else
    why not: the reason of a skip."""
    if not running_as_root():
        return "needs root for a private mount namespace"
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"unshare -m is not allowed here: {probe.stderr.decode().strip()}"
    return None


SAMPLE = REPO / "examples" / "tree"
COMMAND = str(Path(sys.executable).parent / "dra-metadata")


def run_command(
    *arguments: str | bytes, root: Path | None = SAMPLE, timeout: float = 60, **options: object
) -> subprocess.CompletedProcess[str]:
    """The installed dra-metadata command in a subprocess; ``--root`` first unless None."""
    prefix = ["--root", str(root)] if root is not None else []
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [COMMAND, *prefix, *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **options,
    )


def run_python(code: str, *arguments: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """``python -c code arguments...`` in the repository, with a bare environment and
    ``environment``."""
    return subprocess.run(
        [sys.executable, "-c", code, *arguments],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", **environment},
        check=False,
        timeout=60,
    )


# Readiness: a test that must act while another process (or thread) is in a given state waits
# for a sign of that state, never for a guessed time, and fails naming what never came.

READY_TIMEOUT = 60.0
"""Seconds a readiness wait allows: generous, since a busy machine may give a process little
CPU; a wait returns as soon as its sign is there, so this costs nothing when all is well."""


def wait_until(condition: Callable[[], object], what: str, timeout: float = READY_TIMEOUT) -> None:
    """Return once ``condition()`` is true; an AssertionError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout:g} s")
        time.sleep(0.01)


def catches_signal(pid: int, number: int) -> bool:
    """Whether process ``pid`` has installed a handler for signal ``number`` (SigCgt in
    /proc/PID/status): from then on the signal runs that handler, not the default action."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except FileNotFoundError:  # it has ended
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (number - 1) & 1)
    return False


def _target(descriptor: Path) -> str:
    try:
        return str(descriptor.readlink())
    except OSError:  # closed meanwhile
        return ""


def inotify_instances(pid: int | str = "self") -> int:
    """How many inotify instances process ``pid`` holds (descriptors of /proc/PID/fd)."""
    try:
        entries = list(Path(f"/proc/{pid}/fd").iterdir())
    except FileNotFoundError:  # it has ended
        return 0
    return [_target(entry) for entry in entries].count("anon_inode:inotify")


def wait_until_watching(process: subprocess.Popen[Any], what: str) -> None:
    """Return once ``process`` holds an inotify instance: it has started to wait on the files.

    Fails if the process ends first (its exit code in the message) or after READY_TIMEOUT.
    """
    wait_until(
        lambda: process.poll() is not None or inotify_instances(process.pid) > 0,
        f"{what} waiting on inotify",
    )
    assert process.poll() is None, f"{what} ended (exit {process.returncode}) before it waited"


_REPLACER = """
import os, sys
path = sys.argv[1]
data = open(path, "rb").read()
temporary = path + ".next"

def replace():
    with open(temporary, "wb") as file:
        file.write(data)
    os.rename(temporary, path)

replace()
print("replaced", flush=True)
while True:
    replace()
"""


@contextmanager
def replaced_without_pause(path: Path) -> Iterator[None]:
    """While in the block, another process replaces ``path`` by rename over and over with the
    same bytes, as a driver rewriting its file atomically (the block starts after the first
    rename); the process is stopped at the end."""
    process = subprocess.Popen(
        [sys.executable, "-c", _REPLACER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "replaced\n", "the replacing process did not start"
        yield
    finally:
        process.kill()
        process.communicate()
        Path(f"{path}.next").unlink(missing_ok=True)
