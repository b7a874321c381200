"""Watches and waits facing faults: symlink loops, files in the path, names too long, any
interval; nothing leaks over many cycles; stop checks do no file system work.

Real faults wherever the machine allows; each test that needs a capability skips with the reason
when it is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import (
    InvalidNameError,
    MetadataReadError,
    read_metadata_file,
)
from dra_metadata.testing import MetadataTree
from dra_metadata.writer import write_metadata_file
from fault_children import DRIVER, metadata, run_child


def _strace_problem() -> str | None:
    if shutil.which("strace") is None:
        return "needs strace to inject failing system calls"
    probe = subprocess.run(["strace", "-o", "/dev/null", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"strace cannot trace here: {probe.stderr.decode().strip()}"
    return None


STRACE_PROBLEM = _strace_problem()
needs_strace = pytest.mark.skipif(STRACE_PROBLEM is not None, reason=str(STRACE_PROBLEM))


@pytest.fixture(params=["inotify", "polling"])
def polling(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "polling")


# Watches and waits raise documented errors only --------------------------------------------


def every_watch(
    path: Path, root: Path, driver: str | None, polling: bool
) -> Iterator[Callable[[], object]]:
    """One call of each watch and wait on ``path`` (or the request of ``root``)."""
    options: dict[str, Any] = {"force_polling": polling, "poll_interval": 0.05, "timeout": 5}
    yield lambda: next(dra_metadata.watch_metadata_file(path, **options))
    yield lambda: next(
        dra_metadata.watch_claim_metadata("c", "r", root=root, driver=driver, **options)
    )

    async def first_async() -> object:
        async for event in dra_metadata.awatch_claim_metadata(
            "c", "r", root=root, driver=driver, **options
        ):
            return event
        return None

    yield lambda: asyncio.run(first_async())
    yield lambda: dra_metadata.wait_for_network_data("c", "r", root=root, driver=driver, **options)


class TestWatchErrors:
    def test_a_symlink_loop_is_a_read_error(self, tmp_path: Path, polling: bool) -> None:
        path = dra_metadata.resource_claim_file_path(DRIVER, "c", "r", root=tmp_path)
        path.parent.mkdir(parents=True)
        path.symlink_to(path.name)  # points at itself: ELOOP
        for call in every_watch(path, tmp_path, DRIVER, polling):
            with pytest.raises(MetadataReadError, match="symbolic links") as raised:
                call()
            assert raised.value.errno == errno.ELOOP
            assert raised.value.path == path

    def test_a_root_that_is_a_file_is_a_read_error(self, tmp_path: Path, polling: bool) -> None:
        root = tmp_path / "root"
        root.write_text("not a directory")
        path = dra_metadata.resource_claim_file_path(DRIVER, "c", "r", root=root)
        for driver in (DRIVER, None):
            for call in every_watch(path, root, driver, polling):
                with pytest.raises(MetadataReadError, match=f"{root} is not a directory") as raised:
                    call()
                assert raised.value.errno == errno.ENOTDIR

    def test_a_driver_name_too_long_for_a_file_name_is_refused_at_the_call(
        self, tmp_path: Path
    ) -> None:
        longest, too_long = "d" * 241, "d" * 242  # + "-metadata.json": 255 and 256 bytes
        calls: list[Callable[[str], object]] = [
            lambda driver: dra_metadata.watch_claim_metadata(
                "c", "r", root=tmp_path, driver=driver
            ),
            lambda driver: dra_metadata.awatch_template_metadata(
                "c", "r", root=tmp_path, driver=driver
            ),
            lambda driver: dra_metadata.wait_for(
                bool, "c", "r", root=tmp_path, driver=driver, timeout=0
            ),
            lambda driver: dra_metadata.read_claim_metadata("c", "r", root=tmp_path, driver=driver),
            lambda driver: dra_metadata.resource_claim_file_path(driver, "c", "r", root=tmp_path),
            lambda driver: MetadataTree(tmp_path).add_claim("c", "r", driver, ["n"]),
        ]
        for call in calls:
            with pytest.raises(InvalidNameError, match="would be 256 bytes long, at most 255"):
                call(too_long)
        with pytest.raises(InvalidNameError, match="would be 256 bytes"):
            dra_metadata.metadata_file_name("é" * 121)  # 242 bytes in UTF-8
        assert not (tmp_path / "resourceclaims").exists()
        # The longest name that fits works all the way, in both write modes.
        tree = MetadataTree(tmp_path)
        path = tree.add_claim("c", "r", longest, ["n"])
        assert len(path.name) == 255
        tree.update("c", "r", longest, devices=["m"], mode="in-place")
        tree.update("c", "r", longest, devices=["m"], mode="atomic")
        assert os.listdir(path.parent) == [path.name]
        event = next(
            dra_metadata.watch_claim_metadata("c", "r", root=tmp_path, driver=longest, timeout=5)
        )
        assert event.generations == {longest: 3}

    @pytest.mark.parametrize("huge", [3e6, float("inf")])
    def test_any_poll_interval_or_timeout_works(
        self, tmp_path: Path, huge: float, polling: bool
    ) -> None:
        path = tmp_path / f"{DRIVER}-metadata.json"
        write_metadata_file(path, metadata(1))
        stop = threading.Event()
        events = dra_metadata.watch_metadata_file(
            path, poll_interval=huge, timeout=huge, stop_event=stop, force_polling=polling
        )
        assert next(events).kind is dra_metadata.MetadataEventKind.CREATED
        threading.Timer(0.1, stop.set).start()
        assert list(events) == []  # ended by the stop_event, not an OverflowError
        tree_path = dra_metadata.resource_claim_file_path(DRIVER, "c", "r", root=tmp_path)
        write_metadata_file(tree_path, metadata(1))
        ready = dra_metadata.wait_for_network_data(
            "c", "r", root=tmp_path, timeout=huge, poll_interval=huge, force_polling=polling
        )
        assert ready.generation == 1

        async def until_timeout() -> list[object]:
            return [
                event
                async for event in dra_metadata.awatch_metadata_file(
                    path, poll_interval=huge, timeout=0.1, force_polling=polling
                )
            ]

        assert len(asyncio.run(until_timeout())) == 1


# Resource counts -------------------------------------------------------------------------


def descriptor_counts() -> tuple[int, int]:
    """Open descriptors of this process, and how many of them are inotify instances."""
    targets = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the descriptor listdir itself used
            targets.append(Path(f"/proc/self/fd/{name}").readlink())
    return len(targets), targets.count(Path("anon_inode:inotify"))


def watch_cycles(  # noqa: C901 - ten small functions
    tree: MetadataTree, path: Path, loop: Path
) -> list[Callable[[], object]]:
    """Ten ways a watch or wait starts and ends."""
    root = tree.root

    def closed_after_one_event() -> None:
        events = dra_metadata.watch_metadata_file(path, timeout=5)
        next(events)
        events.close()

    def broken_out_of_with_a_stop_event_never_set() -> None:
        for _ in dra_metadata.watch_claim_metadata(
            "c", "r", root=root, stop_event=threading.Event()
        ):
            break

    def ended_by_its_stop_event(force_polling: bool) -> None:  # the relay thread wakes it
        stop = threading.Event()
        for _ in dra_metadata.watch_metadata_file(
            path, stop_event=stop, force_polling=force_polling
        ):
            stop.set()

    def ended_by_its_timeout() -> None:
        assert len(list(dra_metadata.watch_metadata_file(path, timeout=0.01))) == 1

    async def async_cycle(stop: Any) -> None:
        async for _ in dra_metadata.awatch_metadata_file(path, stop_event=stop, timeout=5):
            stop.set()

    def wait_timing_out() -> None:
        with pytest.raises(dra_metadata.WaitTimeoutError):
            dra_metadata.wait_for(lambda _: False, "c", "r", root=root, timeout=0.01)

    def error_from_inside_the_watch() -> None:
        with pytest.raises(MetadataReadError):
            next(dra_metadata.watch_metadata_file(loop, timeout=5))

    def polling_while_the_file_changes() -> None:
        tree.update("c", "r", DRIVER, devices=["nic-0"])
        ended_by_its_stop_event(force_polling=True)

    return [
        closed_after_one_event,
        broken_out_of_with_a_stop_event_never_set,
        lambda: ended_by_its_stop_event(force_polling=False),
        ended_by_its_timeout,
        lambda: asyncio.run(async_cycle(asyncio.Event())),
        lambda: asyncio.run(async_cycle(threading.Event())),
        lambda: dra_metadata.wait_for(lambda _: True, "c", "r", root=root, timeout=5),
        wait_timing_out,
        error_from_inside_the_watch,
        polling_while_the_file_changes,
    ]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_nothing_leaks_over_1000_reads_and_100_watch_cycles(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path, mode="in-place")
    path = tree.add_claim("c", "r", DRIVER, ["nic-0"])
    broken = tmp_path / "broken-metadata.json"
    broken.write_bytes(b'{"kind": "DeviceMetadata", "apiVersion": 7}')
    loop = tmp_path / "loop-metadata.json"
    loop.symlink_to(loop.name)
    before = descriptor_counts()

    for _ in range(250):
        dra_metadata.read_claim_metadata("c", "r", root=tmp_path)
        read_metadata_file(path)
        for bad in (broken, loop):
            with pytest.raises(dra_metadata.DeviceMetadataError):
                read_metadata_file(bad)
    cycles = watch_cycles(tree, path, loop)
    for _ in range(10):
        for cycle in cycles:
            cycle()

    assert descriptor_counts() == before


# A waiting watcher does no file-system work between scans ------------------------------------

IDLE = """
import asyncio, threading, time
path, kind = Path(sys.argv[1]), sys.argv[2]

class Deadline:  # a stop event that can only be looked at
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds
    def is_set(self):
        return time.monotonic() >= self.end

def marker(name):
    os.access(f"/{name}-marker", os.F_OK)  # shows in the trace

if kind == "async":
    async def main():
        async for _ in awatch_metadata_file(path, poll_interval=60, stop_event=Deadline(1.0)):
            marker("idle")
    asyncio.run(main())
else:
    stop = threading.Event() if kind == "threading.Event" else Deadline(1.0)
    if kind == "threading.Event":
        threading.Timer(1.0, stop.set).start()
    for _ in watch_metadata_file(path, poll_interval=60, stop_event=stop, force_polling=kind == "polling"):
        marker("idle")
marker("done")
"""


@needs_strace
@pytest.mark.parametrize("kind", ["is_set only", "threading.Event", "polling", "async"])
def test_stop_checks_do_no_file_system_work(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"{DRIVER}-metadata.json"
    write_metadata_file(path, metadata(1))
    trace = tmp_path / "trace"
    prefix = ("strace", "-f", "-qq", "-e", "trace=%file,%desc", "-o", str(trace))
    run_child(IDLE, str(path), kind, prefix=prefix)
    lines = trace.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "/idle-marker" in line)
    end = next(i for i, line in enumerate(lines) if "/done-marker" in line)
    touched = [line for line in lines[start + 1 : end] if str(tmp_path) in line]
    assert touched == []  # 1 s of waiting with a 60 s poll interval: nothing to look at
