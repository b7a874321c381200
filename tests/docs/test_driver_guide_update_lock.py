"""The driver guide says how update_metadata_file holds its lock, as the code does it.

A function ``change`` runs outside the directory lock (so that it may call the writers itself)
and is run again when another writer changed the file meanwhile, up to UPDATE_ATTEMPTS times;
a list of devices is applied under one hold of the lock. The guide states both, with the number
the code uses; tests/writing/test_update_lock.py pins the behaviour itself. Here, also, that the lock is
free while a function runs: another open of the directory can take it without waiting.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import os
import re
import shutil
from pathlib import Path

from dra_metadata import DeviceMetadata, read_metadata_file
from dra_metadata.writer import UPDATE_ATTEMPTS, update_metadata_file

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guides" / "drivers.md"


def lock_bullet() -> str:
    """The guide's bullet on the lock, its lines joined."""
    text = GUIDE.read_text(encoding="utf-8")
    (bullet,) = re.findall(
        r"^\* Writers hold an advisory lock.*?(?=^\* |^\n)", text, re.MULTILINE | re.DOTALL
    )
    return " ".join(bullet.split())


def test_the_guide_says_when_the_lock_is_held() -> None:
    said = lock_bullet()
    assert "Given a list of devices, it holds the lock from reading to writing." in said
    assert (
        "Given a function, it reads the file under the lock, runs the function outside it" in said
    )
    assert f"up to {UPDATE_ATTEMPTS} times in a row before a `MetadataWriteError`" in said
    assert f"errno `{errno.errorcode[errno.EAGAIN]}`" in said
    assert "it may run more than once" in said


def test_the_lock_is_free_while_the_function_runs(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    shutil.copytree(REPO / "examples" / "tree" / "resourceclaims" / "fast-net" / "vf", plugin)
    (path,) = plugin.glob("*-metadata.json")
    before = read_metadata_file(path)
    taken: list[bool] = []

    def change(current: DeviceMetadata) -> DeviceMetadata:
        descriptor = os.open(plugin, os.O_RDONLY | os.O_DIRECTORY)
        try:  # a lock still held by the writer would make this fail at once (EWOULDBLOCK)
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            taken.append(True)
        finally:
            os.close(descriptor)
        (request,) = current.requests
        device = dataclasses.replace(request.devices[0], network_data=None)
        return dataclasses.replace(
            current, requests=(dataclasses.replace(request, devices=(device,)),)
        )

    updated = update_metadata_file(path, change)
    assert taken == [True]
    assert updated.generation == before.generation + 1
    assert read_metadata_file(path).devices[0].network_data is None
