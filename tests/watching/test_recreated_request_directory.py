"""A request directory deleted and made again, over and over: each update arrives by inotify.

Between a watcher's look at the directory (absent) and its inotify watch on the parent, the
directory can come back: a watch added then sees nothing of it, and only the timed re-check
would. The watcher looks again after adding a watch, so every update arrives within inotify's
latency. The re-check is 60 s away here (poll_interval=60): only inotify can deliver in time,
and the bound (20 s per update) is far from both.

The parent can also go and come back between the look and the watch: the watch then fails
(ENOENT) on a directory that is there again a moment later, a new one by the same name, which
must be watched all the same (else nothing is watched at all until the re-check).
"""

from __future__ import annotations

import queue
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import Device
from dra_metadata._watch import _hub
from dra_metadata._watch._inotify import Hints
from dra_metadata.testing import MetadataTree

from helpers import wait_until

POLL_INTERVAL = 60.0
BOUND = 20.0
"""Seconds an update may take to arrive: generous on a busy machine, a third of the re-check."""
TRIES = 50
DRIVER = "gpu.example.com"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
@pytest.mark.parametrize("removed", ["request directory", "claim directory"])
def test_every_update_arrives_by_inotify(tmp_path: Path, removed: str) -> None:
    tree = MetadataTree(tmp_path, mode="atomic")
    path = tree.add_claim("c", "gpu", DRIVER, [Device(name="gpu-0")], generation=1)
    request_directory = path.parent
    gone = request_directory if removed == "request directory" else request_directory.parent
    seen: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    failures: list[BaseException] = []

    def watch() -> None:
        try:
            for event in dra_metadata.watch_claim_metadata(
                "c",
                "gpu",
                root=tmp_path,
                poll_interval=POLL_INTERVAL,
                force_polling=False,
                stop_event=stop,
            ):
                if DRIVER in event.generations:
                    seen.put(event.generations[DRIVER])
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)
            seen.put(-1)

    watching = threading.Thread(target=watch)
    watching.start()
    latencies: list[float] = []
    try:
        assert seen.get(timeout=BOUND) == 1  # watching
        for generation in range(2, TRIES + 2):
            shutil.rmtree(gone)
            written = time.monotonic()
            tree.add_claim("c", "gpu", DRIVER, [Device(name="gpu-0")], generation=generation)
            deadline = written + BOUND
            while True:
                remaining = deadline - time.monotonic()
                try:
                    got = seen.get(timeout=max(remaining, 0))
                except queue.Empty:
                    pytest.fail(
                        f"try {generation - 1}: generation {generation} did not arrive within "
                        f"{BOUND:g} s (inotify lost it; the re-check is {POLL_INTERVAL:g} s away)"
                    )
                assert not failures, failures
                if got == generation:
                    latencies.append(time.monotonic() - written)
                    break
    finally:
        stop.set()
        watching.join(BOUND)
    assert not failures, failures
    assert len(latencies) == TRIES


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_parent_made_again_while_its_watch_is_added_is_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The claim directory is removed just before inotify is asked to watch it (the watch fails
    # with ENOENT) and made again just after: the real race of a driver that removes and
    # writes a claim while the watcher moves its watch, made certain.
    claim = tmp_path / "resourceclaims" / "c"
    claim.mkdir(parents=True)
    request = claim / "gpu"
    hints = Hints()
    assert hints.start()
    hub = hints._hub  # the shared instance whose watch is raced
    assert hub is not None
    add_watch = hub.add_watch
    raced: list[Path] = []

    def removed_and_made_again_around(
        user: _hub.Subscriber, path: Path, mask: int, entry: tuple[bool, Path]
    ) -> int:
        if path != claim or raced:
            return add_watch(user, path, mask, entry)
        raced.append(path)
        path.rmdir()
        try:
            return add_watch(user, path, mask, entry)
        finally:
            path.mkdir()

    monkeypatch.setattr(hub, "add_watch", removed_and_made_again_around)
    try:
        hints.watch_directory(request)
        assert raced == [claim]
        request.mkdir()  # seen only by a watch on the claim directory made again
        wait_until(hints.pending, "the claim directory made again is watched", timeout=BOUND)
        assert hints.take() == ({request}, False)
    finally:
        hints.close()
