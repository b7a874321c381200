"""The hub's periodic status check, the full re-read backstop, and shared stop relays.

A write through a shared memory mapping is a real change inotify never reports (no
IN_MODIFY, no IN_CLOSE_WRITE while the mapping's descriptor stays open): the first write to a
page updates the file's modification time, so the hub's status check finds it; a second write
to the same, still dirty page changes neither the size nor the times, so only the backstop
re-read (every BACKSTOP_INTERVALS poll intervals) finds it.
"""

from __future__ import annotations

import asyncio
import mmap
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import MetadataEventKind
from dra_metadata._watch import _pacing
from dra_metadata._watch._engine import BACKSTOP_INTERVALS
from dra_metadata.writer import encode_stream

from test_watch import metadata

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="needs inotify (Linux)"
)


@contextmanager
def mapped(path: Path) -> Iterator[mmap.mmap]:
    """The file mapped for writing; its descriptor stays open (no IN_CLOSE_WRITE) until the end."""
    descriptor = os.open(path, os.O_RDWR)
    try:
        mapping = mmap.mmap(descriptor, 0)
        try:
            yield mapping
        finally:
            mapping.close()
    finally:
        os.close(descriptor)


def write_generation(mapping: mmap.mmap, generation: int) -> None:
    """Rewrite the mapped file as generation ``generation`` (of the same length)."""
    data = encode_stream(metadata(generation))
    assert len(data) == len(mapping)
    mapping[:] = data


@pytest.fixture
def file(tmp_path: Path) -> Path:
    path = tmp_path / "nic.example.com-metadata.json"
    path.write_bytes(encode_stream(metadata(1)))
    return path


def _generation(event: dra_metadata.MetadataEvent) -> int:
    return event.generations["nic.example.com"]


def test_a_change_inotify_does_not_report_is_found_by_the_status_check(file: Path) -> None:
    # poll_interval=2: the backstop (20 s) comes after the timeout (15 s), so only the hub's
    # status check, every 2 s, can find the change before the watch ends.
    poll_interval = 2.0
    assert poll_interval * BACKSTOP_INTERVALS > 15
    events = dra_metadata.watch_metadata_file(
        file, poll_interval=poll_interval, timeout=15, force_polling=False
    )
    with mapped(file) as mapping:
        first = next(events)
        assert (first.kind, _generation(first)) == (MetadataEventKind.CREATED, 1)
        time.sleep(0.05)  # a tick of the file system's clock: the new mtime differs
        write_generation(mapping, 2)
        second = next(events, None)
    events.close()
    assert second is not None, "the change was not found before the timeout"
    assert (second.kind, _generation(second)) == (MetadataEventKind.UPDATED, 2)


def test_the_same_for_an_async_watch(file: Path) -> None:
    async def main() -> list[tuple[MetadataEventKind, int]]:
        seen = []
        with mapped(file) as mapping:
            async for event in dra_metadata.awatch_metadata_file(
                file, poll_interval=2.0, timeout=15, force_polling=False
            ):
                seen.append((event.kind, _generation(event)))
                if len(seen) == 2:
                    break
                await asyncio.sleep(0.05)
                write_generation(mapping, 2)
        return seen

    assert asyncio.run(main()) == [(MetadataEventKind.CREATED, 1), (MetadataEventKind.UPDATED, 2)]


def test_the_backstop_re_read_finds_what_no_status_shows(file: Path) -> None:
    events = dra_metadata.watch_metadata_file(
        file, poll_interval=0.05, timeout=60, force_polling=False
    )
    with mapped(file) as mapping:
        assert _generation(next(events)) == 1
        time.sleep(0.05)
        write_generation(mapping, 2)  # the page becomes dirty: the mtime changes once
        assert _generation(next(events)) == 2
        before = file.stat()
        write_generation(mapping, 3)  # the same dirty page: no status changes
        after = file.stat()
        third = next(events, None)
    events.close()
    if (before.st_mtime_ns, before.st_ctime_ns) != (after.st_mtime_ns, after.st_ctime_ns):
        pytest.skip("the page was written back meanwhile: the status changed after all")
    assert third is not None, "the backstop re-read did not find the change"
    assert _generation(third) == 3


def test_watches_sharing_a_stop_event_share_one_relay(tmp_path: Path) -> None:
    count = 20
    stop = threading.Event()
    paths = []
    for index in range(count):
        path = tmp_path / f"d{index}.example.com-metadata.json"
        path.write_bytes(encode_stream(metadata(1, driver=f"d{index}.example.com")))
        paths.append(path)
    ended: list[bool] = []

    def watch(path: Path) -> None:
        for _ in dra_metadata.watch_metadata_file(path, stop_event=stop, force_polling=False):
            pass
        ended.append(True)

    earlier = set(threading.enumerate())  # relays of other tests may linger for a slice
    threads = [threading.Thread(target=watch, args=(path,), daemon=True) for path in paths]
    for thread in threads:
        thread.start()
    give_up = time.monotonic() + 30
    while time.monotonic() < give_up:  # until every watch pauses (and has subscribed)
        with _pacing._relays_lock:
            relay = _pacing._relays.get(id(stop))
            if relay is not None and len(relay.notifies) == count:
                break
        time.sleep(0.01)
    relays = [
        thread
        for thread in threading.enumerate()
        if thread.name == "dra-metadata stop relay" and thread not in earlier
    ]
    subscribed = len(relay.notifies) if relay is not None else 0
    stop.set()
    for thread in threads:
        thread.join(10)
    assert subscribed == count
    assert len(relays) == 1
    assert len(ended) == count
    assert id(stop) not in _pacing._relays
