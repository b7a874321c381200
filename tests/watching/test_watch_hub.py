"""One inotify instance per process (sync) or per event loop (async), shared by every watcher.

Real inotify throughout: the instances are counted in /proc/self/fd, their watch descriptors
read from /proc/self/fdinfo. The limits that make inotify unusable are reached for real: the
descriptor limit in a child process, the per-user instance and watch limits in a user namespace
of a child (``unshare -U``), where they can be lowered without touching the machine's.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from dra_metadata import (
    Device,
    DeviceMetadata,
    MetadataEvent,
    MetadataEventKind,
    NetworkDeviceData,
    awatch_metadata_file,
    wait_for_network_data,
    watch_claim_metadata,
    watch_metadata_file,
)
from dra_metadata._watch._inotify import Hints
from dra_metadata.testing import MetadataTree
from dra_metadata.writer import write_metadata_file

from test_watch import metadata

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/proc/self/fdinfo").is_dir(),
    reason="inotify and /proc/self/fdinfo are Linux's",
)

CREATED, UPDATED, REMOVED = (
    MetadataEventKind.CREATED,
    MetadataEventKind.UPDATED,
    MetadataEventKind.REMOVED,
)
NEVER = 3600.0  # a poll interval no test waits for: only inotify can report a change in time
WATCHES = 60


def instances() -> list[int]:
    """This process's inotify instances (descriptors)."""
    return [
        int(entry.name)
        for entry in Path("/proc/self/fd").iterdir()
        if _target(entry) == "anon_inode:inotify"
    ]


def _target(link: Path) -> str | None:
    try:
        return str(link.readlink())
    except OSError:  # the descriptor of the listing itself
        return None


def watch_descriptors(descriptor: int) -> dict[int, tuple[int, int]]:
    """An inotify instance's watches: wd -> (inode, mask), from /proc/self/fdinfo (in hex)."""
    watches = {}
    for line in Path(f"/proc/self/fdinfo/{descriptor}").read_text().splitlines():
        if line.startswith("inotify wd:"):
            fields = dict(field.split(":", 1) for field in line.split()[1:])
            watches[int(fields["wd"], 16)] = (int(fields["ino"], 16), int(fields["mask"], 16))
    return watches


def the_instance() -> dict[int, tuple[int, int]]:
    """The watches of the process's one inotify instance (there must be exactly one)."""
    found = instances()
    assert len(found) == 1, found
    return watch_descriptors(found[0])


def watches_of_the_one_instance() -> int:
    """How many watches the process's inotify instance has; -1 unless it has exactly one."""
    found = instances()
    try:
        return len(watch_descriptors(found[0])) if len(found) == 1 else -1
    except OSError:  # closed meanwhile
        return -1


def files(directory: Path, count: int) -> list[Path]:
    paths = [directory / f"d{index:03d}.example.com-metadata.json" for index in range(count)]
    for path in paths:
        write_metadata_file(path, metadata(1, driver=path.name.removesuffix("-metadata.json")))
    return paths


def update(path: Path, generation: int) -> None:
    driver = path.name.removesuffix("-metadata.json")
    write_metadata_file(path, metadata(generation, driver=driver), mode="in-place")


def eventually(condition: object, what: str) -> None:
    """Wait (30 s at most) for something another thread does; a failure, not a timing."""
    deadline = time.monotonic() + 30
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


class TestOneInstance:
    def test_many_sync_watches_share_one_instance(self, tmp_path: Path) -> None:
        paths = files(tmp_path, WATCHES)
        before = instances()
        watches = [watch_metadata_file(path, poll_interval=NEVER, timeout=60) for path in paths]
        for events in watches:
            assert next(events).kind is CREATED
        # One descriptor per file, and the directory they share once.
        assert len(instances()) == len(before) + 1
        assert len(the_instance()) == WATCHES + 1
        # Each watcher gets the events of its own file, from the one reading thread.
        for generation, path in enumerate(paths, start=2):
            update(path, generation)
        for generation, events in enumerate(watches, start=2):
            event = next(events)
            assert (event.kind, event.metadata.generation) == (UPDATED, generation)  # type: ignore[union-attr]
        # A watch that ends removes its descriptors, and the instance goes with the last one.
        for events in watches[: WATCHES // 2]:
            events.close()
        assert len(the_instance()) == WATCHES - WATCHES // 2 + 1
        for events in watches[WATCHES // 2 :]:
            events.close()
        assert instances() == before

    def test_waits_in_threads_share_it_too(self, tmp_path: Path) -> None:
        tree = MetadataTree(tmp_path, mode="in-place")
        claims = [f"claim-{index}" for index in range(20)]
        for claim in claims:
            tree.add_claim(claim, "nic", "nic.example.com", ["nic-0"])  # no network data yet
        results: dict[str, DeviceMetadata | BaseException] = {}

        def wait(claim: str) -> None:
            try:
                results[claim] = wait_for_network_data(
                    claim, "nic", root=tmp_path, timeout=60, poll_interval=NEVER
                )
            except BaseException as error:  # noqa: BLE001 - reported by the test
                results[claim] = error

        threads = [threading.Thread(target=wait, args=(claim,)) for claim in claims]
        for thread in threads:
            thread.start()
        # Every wait watches its request directory and its file: 40 descriptors, one instance.
        eventually(lambda: watches_of_the_one_instance() == 40, "40 watches on one instance")
        for claim in claims:
            ready = Device(
                driver="nic.example.com",
                pool="node-a",
                name="nic-0",
                network_data=NetworkDeviceData(interface_name="net1"),
            )
            tree.update(claim, "nic", "nic.example.com", devices=[ready])
        for thread in threads:
            thread.join(60)
        assert all(isinstance(result, DeviceMetadata) for result in results.values()), results
        assert instances() == []

    def test_async_tasks_share_their_loops_instance(self, tmp_path: Path) -> None:
        paths = files(tmp_path, WATCHES)

        async def main() -> tuple[int, int, list[int]]:
            started = asyncio.Semaphore(0)
            generations: list[int] = []

            async def watch(path: Path) -> None:
                async for event in awatch_metadata_file(path, poll_interval=NEVER, timeout=60):
                    if event.kind is CREATED:
                        started.release()
                    else:
                        generations.append(event.metadata.generation)  # type: ignore[union-attr]
                        return

            tasks = [asyncio.create_task(watch(path)) for path in paths]
            for _ in paths:
                await started.acquire()
            watching = len(instances()), len(the_instance())
            for path in paths:
                update(path, 2)
            await asyncio.wait_for(asyncio.gather(*tasks), 60)
            return (*watching, generations)

        count, descriptors, generations = asyncio.run(main())
        assert (count, descriptors) == (1, WATCHES + 1)
        assert generations == [2] * WATCHES
        assert instances() == []

    def test_sync_and_async_watches_make_two(self, tmp_path: Path) -> None:
        path, other = files(tmp_path, 2)
        sync_watch = watch_metadata_file(path, poll_interval=NEVER, timeout=60)
        assert next(sync_watch).kind is CREATED

        async def main() -> int:
            async for _ in awatch_metadata_file(other, poll_interval=NEVER, timeout=60):
                return len(instances())
            return 0

        assert asyncio.run(main()) == 2
        assert len(instances()) == 1  # the async one ended with its watch
        sync_watch.close()
        assert instances() == []


class TestSharedDescriptors:
    def test_the_same_file_twice_is_one_descriptor_held_by_both(self, tmp_path: Path) -> None:
        (path,) = files(tmp_path, 1)
        link = tmp_path / "link" / path.name
        link.parent.mkdir()
        link.symlink_to(path)  # another path to the same inode: inotify gives the same wd
        first = watch_metadata_file(path, poll_interval=NEVER, timeout=60)
        second = watch_metadata_file(link, poll_interval=NEVER, timeout=60)
        assert next(first).kind is CREATED
        assert next(second).kind is CREATED
        inode = path.stat().st_ino
        assert [ino for ino, _ in the_instance().values()].count(inode) == 1
        first.close()  # the other still holds the file's descriptor
        assert [ino for ino, _ in the_instance().values()].count(inode) == 1
        update(path, 2)
        event = next(second)
        assert (event.kind, event.metadata.generation) == (UPDATED, 2)  # type: ignore[union-attr]
        second.close()
        assert instances() == []

    def test_masks_are_combined_and_events_go_to_who_asked(self, tmp_path: Path) -> None:
        # One watcher watches the directory as its request directory; another watches it as
        # the deepest existing ancestor of a directory not made yet: one wd, two masks.
        (path,) = files(tmp_path, 1)
        directory_watch, ancestor_watch = Hints(), Hints()
        try:
            assert directory_watch.start()
            assert ancestor_watch.start()
            directory_watch.watch_directory(tmp_path)
            ancestor_watch.watch_directory(tmp_path / "not-yet" / "request")
            ((inode, mask),) = the_instance().values()
            assert inode == tmp_path.stat().st_ino
            assert mask & 0x4  # IN_ATTRIB: the directory watcher's
            assert mask & 0x100  # IN_CREATE: both
            path.chmod(0o600)  # IN_ATTRIB on an entry: only the directory watcher asked for it
            eventually(directory_watch.pending, "the directory watcher hears of the chmod")
            assert directory_watch.take() == ({path}, False)
            assert not ancestor_watch.pending()
            directory_watch.close()  # the ancestor watcher keeps the descriptor
            assert len(the_instance()) == 1
            (tmp_path / "not-yet").mkdir()
            eventually(ancestor_watch.pending, "the ancestor watcher hears of the mkdir")
            assert ancestor_watch.take() == ({tmp_path / "not-yet"}, False)
        finally:
            directory_watch.close()
            ancestor_watch.close()
        assert instances() == []

    def test_a_removed_file_ends_its_descriptor_for_every_watcher(self, tmp_path: Path) -> None:
        # The kernel removes the descriptor (IN_IGNORED) when the inode goes: each watcher holding
        # it hears of it, and the one that was not told about the file by its directory too.
        (path,) = files(tmp_path, 1)
        inode = path.stat().st_ino
        watches = [watch_metadata_file(path, poll_interval=NEVER, timeout=60) for _ in range(3)]
        for events in watches:
            assert next(events).kind is CREATED
        path.unlink()
        for events in watches:
            assert next(events).kind is REMOVED
        assert inode not in [ino for ino, _ in the_instance().values()]
        write_metadata_file(path, metadata(5, driver="d000.example.com"))  # a new inode
        for events in watches:
            event = next(events)
            assert event.metadata is not None
            assert event.metadata.generation == 5
        for events in watches:
            events.close()
        assert instances() == []


def _child_after_fork(watch: Iterator[MetadataEvent], path: Path) -> int:
    """In the forked child: its own instance, the inherited watch carried over to it."""
    if instances():
        return 10  # the parent's instance, shared silently
    for generation in (2, 3):  # 3: by the child's own instance, the poll interval is an hour
        update(path, generation)
        event = next(watch)
        if event.kind is not UPDATED or event.metadata is None:
            return 11
        if event.metadata.generation != generation:
            return 12
        found = instances()
        if len(found) != 1 or len(watch_descriptors(found[0])) != 2:
            return 13
    watch.close()
    return 0 if instances() == [] else 14


def test_a_forked_child_makes_its_own_instance(tmp_path: Path) -> None:
    (path,) = files(tmp_path, 1)
    watch = watch_metadata_file(path, poll_interval=NEVER, timeout=60)
    assert next(watch).kind is CREATED
    (parent_instance,) = instances()
    with warnings.catch_warnings():  # a fork with the reading thread running, on purpose
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:  # pragma: no cover - the child's result is its exit status
        status = 1
        try:
            status = _child_after_fork(watch, path)
        finally:
            os._exit(status)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # The parent's instance and its watches are untouched by the child's end.
    assert instances() == [parent_instance]
    assert len(watch_descriptors(parent_instance)) == 2
    event = next(watch)  # the child's updates
    assert (event.kind, event.metadata.generation) == (UPDATED, 3)  # type: ignore[union-attr]
    update(path, 4)
    event = next(watch)
    assert (event.kind, event.metadata.generation) == (UPDATED, 4)  # type: ignore[union-attr]
    watch.close()
    assert instances() == []


# Limits reached for real ------------------------------------------------------------------

LIMITED_WATCH = """
import logging, sys
from pathlib import Path
from dra_metadata import DeviceMetadata, ObjectMeta, watch_metadata_file
from dra_metadata.writer import write_metadata_file
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
path = Path(sys.argv[1])
def write(generation):
    write_metadata_file(path, DeviceMetadata(metadata=ObjectMeta(generation=generation)))
write(1)
watches = [watch_metadata_file(path, timeout=30, poll_interval=0.05) for _ in range(3)]
print(*(next(events).kind.name for events in watches), flush=True)
write(2)  # once every watch has read generation 1: an update for each
print(*(next(events).kind.name for events in watches), flush=True)
"""


def _user_namespace_problem() -> str | None:
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    probe = subprocess.run(
        ["unshare", "-U", "-r", "sh", "-c", "echo 1 > /proc/sys/user/max_inotify_watches"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"cannot lower inotify limits in a user namespace here: {probe.stderr.decode()}"
    return None


@pytest.mark.skipif(_user_namespace_problem() is not None, reason=str(_user_namespace_problem()))
@pytest.mark.parametrize(
    ("limit", "value", "message"),
    [
        ("max_inotify_instances", 0, "all the inotify instances fs.inotify.max_user_instances"),
        ("max_inotify_watches", 1, "all the inotify watches fs.inotify.max_user_watches"),
    ],
    ids=["out of instances (EMFILE)", "out of watches (ENOSPC)"],
)
def test_out_of_inotify_polls_with_one_warning(
    tmp_path: Path, limit: str, value: int, message: str
) -> None:
    # In a user namespace of its own, the child's per-user inotify limits are its own to lower.
    result = subprocess.run(
        [
            "unshare", "-U", "-r", "sh", "-c", 'echo "$0" > "/proc/sys/user/$1" && exec "$2" -c "$3" "$4"',
            str(value), limit, sys.executable, LIMITED_WATCH, str(tmp_path / "d-metadata.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    assert result.stdout == "CREATED CREATED CREATED\nUPDATED UPDATED UPDATED\n", result.stderr
    warnings_ = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings_) == 1, result.stderr
    assert message in warnings_[0]
    assert f"({value})" in warnings_[0]  # the limit's value where the process runs
    assert warnings_[0].endswith("; watching by polling instead")


LIMITED_WAIT = """
import logging, sys
from dra_metadata import WaitTimeoutError, wait_for_network_data
from dra_metadata.testing import MetadataTree
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
MetadataTree(sys.argv[1]).add_claim("c", "r", "nic.example.com", ["nic-0"])  # never ready
try:
    wait_for_network_data("c", "r", root=sys.argv[1], timeout=1, poll_interval=0.05)
except WaitTimeoutError as error:
    print("timed out:", error.message, flush=True)
"""


@pytest.mark.skipif(_user_namespace_problem() is not None, reason=str(_user_namespace_problem()))
def test_a_wait_out_of_watches_polls_and_ends_on_time(tmp_path: Path) -> None:
    # It used to start inotify again after every scan, run out of watches again and never
    # reach its deadline (the subprocess's timeout ends such a run).
    result = subprocess.run(
        [
            "unshare", "-U", "-r", "sh", "-c",
            'echo 1 > /proc/sys/user/max_inotify_watches && exec "$0" -c "$1" "$2"',
            sys.executable, LIMITED_WAIT, str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    assert result.stdout.startswith("timed out: "), result.stderr
    assert result.stderr.count("WARNING") == 1, result.stderr
    assert "fs.inotify.max_user_watches (1)" in result.stderr


def test_a_request_directory_moved_away_and_made_again_is_followed(tmp_path: Path) -> None:
    # The watcher looks at its directory again only when the directory itself had an event;
    # moved away, it watches the parent until a new one is made, then that one.
    tree = MetadataTree(tmp_path, mode="in-place")
    path = tree.add_claim("c", "r", "nic.example.com", ["nic-0"])
    watch = watch_claim_metadata("c", "r", root=tmp_path, poll_interval=NEVER, timeout=60)
    assert next(watch).kind is CREATED
    path.parent.rename(path.parent.with_name("r-old"))
    assert next(watch).kind is REMOVED
    tree.add_claim("c", "r", "nic.example.com", ["nic-0"], generation=7)
    event = next(watch)
    assert event.metadata is not None
    assert event.metadata.generation == 7
    assert path.parent.stat().st_ino in [ino for ino, _ in the_instance().values()]
    watch.close()
    assert instances() == []
