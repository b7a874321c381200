"""The console script turns the garbage collector off only while it imports the command.

What the imports make lives as long as the process; the objects are frozen afterwards and the
collector is back on for the subcommand, so a long ``wait`` or ``watch`` frees its garbage as
any program does. The state is read at exit (an atexit hook), where the subcommand left it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import COMMAND, SAMPLE

SHOW = ["--root", str(SAMPLE), "show", "training-gpus", "gpu"]


def _collector_at_exit(tmp_path: Path, *, before: str = "") -> tuple[bool, int, int]:
    """Whether the collector is on, how many objects are frozen, and the exit code of one run
    of the console script as the shell starts it (run as code, so that a hook can look)."""
    report = tmp_path / "collector"
    code = (
        "import atexit, gc, sys\n"
        f"{before}\n"
        "atexit.register(lambda: open("
        f"{str(report)!r}, 'w').write(f'{{gc.isenabled()}} {{gc.get_freeze_count()}}'))\n"
        f"sys.argv = [{COMMAND!r}, *{SHOW!r}]\n"
        f"exec(compile(open({COMMAND!r}).read(), {COMMAND!r}, 'exec'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    enabled, frozen = report.read_text().split()
    return enabled == "True", int(frozen), result.returncode


def test_the_subcommand_runs_with_the_collector_on_and_start_up_frozen(tmp_path: Path) -> None:
    enabled, frozen, code = _collector_at_exit(tmp_path)
    assert code == 0
    assert enabled
    assert frozen > 10_000  # the command's modules, classes and functions


def test_a_collector_turned_off_before_stays_off(tmp_path: Path) -> None:
    enabled, _, code = _collector_at_exit(tmp_path, before="gc.disable()")
    assert code == 0
    assert not enabled
