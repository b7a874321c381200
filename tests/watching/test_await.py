"""await_for, await_until and await_for_network_data on real files and real inotify.

The asyncio twins of the waits: the same results and errors, on the running event loop (no
thread), cancellable, descriptors closed however they end.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import (
    DeviceMetadata,
    MetadataReadError,
    StaleMetadataError,
    WaitTimeoutError,
    resource_claim_file_path,
)
from dra_metadata.writer import write_metadata_file

from test_watch import metadata, options

NIC = "nic.example.com"


@pytest.fixture(params=["inotify", "polling"])
def polling(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "polling")


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_ready_after_an_update_while_waiting(tmp_path: Path, polling: bool) -> None:
    path = resource_claim_file_path(NIC, "net", "nic", root=tmp_path)
    write_metadata_file(path, metadata(1))  # deferred network data: not ready yet

    async def main() -> DeviceMetadata:
        threads = threading.active_count()
        waiting = asyncio.ensure_future(
            dra_metadata.await_for_network_data(
                "net", "nic", root=tmp_path, timeout=20, **options(polling)
            )
        )
        await asyncio.sleep(0)  # one step: it has read the file, found it not ready, and waits
        assert not waiting.done()
        assert threading.active_count() == threads  # on the loop, not in a thread
        write_metadata_file(path, metadata(2, interface_name="net1"), mode="in-place")
        return await asyncio.wait_for(waiting, 20)

    ready = asyncio.run(main())
    assert ready.generation == 2
    assert ready.devices[0].network_data == dra_metadata.NetworkDeviceData("net1")


def test_same_results_and_errors_as_the_sync_waits(tmp_path: Path) -> None:
    path = resource_claim_file_path(NIC, "net", "nic", root=tmp_path)
    write_metadata_file(path, metadata(1))
    pairs: list[tuple[Callable[..., Any], Callable[..., Awaitable[Any]], tuple[Any, ...]]] = [
        (dra_metadata.wait_for_network_data, dra_metadata.await_for_network_data, ()),
        (dra_metadata.wait_for, dra_metadata.await_for, (lambda d: d.network_data,)),
        (
            dra_metadata.wait_until,
            dra_metadata.await_until,
            (lambda m: None if m.generation > 1 else "still generation 1",),
        ),
    ]
    for sync, twin, first in pairs:
        with pytest.raises(WaitTimeoutError) as expected:
            sync(*first, "net", "nic", root=tmp_path, timeout=0.1)
        with pytest.raises(WaitTimeoutError) as got:
            asyncio.run(twin(*first, "net", "nic", root=tmp_path, timeout=0.1))
        assert got.value.reason == expected.value.reason
        assert got.value.path == expected.value.path
        assert got.value.metadata == expected.value.metadata
        with pytest.raises(ValueError, match="timeout must be None"):
            asyncio.run(twin(*first, "net", "nic", root=tmp_path, timeout=-1))
    write_metadata_file(path, metadata(2, interface_name="net1"))
    for sync, twin, first in pairs:
        assert asyncio.run(twin(*first, "net", "nic", root=tmp_path, timeout=1)) == sync(
            *first, "net", "nic", root=tmp_path, timeout=1
        )
    with pytest.raises(ValueError, match="unknown network data field"):
        asyncio.run(
            dra_metadata.await_for_network_data(
                "net", "nic", root=tmp_path, timeout=1, require=("mtu",)
            )
        )
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    with pytest.raises(MetadataReadError, match="is not a directory"):
        asyncio.run(dra_metadata.await_for_network_data("net", "nic", root=a_file, timeout=5))


def test_progress_and_template_claims(tmp_path: Path) -> None:
    path = dra_metadata.resource_claim_template_file_path(NIC, "nic", "vf", root=tmp_path)
    write_metadata_file(path, metadata(1))
    reasons: list[str] = []

    async def main() -> DeviceMetadata:
        def progress(reason: str) -> None:
            reasons.append(reason)
            if len(reasons) == 2:  # reported twice while waiting: now publish
                write_metadata_file(path, metadata(2, interface_name="net1"), mode="in-place")

        return await dra_metadata.await_until(
            dra_metadata.network_data_condition(("interface_name",)),
            "nic",
            "vf",
            template=True,
            driver=NIC,
            root=tmp_path,
            timeout=20,
            progress=progress,
            progress_interval=0.02,
        )

    assert asyncio.run(main()).generation == 2
    assert reasons[0] == "generation 1, device nic-0 has no networkData"


def test_cancelling_ends_it_at_once_and_closes_descriptors(tmp_path: Path, polling: bool) -> None:
    path = resource_claim_file_path(NIC, "net", "nic", root=tmp_path)
    write_metadata_file(path, metadata(1))

    async def main() -> float:
        before = descriptors()
        waiting = asyncio.ensure_future(
            dra_metadata.await_for_network_data(
                "net", "nic", root=tmp_path, timeout=None, poll_interval=60, force_polling=polling
            )
        )
        await asyncio.sleep(0)  # it waits: inotify started unless polling
        assert descriptors() == before + (0 if polling else 1)
        started = time.monotonic()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert descriptors() == before
        return time.monotonic() - started

    assert asyncio.run(main()) < 5  # at once, not at the 60 s poll interval


def test_an_asyncio_event_is_awaited(tmp_path: Path) -> None:
    async def main() -> tuple[float, float]:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.2, stop.set)
        started, cpu = time.monotonic(), time.process_time()
        with pytest.raises(WaitTimeoutError, match="^.*: not ready: stopped; no "):
            await dra_metadata.await_for(
                lambda _: True,
                "c",
                "r",
                root=tmp_path,
                timeout=None,
                poll_interval=60,
                stop_event=stop,
            )
        return time.monotonic() - started, time.process_time() - cpu

    elapsed, cpu = asyncio.run(main())
    assert elapsed < 10  # not the 60 s poll interval
    assert cpu < 0.5  # no busy loop while waiting (generous: a busy loop spends all 0.2 s)


def test_stale_view_raises(tmp_path: Path) -> None:
    original = tmp_path / f"{NIC}-metadata.json"
    write_metadata_file(original, metadata(1))
    descriptor = os.open(original, os.O_RDONLY)
    try:
        root = tmp_path / "root"
        link_dir = resource_claim_file_path(NIC, "net", "nic", root=root).parent
        link_dir.mkdir(parents=True)
        (link_dir / f"{NIC}-metadata.json").symlink_to(f"/proc/self/fd/{descriptor}")

        async def main() -> None:
            asyncio.get_running_loop().call_later(
                0.1, write_metadata_file, original, metadata(2, interface_name="x")
            )
            await dra_metadata.await_for_network_data("net", "nic", root=root, timeout=10)

        with pytest.raises(StaleMetadataError, match="restart the container") as info:
            asyncio.run(main())
        assert info.value.metadata is not None
        assert info.value.metadata.generation == 1
    finally:
        os.close(descriptor)
