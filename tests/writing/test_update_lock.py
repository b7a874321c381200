"""No call pattern of the writers deadlocks a process.

update_metadata_file runs a function ``change`` outside its directory lock, so ``change`` may
call the writers itself, from its own thread or from others. Each case runs in a fresh
interpreter under a timeout: the timeout is a hang guard (a deadlock would otherwise hang the
suite), not a measure of speed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO

HANG_GUARD = 120  # seconds; each case takes well under one

PRELUDE = """
import errno, json, sys, threading
from dataclasses import replace
from pathlib import Path
from dra_metadata import DeviceMetadata, MetadataWriteError, ObjectMeta, read_metadata_file
from dra_metadata.writer import update_metadata_file, write_metadata_file

directory = Path(sys.argv[1])
a, b = directory / "a-metadata.json", directory / "b-metadata.json"
for path in (a, b):
    write_metadata_file(path, DeviceMetadata(metadata=ObjectMeta(name="c", generation=1)))

def generation(path):
    return read_metadata_file(path).generation

def labelled(value):
    def change(current):
        labels = {**current.metadata.labels, "by": value}
        return replace(current, metadata=replace(current.metadata, labels=labels))
    return change

def in_thread(function):
    thread = threading.Thread(target=function)
    thread.start()
    thread.join()
"""


def _run(tmp_path: Path, code: str) -> Any:
    """The JSON that ``code`` prints, run after PRELUDE in a fresh interpreter."""
    try:
        result = subprocess.run(
            [sys.executable, "-c", PRELUDE + code, str(tmp_path)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"deadlock: still running after {HANG_GUARD} s: {expired.stderr!r}")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    "inner",
    [
        "write_metadata_file(b, current)",
        "update_metadata_file(b, labelled('inner'))",
        "in_thread(lambda: write_metadata_file(b, current))",
        "in_thread(lambda: update_metadata_file(b, labelled('inner')))",
    ],
)
def test_a_change_may_write_another_file_of_the_directory(tmp_path: Path, inner: str) -> None:
    code = f"""
def change(current):
    {inner}
    return labelled('outer')(current)
written = update_metadata_file(a, change)
print(json.dumps([generation(a), generation(b), read_metadata_file(a).metadata.labels]))
"""
    generation_a, generation_b, labels = _run(tmp_path, code)
    assert generation_a == 2
    assert generation_b in (1, 2)  # a write keeps the generation given, an update bumps it
    assert labels == {"by": "outer"}


def test_a_change_that_writes_its_own_file_is_refused(tmp_path: Path) -> None:
    code = """
outcomes = []
for inner in (
    lambda current: write_metadata_file(a, current),
    lambda current: update_metadata_file(a, labelled('inner')),
    lambda current: update_metadata_file(a, []),
):
    def change(current):
        inner(current)
        return current
    try:
        update_metadata_file(a, change)
    except ValueError as error:
        outcomes.append(str(error))
print(json.dumps([outcomes, generation(a)]))
"""
    outcomes, generation_a = _run(tmp_path, code)
    assert len(outcomes) == 3
    assert all(
        outcome.endswith(
            "a-metadata.json: the change of an update of this file writes it: return the new "
            "object from the change instead"
        )
        for outcome in outcomes
    )
    assert generation_a == 1  # nothing written


def test_another_threads_update_during_a_change_makes_it_run_again(tmp_path: Path) -> None:
    code = """
calls = []
def change(current):
    calls.append(current.generation)
    if len(calls) == 1:
        in_thread(lambda: update_metadata_file(a, labelled('thread')))
    return labelled('outer')(current)
written = update_metadata_file(a, change)
print(json.dumps([calls, written.generation, read_metadata_file(a).metadata.labels]))
"""
    calls, written, labels = _run(tmp_path, code)
    assert calls == [1, 2]  # the second call sees the thread's update
    assert written == 3
    assert labels == {"by": "outer"}  # the thread's label was overwritten by a change that saw it


def test_a_file_that_keeps_changing_under_the_change_gives_up(tmp_path: Path) -> None:
    code = """
from dra_metadata.writer import UPDATE_ATTEMPTS
calls = []
def change(current):
    calls.append(1)
    in_thread(lambda: update_metadata_file(a, labelled(str(len(calls)))))
    return current
try:
    update_metadata_file(a, change)
except MetadataWriteError as error:
    print(json.dumps([len(calls), UPDATE_ATTEMPTS, error.errno == errno.EAGAIN, str(error)]))
"""
    calls, attempts, again, message = _run(tmp_path, code)
    assert calls == attempts == 100
    assert again
    assert message.endswith(
        "another writer changed the file each of the 100 times the change ran; try again later"
    )


def test_two_threads_whose_changes_cross_directories_do_not_deadlock(tmp_path: Path) -> None:
    code = """
other = directory / "other"
other.mkdir()
c, d = other / "c-metadata.json", other / "d-metadata.json"
for path in (c, d):
    write_metadata_file(path, DeviceMetadata(metadata=ObjectMeta(name="c", generation=1)))
both_changing = threading.Barrier(2)
def crossing(into):
    def change(current):
        both_changing.wait(timeout=60)
        write_metadata_file(into, current)
        return current
    return change
threads = [
    threading.Thread(target=lambda: update_metadata_file(a, crossing(d))),
    threading.Thread(target=lambda: update_metadata_file(c, crossing(b))),
]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps([generation(a), generation(c)]))
"""
    assert _run(tmp_path, code) == [2, 2]


def test_threads_updating_one_file_lose_nothing(tmp_path: Path) -> None:
    code = """
seen = []
def updates():
    for _ in range(25):
        seen.append(update_metadata_file(a, lambda current: current).generation)
threads = [threading.Thread(target=updates) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps([sorted(seen), generation(a)]))
"""
    seen, final = _run(tmp_path, code)
    assert seen == list(range(2, 102))  # each generation exactly once
    assert final == 101
