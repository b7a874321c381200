"""Ctrl-C or SIGTERM at any moment of a run: one line on stderr, exit 130 or 143.

The moments that matter most are the imports of start-up, where a signal used to show a
KeyboardInterrupt traceback. No test here relies on timing for its verdict:

* the process says when its handlers are installed: the SIGTERM bit of ``SigCgt`` in
  /proc/PID/status (the console script installs both before it imports anything else of ours;
  before that, the interpreter's own start-up, a signal has its default effect as for any
  program), and the test signals it only from then on;
* each run is classified by what it did, not by when the signal was sent: ``-X importtime``
  writes a line as each import completes, so a run whose stderr lacks the line of
  ``dra_metadata.cli._main`` was signalled during the imports;
* every run must either end with exactly one line and 130/143, or (the signal came after it
  had finished) have succeeded with the whole output; and a good part of the runs must have
  been signalled during the imports, so that the test cannot pass without exercising them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import COMMAND, SAMPLE

SHOW = ["--root", str(SAMPLE), "show", "training-gpus", "gpu"]
LINES = {signal.SIGINT: "dra-metadata: interrupted", signal.SIGTERM: "dra-metadata: terminated"}
CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
RUNS = 24
DELAYS = (0.0, 0.0005, 0.001, 0.002, 0.004, 0.008)
"""After the handlers are in place: the imports of start-up take longer than most of these."""
BOUND = 60.0
"""Seconds a step may take on a very busy machine before the test calls it hung."""


def _with_sigint(disposition: str) -> list[str]:
    """A launcher that sets SIGINT's disposition, then execs (the same process, the same pid).

    A process started with SIGINT ignored (as a shell starts a background job, or as a test
    runner may start its workers) keeps ignoring it: by default, start the command as a
    terminal would."""
    code = (
        f"import os, signal, sys; signal.signal(signal.SIGINT, signal.{disposition}); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", code]


def _caught(pid: int) -> int:
    """The SigCgt mask of a process (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return int(line.split()[1], 16)
    return 0


def _start(*, sigint: str = "SIG_DFL") -> subprocess.Popen[str]:
    """The console script, as a shell runs it, with ``-X importtime`` for the classification.

    The launcher handles SIGINT but never SIGTERM, and exec resets what a process handles: the
    SIGTERM bit is the command's own."""
    return subprocess.Popen(
        [*_with_sigint(sigint), sys.executable, "-X", "importtime", COMMAND, *SHOW],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "DRA_METADATA_ROOT"},
    )


def _wait_for_handlers(process: subprocess.Popen[str]) -> bool:
    """Until the command handles SIGTERM (True) or has exited (False): its readiness signal."""
    deadline = time.monotonic() + BOUND
    term = 1 << (signal.SIGTERM - 1)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        if _caught(process.pid) & term:
            return True
        time.sleep(0.0002)
    pytest.fail(f"the command did not install its handlers within {BOUND} s")


def _messages(stderr: str) -> list[str]:
    """stderr without the lines of -X importtime."""
    return [line for line in stderr.splitlines() if not line.startswith("import time:")]


def _imports_done(stderr: str) -> bool:
    return any(line.rstrip().endswith("| dra_metadata.cli._main") for line in stderr.splitlines())


@pytest.fixture(scope="module")
def complete_output() -> str:
    result = subprocess.run([COMMAND, *SHOW], capture_output=True, text=True, check=True)
    return result.stdout


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_any_moment_gets_one_line_and_its_code(
    sent: signal.Signals, complete_output: str
) -> None:
    during_imports = 0
    for run in range(RUNS):
        process = _start()
        if _wait_for_handlers(process):
            time.sleep(DELAYS[run % len(DELAYS)])
            process.send_signal(sent)  # nothing, if it has been reaped already
        stdout, stderr = process.communicate(timeout=BOUND)
        if process.returncode == 0:  # the signal came after the command had finished its work
            assert _messages(stderr) == []
            assert stdout == complete_output
            continue
        assert (process.returncode, _messages(stderr)) == (CODES[sent], [LINES[sent]]), stderr
        during_imports += not _imports_done(stderr)
    # The runs did exercise the imports (the moment a traceback used to come from).
    assert during_imports >= RUNS // 3, f"{during_imports} of {RUNS} runs hit the imports"


def test_sigint_ignored_at_start_stays_ignored(complete_output: str) -> None:
    # A background job: Ctrl-C of the terminal is not for it, during start-up or after.
    process = _start(sigint="SIG_IGN")
    if _wait_for_handlers(process):
        process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=BOUND)
    assert (process.returncode, _messages(stderr)) == (0, [])
    assert stdout == complete_output


def _watching(pid: int) -> bool:
    """Whether the process holds an inotify instance: a wait that has started to wait."""
    try:
        links = [str(entry.readlink()) for entry in Path(f"/proc/{pid}/fd").iterdir()]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "anon_inode:inotify" in links


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_waiting_gets_the_same_line(sent: signal.Signals, tmp_path: Path) -> None:
    # Inside the run, the subcommand's clean-up runs first; the line and the code are the same.
    with subprocess.Popen(
        [
            *_with_sigint("SIG_DFL"),
            COMMAND,
            "--root",
            str(tmp_path),
            "wait",
            "nothing",
            "here",
            "-q",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        deadline = time.monotonic() + BOUND
        while not _watching(process.pid):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the wait never started to watch"
            time.sleep(0.01)
        process.send_signal(sent)
        stdout, stderr = process.communicate(timeout=BOUND)
    assert (process.returncode, stderr.splitlines(), stdout) == (CODES[sent], [LINES[sent]], "")
