"""Watching and waiting with real files, real inotify and writers in other threads and processes.

Every behaviour is checked twice: with inotify and with forced polling.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import (
    Device,
    DeviceMetadata,
    DeviceMetadataRequest,
    MetadataDecodeError,
    MetadataEvent,
    MetadataEventKind,
    NetworkDeviceData,
    ObjectMeta,
    StaleMetadataError,
    WaitTimeoutError,
    resource_claim_file_path,
    wait_for,
    wait_for_network_data,
    watch_claim_metadata,
    watch_metadata_file,
)
from dra_metadata.writer import encode_stream, write_metadata_file

from helpers import can_unshare, replaced_without_pause, wait_until_watching

CREATED, UPDATED, REPLACED, STALE, REMOVED = (
    MetadataEventKind.CREATED,
    MetadataEventKind.UPDATED,
    MetadataEventKind.REPLACED,
    MetadataEventKind.STALE,
    MetadataEventKind.REMOVED,
)
POLL = 0.05  # poll interval of the polling variant: short, to keep the suite fast


def metadata(generation: int, driver: str = "nic.example.com", **network: object) -> DeviceMetadata:
    device = Device(
        driver=driver,
        pool="node-a",
        name="nic-0",
        network_data=NetworkDeviceData(**network) if network else None,  # type: ignore[arg-type]
    )
    return DeviceMetadata(
        metadata=ObjectMeta(name="net", namespace="ns", uid="u-1", generation=generation),
        requests=[DeviceMetadataRequest(name="nic", devices=[device])],
    )


def rewrite_in_place(path: Path, data: bytes) -> None:
    """What the alpha writer does (os.WriteFile): truncate and write the same inode, no fsync."""
    with path.open("r+b" if path.exists() else "wb") as handle:
        handle.truncate(0)
        handle.write(data)


@pytest.fixture(params=["inotify", "polling"])
def polling(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "polling")


def options(polling: bool) -> dict[str, Any]:
    return {"force_polling": polling, "poll_interval": POLL if polling else 1.0}


def collect(
    events: Iterator[MetadataEvent], until: int, timeout: float = 10.0
) -> list[MetadataEvent]:
    """Events until ``until`` of them arrived (or the watch's own timeout ended it)."""
    seen: list[MetadataEvent] = []
    deadline = time.monotonic() + timeout
    for event in events:
        seen.append(event)
        if len(seen) >= until or time.monotonic() > deadline:
            break
    return seen


_LATER: list[threading.Thread] = []


def later(seconds: float, action: object) -> threading.Thread:
    def run() -> None:
        time.sleep(seconds)
        action()  # type: ignore[operator]

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    _LATER.append(thread)
    return thread


@pytest.fixture(autouse=True)
def _writers_done() -> Iterator[None]:
    """A writer started with ``later`` ends within its test: a watcher can see its rename before
    it has synced and closed the directory, and a descriptor it still holds must not count in
    the next test."""
    yield
    while _LATER:
        _LATER.pop().join(10)


class TestEvents:
    def test_created_updated_removed(self, tmp_path: Path, polling: bool) -> None:
        path = resource_claim_file_path("nic.example.com", "net", "nic", root=tmp_path)
        write_metadata_file(path, metadata(1))
        events = watch_claim_metadata("net", "nic", root=tmp_path, timeout=10, **options(polling))
        first = next(events)
        assert first.kind is CREATED
        assert first.metadata is not None
        assert first.metadata.generation == 1
        assert first.generations == {"nic.example.com": 1}
        assert first.paths == (path,)
        assert first.driver == "nic.example.com"
        later(
            0.05,
            lambda: write_metadata_file(path, metadata(2, hardware_address="x"), mode="in-place"),
        )
        second = next(events)
        assert (second.kind, second.generations) == (UPDATED, {"nic.example.com": 2})
        assert second.metadata is not None
        assert second.metadata.devices[0].network_data is not None
        later(0.05, path.unlink)
        third = next(events)
        assert (third.kind, third.metadata, third.generations) == (REMOVED, None, {})
        events.close()

    def test_generation_down_is_replaced(self, tmp_path: Path, polling: bool) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(path, metadata(3))
        events = watch_metadata_file(path, timeout=10, **options(polling))
        assert next(events).kind is CREATED
        later(0.05, lambda: write_metadata_file(path, metadata(1)))
        event = next(events)
        assert (event.kind, event.generations) == (REPLACED, {"nic.example.com": 1})
        # Same generation, other content: prepared again as well.
        later(0.05, lambda: write_metadata_file(path, metadata(1, interface_name="net1")))
        assert next(events).kind is REPLACED
        events.close()

    def test_removed_then_recreated_is_replaced(self, tmp_path: Path, polling: bool) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(path, metadata(2))
        events = watch_metadata_file(path, timeout=10, **options(polling))
        assert next(events).kind is CREATED
        later(0.05, path.unlink)
        assert next(events).kind is REMOVED
        later(0.05, lambda: write_metadata_file(path, metadata(1)))
        assert next(events).kind is REPLACED
        later(0.05, path.unlink)
        assert next(events).kind is REMOVED
        later(0.05, lambda: write_metadata_file(path, metadata(5)))  # back, even higher
        assert next(events).kind is REPLACED
        events.close()

    def test_rewriting_the_same_generation_is_silent(self, tmp_path: Path, polling: bool) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(path, metadata(1))

        def rewrite() -> None:
            for _ in range(5):
                write_metadata_file(path, metadata(1), mode="in-place")
                write_metadata_file(path, metadata(1), mode="atomic")
            write_metadata_file(path, metadata(2))

        events = watch_metadata_file(path, timeout=10, **options(polling))
        assert next(events).kind is CREATED
        later(0.05, rewrite)
        assert next(events).generations == {"nic.example.com": 2}
        events.close()

    def test_a_file_replaced_without_pause_is_never_stale(
        self, tmp_path: Path, polling: bool
    ) -> None:
        """A look at the path that races a rename over it finds the replaced file, with no link
        left, as a frozen view shows: looked at again, the path names the new one."""
        path = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(path, metadata(1))
        with replaced_without_pause(path):
            # Polling, a scan every millisecond; with inotify, one at every rename.
            events = watch_metadata_file(
                path, timeout=1.0, force_polling=polling, poll_interval=0.001 if polling else 1.0
            )
            kinds = [event.kind for event in events]
        assert kinds == [CREATED]

    def test_directory_chain_created_late(self, tmp_path: Path, polling: bool) -> None:
        root = tmp_path / "late" / "root"
        path = resource_claim_file_path("nic.example.com", "net", "nic", root=root)
        events = watch_claim_metadata("net", "nic", root=root, timeout=10, **options(polling))

        def create_chain() -> None:  # one directory at a time, from the top
            for directory in reversed(path.parents[:5]):
                directory.mkdir()
                time.sleep(0.02)
            write_metadata_file(path, metadata(1))

        later(0.05, create_chain)
        event = next(events)
        assert (event.kind, event.generations) == (CREATED, {"nic.example.com": 1})
        events.close()

    def test_rename_replace_in_a_visible_directory(self, tmp_path: Path, polling: bool) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(path, metadata(1))
        inode = path.stat().st_ino
        events = watch_metadata_file(path, timeout=10, **options(polling))
        assert next(events).kind is CREATED
        later(0.05, lambda: write_metadata_file(path, metadata(2), mode="atomic"))
        event = next(events)
        assert (event.kind, event.generations) == (UPDATED, {"nic.example.com": 2})
        assert path.stat().st_ino != inode  # followed to the new inode
        later(0.05, lambda: write_metadata_file(path, metadata(3), mode="atomic"))
        assert next(events).generations == {"nic.example.com": 3}
        events.close()

    def test_pinned_view_is_stale(self, tmp_path: Path, polling: bool) -> None:
        # /proc/self/fd/N resolves to the open file even after it is unlinked: the situation of
        # a container whose single-file bind mount pins an inode the host replaced.
        original = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(original, metadata(1))
        descriptor = os.open(original, os.O_RDONLY)
        try:
            pinned = Path(f"/proc/self/fd/{descriptor}")
            events = watch_metadata_file(pinned, timeout=10, **options(polling))
            assert next(events).kind is CREATED
            later(0.05, lambda: write_metadata_file(original, metadata(2), mode="atomic"))
            event = next(events)
            assert event.kind is STALE
            assert event.metadata is not None
            assert event.metadata.generation == 1  # the frozen view
            events.close()
        finally:
            os.close(descriptor)

    def test_two_drivers_in_one_request(self, tmp_path: Path, polling: bool) -> None:
        gpu = resource_claim_file_path("gpu.example.com", "c", "r", root=tmp_path)
        nic = resource_claim_file_path("nic.example.com", "c", "r", root=tmp_path)
        write_metadata_file(gpu, metadata(5, driver="gpu.example.com"))
        events = watch_claim_metadata("c", "r", root=tmp_path, timeout=10, **options(polling))
        assert next(events).generations == {"gpu.example.com": 5}
        later(0.05, lambda: write_metadata_file(nic, metadata(1)))
        event = next(events)
        # A new file at generation 1 is CREATED, never compared with the other driver's 5.
        assert (event.kind, event.driver) == (CREATED, "nic.example.com")
        assert event.generations == {"gpu.example.com": 5, "nic.example.com": 1}
        assert event.metadata is not None
        assert [d.driver for d in event.metadata.devices] == ["gpu.example.com", "nic.example.com"]
        later(0.05, lambda: write_metadata_file(nic, metadata(2), mode="in-place"))
        event = next(events)
        assert (event.kind, event.driver, event.paths) == (UPDATED, "nic.example.com", (nic,))
        events.close()

    def test_half_written_files_are_never_yielded(self, tmp_path: Path, polling: bool) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        data = encode_stream(metadata(2))
        path.write_bytes(b"")  # created empty: "not ready"
        events = watch_metadata_file(path, timeout=10, **options(polling))
        later(0.05, lambda: path.write_bytes(data[:100]))  # truncated
        later(0.15, lambda: path.write_bytes(data))
        event = next(events)
        assert (event.kind, event.generations) == (CREATED, {"nic.example.com": 2})
        events.close()

    def test_a_broken_file_is_raised(self, tmp_path: Path, polling: bool) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        path.write_bytes(b'{"kind": "DeviceMetadata", "apiVersion": 7}')
        with pytest.raises(MetadataDecodeError, match="apiVersion"):
            next(watch_metadata_file(path, timeout=10, **options(polling)))


@pytest.mark.one_interpreter
class TestManyUpdates:
    """10,000 in-place truncate-and-write updates while watching: none lost, none reported twice."""

    UPDATES = 10_000

    @staticmethod
    def write_all(path: str, updates: int) -> None:
        file_path = Path(path)
        for generation in range(2, updates + 1):
            rewrite_in_place(file_path, encode_stream(metadata(generation)))

    def run(self, path: Path, polling: bool, start_writer: object) -> list[int]:
        write_metadata_file(path, metadata(1), mode="in-place")
        generations: list[int] = []
        events = watch_metadata_file(path, timeout=60, **options(polling))
        for event in events:
            assert event.kind in {CREATED, UPDATED}, event
            assert event.metadata is not None
            generations.append(event.generations["nic.example.com"])
            assert event.metadata.generation == generations[-1]
            if len(generations) == 1:
                start_writer()  # type: ignore[operator]
            if generations[-1] == self.UPDATES:
                break
        events.close()
        return generations

    def check(self, generations: list[int]) -> None:
        assert generations[-1] == self.UPDATES, "the final generation was not observed"
        assert all(a < b for a, b in itertools.pairwise(generations))

    def test_writer_thread(self, tmp_path: Path, polling: bool) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        thread = threading.Thread(target=self.write_all, args=(str(path), self.UPDATES))
        self.check(self.run(path, polling, thread.start))
        thread.join()

    def test_writer_process(self, tmp_path: Path, polling: bool) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        context = multiprocessing.get_context("spawn")
        process = context.Process(target=self.write_all, args=(str(path), self.UPDATES))
        self.check(self.run(path, polling, process.start))
        process.join(30)
        assert process.exitcode == 0


class TestEnding:
    def test_timeout_ends_iteration(self, tmp_path: Path, polling: bool) -> None:
        start = time.monotonic()
        assert (
            list(watch_claim_metadata("c", "r", root=tmp_path, timeout=0.3, **options(polling)))
            == []
        )  # type: ignore[arg-type]
        assert 0.3 <= time.monotonic() - start < 5  # generous bounds: shared machines are noisy

    def test_stop_event_ends_the_watch(self, tmp_path: Path, polling: bool) -> None:
        # How fast (within 100 ms) is measured by benchmarks/bench_watch.py; this shows that
        # the watch does not sleep through its 60 s poll interval.
        stop = threading.Event()
        stopped_at: list[float] = []
        later(0.2, lambda: (stopped_at.append(time.monotonic()), stop.set()))
        events = watch_claim_metadata(
            "c", "r", root=tmp_path, stop_event=stop, force_polling=polling, poll_interval=60.0
        )
        assert list(events) == []
        assert time.monotonic() - stopped_at[0] < 10

    @pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
    def test_descriptors_are_closed(self, tmp_path: Path) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(path, metadata(1))
        before = len(os.listdir("/proc/self/fd"))
        events = watch_metadata_file(path, timeout=10)
        assert len(os.listdir("/proc/self/fd")) == before  # nothing is opened before iterating
        next(events)
        assert len(os.listdir("/proc/self/fd")) == before + 1  # one inotify instance
        events.close()  # closed
        assert len(os.listdir("/proc/self/fd")) == before
        for _ in watch_metadata_file(path, timeout=10):  # broken out of
            break
        assert len(os.listdir("/proc/self/fd")) == before
        events = watch_metadata_file(path, timeout=10)
        next(events)
        del events
        gc.collect()  # garbage-collected
        assert len(os.listdir("/proc/self/fd")) == before
        assert list(watch_metadata_file(path, timeout=0.01))  # ended by its timeout
        assert len(os.listdir("/proc/self/fd")) == before

    def test_ctrl_c_ends_a_wait_at_once(self, tmp_path: Path) -> None:
        # A child inheriting an ignored SIGINT (a job started in the background by a shell)
        # would keep ignoring it: it takes Python's own handler, as an interactive one has.
        code = (
            "import dra_metadata, signal, sys\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "try:\n"
            "    print('waiting', flush=True)\n"
            f"    dra_metadata.wait_for_network_data('c', 'r', root={str(tmp_path)!r}, timeout=60)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n"
        )
        with subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True
        ) as process:
            assert process.stdout is not None
            assert process.stdout.readline() == "waiting\n"
            wait_until_watching(process, "wait_for_network_data")  # interrupted in the wait
            sent = time.monotonic()
            process.send_signal(signal.SIGINT)
            assert process.stdout.readline() == "interrupted\n"
            assert time.monotonic() - sent < 10  # not the 60 s timeout
            assert process.wait(5) == 0


NO_DESCRIPTOR_LEFT = (
    "open_now = len(os.listdir('/proc/self/fd')) - 1\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (open_now + 3, open_now + 3))\n"
    "spares = [os.open('/dev/null', os.O_RDONLY) for _ in range(3)]\n"
    "polling = threading.Event()\n"
    "class Fallback(logging.Handler):  # the watch or wait has fallen back to polling\n"
    "    def emit(self, record):\n"
    "        if 'polling instead' in record.getMessage():\n"
    "            polling.set()\n"
    "logging.getLogger().addHandler(Fallback())\n"
)
"""Child code: every descriptor the process may open is taken (three by ``spares``, for the
child to free later), and ``polling`` is set once a watch says it polls instead."""


class TestFallback:
    def test_environment_forces_polling(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("DRA_METADATA_FORCE_POLLING", "1")
        path = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(path, metadata(1))
        before = len(os.listdir("/proc/self/fd"))
        events = watch_metadata_file(path, timeout=5, poll_interval=POLL)
        assert next(events).kind is CREATED
        assert len(os.listdir("/proc/self/fd")) == before  # no inotify descriptor
        later(0.05, lambda: write_metadata_file(path, metadata(2)))
        assert next(events).kind is UPDATED
        events.close()

    def test_polls_when_inotify_cannot_be_had(self, tmp_path: Path) -> None:
        # A real EMFILE from inotify_init1: the child has no descriptor left when the watch
        # starts; some are freed later for the writer and the watcher's reads.
        path = tmp_path / "nic.example.com-metadata.json"
        code = (
            "import logging, os, resource, sys, threading\n"
            "import inotify_simple, dra_metadata\n"
            "from dra_metadata import watch_metadata_file  # (imported lazily: do it now)\n"
            "from dra_metadata._watch import _hub  # (imported when a watch starts: now)\n"
            "inotify_simple.INotify().close()  # loads libc now, while descriptors are free\n"
            "from dra_metadata import DeviceMetadata, ObjectMeta\n"
            "from dra_metadata.writer import write_metadata_file\n"
            "logging.basicConfig(level=logging.INFO, format='%(levelname)s %(message)s')\n"
            "path = sys.argv[1]\n"
            "def write(generation):\n"
            "    write_metadata_file(path, DeviceMetadata(metadata=ObjectMeta(generation=generation)))\n"
            f"{NO_DESCRIPTOR_LEFT}"
            "created = threading.Event()\n"
            "def writer():  # then frees two descriptors for itself (directory and temporary\n"
            "    # file), one for the watcher\n"
            "    assert polling.wait(60), 'no fallback to polling'\n"
            "    for spare in spares:\n"
            "        os.close(spare)\n"
            "    write(1)\n"
            "    assert created.wait(60), 'generation 1 not seen'\n"
            "    write(2)\n"
            "threading.Thread(target=writer, daemon=True).start()\n"
            "events = watch_metadata_file(path, timeout=30, poll_interval=0.05)\n"
            "first = next(events).kind.name\n"
            "created.set()\n"
            "print(first, next(events).kind.name, flush=True)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert result.stdout == "CREATED UPDATED\n", result.stderr
        assert result.stderr.count("watching by polling instead") == 1
        assert (
            "WARNING inotify cannot be used ([Errno 24] Too many open files): this process has "
            "all the" in result.stderr
        )
        assert "descriptors RLIMIT_NOFILE allows (raise ulimit -n)" in result.stderr

    def test_a_wait_polls_when_inotify_cannot_be_had(self, tmp_path: Path) -> None:
        # As above, for a wait on one driver's file: it has no descriptor left when it first
        # pauses (the file is not there yet), and polls until the driver has written it.
        directory = tmp_path / "resourceclaims" / "net" / "nic"
        directory.mkdir(parents=True)
        path = directory / "nic.example.com-metadata.json"
        code = (
            "import logging, os, resource, sys, threading\n"
            "import inotify_simple, dra_metadata\n"
            "from dra_metadata import wait_until  # (imported lazily: do it now)\n"
            "inotify_simple.INotify().close()  # loads libc now, while descriptors are free\n"
            "from dra_metadata import DeviceMetadata, ObjectMeta\n"
            "from dra_metadata.writer import write_metadata_file\n"
            "logging.basicConfig(level=logging.INFO, format='%(levelname)s %(message)s')\n"
            "root, path = sys.argv[1], sys.argv[2]\n"
            f"{NO_DESCRIPTOR_LEFT}"
            "def writer():  # then frees the descriptors for itself and the wait's reads\n"
            "    assert polling.wait(60), 'no fallback to polling'\n"
            "    for spare in spares:\n"
            "        os.close(spare)\n"
            "    write_metadata_file(path, DeviceMetadata(metadata=ObjectMeta(generation=2)))\n"
            "threading.Thread(target=writer, daemon=True).start()\n"
            "ready = wait_until(lambda m: m.generation >= 2, 'net', 'nic', root=root,\n"
            "                   driver='nic.example.com', timeout=30, poll_interval=0.05)\n"
            "print('ready', ready.generation, flush=True)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path), str(path)],
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert result.stdout == "ready 2\n", result.stderr
        assert result.stderr.count("watching by polling instead") == 1

    def test_queue_overflow_rereads_everything(self, tmp_path: Path) -> None:
        path = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(path, metadata(1))
        limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        events = watch_metadata_file(path, timeout=60, poll_interval=30)
        assert next(events).kind is CREATED
        # While the consumer is away, flood the directory past the kernel's event queue, then
        # change the file: only a full re-read after IN_Q_OVERFLOW can still see it.
        flood = tmp_path / "flood"
        flood.write_bytes(b"")
        for _ in range(limit // 2 + 10):
            flood.rename(tmp_path / "flood2")
            (tmp_path / "flood2").rename(flood)
        write_metadata_file(path, metadata(2), mode="in-place")
        start = time.monotonic()
        event = next(events)
        assert (event.kind, event.generations) == (UPDATED, {"nic.example.com": 2})
        assert time.monotonic() - start < 15  # not the 30 s safety-net re-read
        events.close()


class TestAsync:
    def test_async_twins(self, tmp_path: Path, polling: bool) -> None:
        async def main() -> list[tuple[MetadataEventKind, int]]:
            path = resource_claim_file_path("nic.example.com", "net", "nic", root=tmp_path)
            seen: list[tuple[MetadataEventKind, int]] = []
            ticks = 0
            writes = {3: lambda: write_metadata_file(path, metadata(1))}

            async def ticker() -> None:  # the loop stays free while the watch waits
                # The writes come after ticks, not after a time: the watch waits for each
                # while the loop keeps ticking (a watch blocking the loop would never see one).
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1
                    write = writes.pop(ticks, None)
                    if write is not None:
                        write()

            task = asyncio.create_task(ticker())
            async for event in dra_metadata.awatch_claim_metadata(
                "net",
                "nic",
                root=tmp_path,
                timeout=60,
                **options(polling),  # type: ignore[arg-type]
            ):
                seen.append((event.kind, event.generations["nic.example.com"]))
                if len(seen) == 1:
                    writes[ticks + 3] = lambda: write_metadata_file(
                        path, metadata(2), mode="in-place"
                    )
                else:
                    break
            task.cancel()
            assert ticks > 5
            return seen

        assert asyncio.run(main()) == [(CREATED, 1), (UPDATED, 2)]

    def test_async_stop_event_and_timeout(self, tmp_path: Path) -> None:
        async def main() -> float:
            stop = asyncio.Event()
            asyncio.get_running_loop().call_later(0.2, stop.set)
            start = time.monotonic()
            async for _ in dra_metadata.awatch_metadata_file(
                tmp_path / "x-metadata.json", stop_event=stop, poll_interval=60
            ):
                pass
            async for _ in dra_metadata.awatch_template_metadata(
                "c", "r", root=tmp_path, timeout=0.2
            ):
                pass
            return time.monotonic() - start

        assert asyncio.run(main()) < 10  # neither sleeps through its 60 s poll interval


class TestWaiting:
    def test_network_data_added_by_another_process(self, tmp_path: Path, polling: bool) -> None:
        path = resource_claim_file_path("nic.example.com", "net", "nic", root=tmp_path)
        write_metadata_file(path, metadata(1))  # deferred: identity only
        code = (
            "import sys\n"
            "from dra_metadata import NetworkDeviceData\n"
            "from dra_metadata.writer import update_metadata_file\n"
            "update_metadata_file(sys.argv[1], lambda m: m.__class__(metadata=m.metadata, "
            "requests=[m.requests[0].__class__(name='nic', devices=[m.devices[0].__class__("
            "driver=m.devices[0].driver, pool='node-a', name='nic-0', "
            "network_data=NetworkDeviceData(interface_name='net1', ips=('10.0.0.5/24',)))])]))\n"
        )
        writers: list[subprocess.Popen[bytes]] = []

        class StartTheWriter:  # a stop event never set
            def is_set(self) -> bool:
                # First looked at once the wait has read the file, found it not ready and
                # waits: the other process writes while it waits.
                if not writers:
                    writers.append(subprocess.Popen([sys.executable, "-c", code, str(path)]))
                return False

        ready = wait_for_network_data(
            "net", "nic", root=tmp_path, timeout=60, stop_event=StartTheWriter(), **options(polling)
        )
        assert writers, "the wait was ready before the other process wrote"
        assert writers[0].wait(60) == 0
        assert ready.generation == 2
        assert ready.devices[0].network_data == NetworkDeviceData("net1", ("10.0.0.5/24",))

    def test_timeout_says_why(self, tmp_path: Path, polling: bool) -> None:
        path = resource_claim_file_path("nic.example.com", "net", "nic", root=tmp_path)
        with pytest.raises(WaitTimeoutError, match="does not exist|no \\*-metadata.json") as info:
            wait_for_network_data("net", "nic", root=tmp_path, timeout=0.2, **options(polling))
        assert info.value.metadata is None
        assert isinstance(info.value, TimeoutError)
        write_metadata_file(path, metadata(1))
        start = time.monotonic()
        with pytest.raises(WaitTimeoutError) as info:
            wait_for_network_data("net", "nic", root=tmp_path, timeout=0.3, **options(polling))
        assert 0.3 <= time.monotonic() - start < 5
        assert info.value.reason == "generation 1, device nic-0 has no networkData"
        assert info.value.metadata is not None
        write_metadata_file(path, metadata(2, interface_name="net1"))
        with pytest.raises(WaitTimeoutError) as info:
            wait_for_network_data(
                "net",
                "nic",
                root=tmp_path,
                timeout=0.2,
                require=("interface_name", "ips"),
                **options(polling),  # type: ignore[arg-type]
            )
        assert info.value.reason == "generation 2, device nic-0 has no networkData.ips"
        ready = wait_for_network_data("net", "nic", root=tmp_path, timeout=1, **options(polling))
        assert ready.devices[0].network_data is not None

    def test_wait_for_a_device_predicate(self, tmp_path: Path) -> None:
        path = resource_claim_file_path("gpu.example.com", "c", "gpu", root=tmp_path)
        write_metadata_file(path, metadata(1, driver="gpu.example.com"))
        with pytest.raises(WaitTimeoutError, match="device nic-0 not ready"):
            wait_for(lambda device: device.pool == "other", "c", "gpu", root=tmp_path, timeout=0.1)
        assert wait_for(
            lambda device: device.pool == "node-a", "c", "gpu", root=tmp_path, timeout=1
        )

    def test_stale_view_raises(self, tmp_path: Path) -> None:
        original = tmp_path / "nic.example.com-metadata.json"
        write_metadata_file(original, metadata(1))
        descriptor = os.open(original, os.O_RDONLY)
        try:
            root = tmp_path / "root"
            link_dir = resource_claim_file_path("nic.example.com", "net", "nic", root=root).parent
            link_dir.mkdir(parents=True)
            (link_dir / "nic.example.com-metadata.json").symlink_to(f"/proc/self/fd/{descriptor}")
            later(0.1, lambda: write_metadata_file(original, metadata(2, interface_name="x")))
            with pytest.raises(StaleMetadataError, match="restart the container") as info:
                wait_for_network_data("net", "nic", root=root, timeout=10)
            assert info.value.metadata is not None
            assert info.value.metadata.generation == 1
        finally:
            os.close(descriptor)

    def test_unknown_network_field(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="unknown network data field"):
            wait_for_network_data("c", "r", root=tmp_path, timeout=1, require=("mtu",))

    @pytest.mark.parametrize("timeout", [-1, -0.5, float("nan")])
    def test_a_negative_timeout_is_refused_at_the_call(
        self, tmp_path: Path, timeout: float
    ) -> None:
        # At the call, not at the first iteration: no watch starts with a timeout in the past.
        file_path = tmp_path / "x-metadata.json"
        calls = [
            lambda: watch_claim_metadata("c", "r", root=tmp_path, timeout=timeout),
            lambda: dra_metadata.watch_template_metadata("c", "r", root=tmp_path, timeout=timeout),
            lambda: watch_metadata_file(file_path, timeout=timeout),
            lambda: dra_metadata.awatch_claim_metadata("c", "r", root=tmp_path, timeout=timeout),
            lambda: dra_metadata.awatch_template_metadata("c", "r", root=tmp_path, timeout=timeout),
            lambda: dra_metadata.awatch_metadata_file(file_path, timeout=timeout),
            lambda: wait_for_network_data("c", "r", root=tmp_path, timeout=timeout),
            lambda: wait_for(lambda _: True, "c", "r", root=tmp_path, timeout=timeout),
        ]
        for call in calls:
            with pytest.raises(ValueError, match="timeout must be None"):
                call()


BIND_MOUNT_SCRIPT = """
import json, sys
import dra_metadata
for event in dra_metadata.watch_metadata_file(sys.argv[1], timeout=20):
    print(json.dumps([event.kind.name, event.generations]), flush=True)
    if event.kind.name == "STALE":
        break
"""


@pytest.mark.skipif(can_unshare() is not None, reason=str(can_unshare()))
@pytest.mark.parametrize("polling", [False, True], ids=["inotify", "polling"])
def test_real_single_file_bind_mount(tmp_path: Path, polling: bool) -> None:
    """As in a container: in-place host writes are seen, a rename-replace makes the view stale."""
    host = tmp_path / "host" / "metadata.json"
    host.parent.mkdir()
    write_metadata_file(host, metadata(1), mode="in-place")
    container = tmp_path / "container" / "nic.example.com-metadata.json"
    container.parent.mkdir()
    container.write_bytes(b"")
    environment = {**os.environ, "DRA_METADATA_FORCE_POLLING": "1" if polling else "0"}
    with subprocess.Popen(
        [
            "unshare", "-m", "--propagation", "private", "sh", "-c",
            'mount --bind "$0" "$1" && exec "$2" -c "$3" "$1"',
            str(host), str(container), sys.executable, BIND_MOUNT_SCRIPT,
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=environment,
    ) as watcher:  # fmt: skip
        assert watcher.stdout is not None
        try:
            assert json.loads(watcher.stdout.readline()) == ["CREATED", {"nic.example.com": 1}]
            # The container's directory sees nothing; the file watch sees in-place writes.
            write_metadata_file(host, metadata(2), mode="in-place")
            assert json.loads(watcher.stdout.readline()) == ["UPDATED", {"nic.example.com": 2}]
            write_metadata_file(host, metadata(3), mode="atomic")  # rename-replace on the host
            assert json.loads(watcher.stdout.readline()) == ["STALE", {"nic.example.com": 2}]
            assert watcher.wait(10) == 0
        finally:
            watcher.kill()
    assert container.read_bytes() == b""  # outside the namespace nothing was mounted


def test_async_watch_does_not_spin_while_the_caller_is_busy(tmp_path: Path) -> None:
    # Events arriving while the body of ``async for`` awaits something else are read at once;
    # a readable descriptor left unread would wake the event loop again and again.
    path = tmp_path / "nic.example.com-metadata.json"
    write_metadata_file(path, metadata(1))

    async def main() -> float:
        async for event in dra_metadata.awatch_metadata_file(path, timeout=10):
            if event.kind is CREATED:  # the watch pauses (and waits on inotify) after this
                asyncio.get_running_loop().call_later(
                    0.05, lambda: write_metadata_file(path, metadata(2), mode="in-place")
                )
                continue
            write_metadata_file(path, metadata(3), mode="in-place")  # pending while we sleep
            start = time.process_time()
            await asyncio.sleep(0.5)
            return time.process_time() - start
        return 0.0

    assert asyncio.run(main()) < 0.25  # a spinning loop burns the whole 0.5 s
