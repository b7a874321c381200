"""Faults, as a hostile user or a failing machine makes them (issue #12).

Real faults wherever the machine allows: symlink loops, regular files in the path, a full
tmpfs and a read-only mount in a private mount namespace (``unshare -m``), a reader without
privileges, writers killed with SIGKILL, and failing system calls injected by ``strace``
into a child process. Each test that needs a capability skips with the reason when it is
missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import (
    Device,
    DeviceMetadata,
    DeviceMetadataRequest,
    InvalidNameError,
    MetadataReadError,
    MetadataWriteError,
    NetworkDeviceData,
    ObjectMeta,
    read_metadata_file,
)
from dra_metadata.testing import MetadataTree
from dra_metadata.writer import update_metadata_file, write_metadata_file
from test_watch import can_unshare

from conftest import unprivileged

DRIVER = "nic.example.com"

# Child processes build their metadata with this, as the tests here do.
PRELUDE = """
import errno, json, os, sys
from pathlib import Path
from dra_metadata import *
from dra_metadata.writer import encode_stream, update_metadata_file, write_metadata_file

def metadata(generation, devices=1):
    return DeviceMetadata(
        metadata=ObjectMeta(name="net", namespace="ns", uid="u-1", generation=generation),
        requests=[DeviceMetadataRequest(name="nic", devices=[
            Device(driver="nic.example.com", pool="node-a", name=f"nic-{index}",
                   network_data=NetworkDeviceData("net1", (f"10.0.{index % 250}.5/24",)))
            for index in range(devices)
        ])],
    )

def failure(call):
    try:
        call()
    except (MetadataWriteError, MetadataReadError) as error:
        return {"type": type(error).__name__, "errno": error.errno, "message": str(error)}
    return None
"""


def metadata(generation: int, devices: int = 1) -> DeviceMetadata:
    return DeviceMetadata(
        metadata=ObjectMeta(name="net", namespace="ns", uid="u-1", generation=generation),
        requests=[
            DeviceMetadataRequest(
                name="nic",
                devices=[
                    Device(
                        driver=DRIVER,
                        pool="node-a",
                        name=f"nic-{index}",
                        network_data=NetworkDeviceData("net1", (f"10.0.{index % 250}.5/24",)),
                    )
                    for index in range(devices)
                ],
            )
        ],
    )


def run_child(
    code: str, *arguments: str, prefix: tuple[str, ...] = (), **options: Any
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*prefix, sys.executable, "-c", PRELUDE + code, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/",
        **options,
    )
    assert result.returncode == 0, result.stderr
    return result


def child_json(code: str, *arguments: str, **options: Any) -> Any:
    return json.loads(run_child(code, *arguments, **options).stdout)


def _strace_problem() -> str | None:
    if shutil.which("strace") is None:
        return "needs strace to inject failing system calls"
    probe = subprocess.run(["strace", "-o", "/dev/null", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"strace cannot trace here: {probe.stderr.decode().strip()}"
    return None


UNSHARE_PROBLEM = can_unshare()
STRACE_PROBLEM = _strace_problem()
needs_unshare = pytest.mark.skipif(UNSHARE_PROBLEM is not None, reason=str(UNSHARE_PROBLEM))
needs_strace = pytest.mark.skipif(STRACE_PROBLEM is not None, reason=str(STRACE_PROBLEM))


def in_mount_namespace(mount: str, directory: Path) -> tuple[str, ...]:
    """A command prefix: a private mount namespace where ``mount`` ($0: the directory) ran."""
    return (
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        f'{mount} && exec "$@"',
        str(directory),
    )


def injecting(*rules: str) -> tuple[str, ...]:
    """A command prefix: strace making system calls fail (``rules`` as for ``-e inject=``)."""
    return ("strace", "-f", "-qq", "-o", "/dev/null", *(f"--inject={rule}" for rule in rules))


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


# Writers: documented errors, checked arguments, no write outside the root -------------------


class TestWriterErrors:
    def test_arguments_are_checked_before_anything_changes(self, tmp_path: Path) -> None:
        target = tmp_path / "new" / "dir" / "d-metadata.json"
        with pytest.raises(ValueError, match="mode must be"):
            write_metadata_file(target, metadata(1), mode="bogus")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="not supported"):
            write_metadata_file(target, metadata(1), versions=["v9"])
        with pytest.raises(TypeError, match="must be a DeviceMetadata"):
            write_metadata_file(target, "metadata")  # type: ignore[arg-type]
        assert not (tmp_path / "new").exists()
        existing = tmp_path / "d-metadata.json"
        write_metadata_file(existing, metadata(1))
        before = existing.read_bytes()
        for call in (
            lambda: update_metadata_file(existing, [], mode="bogus"),  # type: ignore[arg-type]
            lambda: update_metadata_file(existing, [], versions=["v9"]),
            lambda: update_metadata_file(existing, [], max_size=-1),
            lambda: update_metadata_file(existing, ["nic-0"]),  # type: ignore[list-item]
            lambda: update_metadata_file(existing, 5),  # type: ignore[arg-type]
            lambda: MetadataTree(tmp_path, mode="bogus"),  # type: ignore[arg-type]
        ):
            with pytest.raises((ValueError, TypeError)):
                call()
        assert existing.read_bytes() == before

    def test_host_directory_names_must_fit(self) -> None:
        from dra_metadata.writer import host_metadata_file_path  # noqa: PLC0415

        assert host_metadata_file_path("/p", "n" * 63, "c" * 191, "r").parent.parent.name == (
            "n" * 63 + "_" + "c" * 191
        )
        with pytest.raises(InvalidNameError, match="would be 256 bytes long"):
            host_metadata_file_path("/p", "n" * 63, "c" * 192, "r")

    def test_updating_a_missing_file_is_not_found(self, tmp_path: Path) -> None:
        for call in (
            lambda: update_metadata_file(tmp_path / "no" / "d-metadata.json", []),
            lambda: update_metadata_file(tmp_path / "d-metadata.json", []),
            lambda: MetadataTree(tmp_path).update("c", "r", "d", devices=[]),
        ):
            with pytest.raises(dra_metadata.MetadataNotFoundError, match="does not exist"):
                call()
        assert os.listdir(tmp_path) == []

    @pytest.mark.parametrize("mode", ["atomic", "in-place"])
    def test_io_failures_are_write_errors_naming_the_file(self, tmp_path: Path, mode: str) -> None:
        directory_target = tmp_path / "d-metadata.json"
        directory_target.mkdir()
        with pytest.raises(MetadataWriteError, match="it is a directory") as raised:
            write_metadata_file(directory_target, metadata(1), mode=mode)  # type: ignore[arg-type]
        assert (raised.value.errno, raised.value.path) == (errno.EISDIR, directory_target)
        assert isinstance(raised.value, OSError)
        assert str(raised.value).startswith(f"{directory_target}: ")

        blocker = tmp_path / "file"
        blocker.write_text("x")
        below_a_file = blocker / "claim" / "d-metadata.json"
        with pytest.raises(MetadataWriteError, match=f"{blocker} is not a directory") as raised:
            write_metadata_file(below_a_file, metadata(1), mode=mode)  # type: ignore[arg-type]
        assert (raised.value.errno, raised.value.path) == (errno.ENOTDIR, below_a_file)

        fifo = tmp_path / "fifo-metadata.json"
        os.mkfifo(fifo)
        with pytest.raises(MetadataWriteError, match="not a regular file"):
            write_metadata_file(fifo, metadata(1), mode=mode)  # type: ignore[arg-type]
        assert sorted(os.listdir(tmp_path)) == ["d-metadata.json", "fifo-metadata.json", "file"]

    @pytest.mark.parametrize("mode", ["atomic", "in-place"])
    def test_no_write_through_a_symlink(self, tmp_path: Path, mode: str) -> None:
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "d-metadata.json").write_bytes(b"precious")
        root = tmp_path / "root"
        tree = MetadataTree(root, mode=mode)  # type: ignore[arg-type]
        tree.add_claim("c", "r", "d", ["n"])
        claims = root / "resourceclaims"
        (claims / "evil").symlink_to(outside, target_is_directory=True)  # a symlinked claim
        (claims / "c" / "bad").symlink_to(outside, target_is_directory=True)  # a request
        (claims / "c" / "r" / "x-metadata.json").symlink_to(outside / "d-metadata.json")  # a file
        refusals = [
            lambda: tree.add_claim("evil", "r", "d", ["n"]),
            lambda: tree.add_claim("c", "bad", "d", ["n"]),
            lambda: tree.add_claim("c", "r", "x", ["n"]),
            lambda: tree.update("c", "r", "x", devices=["n"]),
            lambda: tree.remove("evil"),
            lambda: tree.remove("evil", "r"),
            lambda: tree.remove("c", "bad"),
            lambda: write_metadata_file(
                claims / "evil" / "d-metadata.json", metadata(1), root=root
            ),
            lambda: write_metadata_file(claims / "c" / "r" / "x-metadata.json", metadata(1)),
            lambda: update_metadata_file(claims / "evil" / "d-metadata.json", [], root=root),
        ]
        for refusal in refusals:
            with pytest.raises(MetadataWriteError, match="symbolic link") as raised:
                refusal()
            assert raised.value.errno == errno.ELOOP
        assert sorted(os.listdir(outside)) == ["d-metadata.json"]
        assert (outside / "d-metadata.json").read_bytes() == b"precious"
        with pytest.raises(ValueError, match="is not below the root"):
            write_metadata_file(root / ".." / "escape-metadata.json", metadata(1), root=root)
        # Readers follow symlinks as they always did; so do writers without a root, in the
        # directories of the path they are given.
        write_metadata_file(outside / "d-metadata.json", metadata(1))
        assert read_metadata_file(claims / "evil" / "d-metadata.json").generation == 1
        write_metadata_file(claims / "evil" / "d-metadata.json", metadata(2))
        assert read_metadata_file(outside / "d-metadata.json").generation == 2

    def test_temporary_names_fit_and_are_hidden(self) -> None:
        from dra_metadata._writing._write import temporary_name  # noqa: PLC0415

        for name in ("d" * 241 + "-metadata.json", "é" * 120 + "-metadata.json", "metadata.json"):
            temporary = temporary_name(name)
            assert len(temporary.encode()) <= 255
            assert temporary.startswith(".")
            assert temporary.endswith(".tmp")
            assert not temporary.endswith("-metadata.json")  # never taken for a driver's file


# Several processes updating one file --------------------------------------------------------

UPDATER = """
path, mode, updates = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.stdin.readline()  # start together
seen = []
for _ in range(updates):
    seen.append(update_metadata_file(path, lambda m: m, mode=mode).generation)
print(json.dumps(seen))
"""


@pytest.mark.parametrize("mode", ["atomic", "in-place"])
def test_concurrent_updates_lose_nothing(tmp_path: Path, mode: str) -> None:
    path = tmp_path / f"{DRIVER}-metadata.json"
    write_metadata_file(path, metadata(1))
    processes, updates = 3, 40
    children = [
        subprocess.Popen(
            [sys.executable, "-c", PRELUDE + UPDATER, str(path), mode, str(updates)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    generations = [json.loads(child.communicate(timeout=120)[0]) for child in children]
    assert all(child.returncode == 0 for child in children)
    written = sorted(generation for seen in generations for generation in seen)
    assert written == list(range(2, 2 + processes * updates))  # each generation exactly once
    assert read_metadata_file(path).generation == 1 + processes * updates


# Real faults ------------------------------------------------------------------------------

FULL_DISK = """
directory = Path(sys.argv[1])
old = metadata(1)
files = {mode: directory / f"{mode}-metadata.json" for mode in ("atomic", "in-place")}
for path in files.values():
    write_metadata_file(path, old)
filler = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(filler, b"x" * 4096)
except OSError as error:
    assert error.errno == errno.ENOSPC
big = metadata(2, devices=200)
results = {}
for mode, path in files.items():
    results[mode] = [
        failure(lambda: write_metadata_file(path, big, mode=mode)),
        failure(lambda: update_metadata_file(path, lambda m: big, mode=mode)),
        path.read_bytes() == encode_stream(old),
    ]
new = directory / "new" / "d-metadata.json"
results["new file"] = [failure(lambda: write_metadata_file(new, big, mode="in-place")), new.exists()]
results["listing"] = sorted(os.listdir(directory))
print(json.dumps(results))
"""


@needs_unshare
def test_a_full_disk_keeps_the_old_content(tmp_path: Path) -> None:
    mount = 'mount -t tmpfs -o size=256k tmpfs "$0"'
    results = child_json(FULL_DISK, str(tmp_path), prefix=in_mount_namespace(mount, tmp_path))
    for mode in ("atomic", "in-place"):
        write, update, intact = results[mode]
        for error in (write, update):
            assert error["type"] == "MetadataWriteError", error
            assert error["errno"] == errno.ENOSPC
            assert error["message"].startswith(str(tmp_path / f"{mode}-metadata.json"))
        assert intact, f"{mode}: the old content was lost"
    error, exists = results["new file"]
    assert error["errno"] == errno.ENOSPC
    assert not exists  # a file that could not be written is not left empty
    assert results["listing"] == ["atomic-metadata.json", "filler", "in-place-metadata.json", "new"]


PARTIAL_WRITE = """
directory = Path(sys.argv[1])
path = directory / "d-metadata.json"
write_metadata_file(path, metadata(1), mode="in-place")
filler = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT)
free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
os.write(filler, b"x" * (free - 8192))  # 8 KiB left, less than the new content
error = failure(lambda: write_metadata_file(path, metadata(2, devices=100), mode="in-place"))
print(json.dumps([error, path.read_bytes() == encode_stream(metadata(1))]))
"""


@needs_unshare
@needs_strace
def test_a_write_that_fails_midway_restores_the_old_content(tmp_path: Path) -> None:
    # fallocate made a no-op: the space is not reserved (as on file systems that cannot), so
    # the rewrite runs into a real ENOSPC after 8 KiB and must put the old content back.
    mount = 'mount -t tmpfs -o size=256k tmpfs "$0"'
    prefix = (*in_mount_namespace(mount, tmp_path), *injecting("fallocate:retval=0"))
    error, intact = child_json(PARTIAL_WRITE, str(tmp_path), prefix=prefix)
    assert error["errno"] == errno.ENOSPC
    assert "the previous content was restored" in error["message"]
    assert intact


INJECTED = """
path = Path(sys.argv[1])
error = failure(lambda: write_metadata_file(path, metadata(2), mode=sys.argv[2]))
print(json.dumps([error, sorted(os.listdir(path.parent))]))
"""


@needs_strace
@pytest.mark.parametrize(
    ("mode", "rule", "said"),
    [
        ("atomic", "pwrite64:error=EIO", "write temporary file"),
        ("atomic", "fsync:error=EIO", "write temporary file"),
        ("atomic", "rename,renameat,renameat2:error=EIO", "over the file"),
        ("in-place", "pwrite64:error=ENOSPC:when=1", "the previous content was restored"),
        ("in-place", "fsync:error=EIO:when=1", "the previous content was restored"),
        ("in-place", "ftruncate:error=EIO:when=1", "the previous content was restored"),
    ],
)
def test_injected_failures(tmp_path: Path, mode: str, rule: str, said: str) -> None:
    path = tmp_path / f"{DRIVER}-metadata.json"
    write_metadata_file(path, metadata(1))
    before = path.read_bytes()
    error, listing = child_json(INJECTED, str(path), mode, prefix=injecting(rule))
    assert error["type"] == "MetadataWriteError"
    assert error["errno"] == getattr(errno, rule.split("error=")[1].split(":", maxsplit=1)[0])
    assert said in error["message"]
    assert error["message"].startswith(str(path))
    assert path.read_bytes() == before
    assert listing == [path.name]  # no temporary file left behind


@needs_strace
def test_a_failed_restore_is_said(tmp_path: Path) -> None:
    # Every write fails: the old content cannot be put back either, and the error says so.
    path = tmp_path / f"{DRIVER}-metadata.json"
    write_metadata_file(path, metadata(1))
    error, _ = child_json(INJECTED, str(path), "in-place", prefix=injecting("pwrite64:error=EIO"))
    assert error["errno"] == errno.EIO
    assert "restoring the previous content failed too (Input/output error)" in error["message"]
    assert "the file is left incomplete" in error["message"]


@needs_strace
def test_a_failing_directory_sync_says_the_new_file_is_in_place(tmp_path: Path) -> None:
    path = tmp_path / f"{DRIVER}-metadata.json"
    write_metadata_file(path, metadata(1))
    error, listing = child_json(
        INJECTED, str(path), "atomic", prefix=injecting("fsync:error=EIO:when=2")
    )
    assert "the new file is in place, but syncing its directory failed" in error["message"]
    assert read_metadata_file(path).generation == 2
    assert listing == [path.name]


READ_ONLY = """
directory = Path(sys.argv[1])
path = directory / "d-metadata.json"
results = [
    failure(lambda: write_metadata_file(path, metadata(2), mode="atomic")),
    failure(lambda: write_metadata_file(path, metadata(2), mode="in-place")),
    failure(lambda: update_metadata_file(path, lambda m: m)),
    failure(lambda: write_metadata_file(directory / "new" / "d-metadata.json", metadata(1))),
    read_metadata_file(path).generation,
    next(watch_metadata_file(path, timeout=5)).kind.name,
]
print(json.dumps(results))
"""


@needs_unshare
def test_a_read_only_mount(tmp_path: Path) -> None:
    write_metadata_file(tmp_path / "d-metadata.json", metadata(1))
    mount = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0"'
    *errors, generation, kind = child_json(
        READ_ONLY, str(tmp_path), prefix=in_mount_namespace(mount, tmp_path)
    )
    for error in errors:
        assert (error["type"], error["errno"]) == ("MetadataWriteError", errno.EROFS), error
    assert "create directory" in errors[3]["message"]
    assert (generation, kind) == (1, "CREATED")  # reading and watching work as before
    assert os.listdir(tmp_path) == ["d-metadata.json"]


UNPRIVILEGED = """
root = Path(sys.argv[1])
hidden = root / "resourceclaims" / "hidden" / "r" / "nic.example.com-metadata.json"
locked = root / "resourceclaims" / "locked" / "r" / "nic.example.com-metadata.json"
short = {"timeout": 5, "poll_interval": 0.05}
print(json.dumps({
    "read a mode-000 file": failure(lambda: read_metadata_file(hidden)),
    "watch a mode-000 file": failure(lambda: next(watch_metadata_file(hidden, **short))),
    "wait on a mode-000 directory": failure(
        lambda: wait_for_network_data("locked", "r", root=root, **short)),
    "watch a file in a mode-000 directory": failure(
        lambda: next(watch_claim_metadata("locked", "r", root=root, driver="nic.example.com", **short))),
    "watch a request below a mode-000 claim directory": failure(
        lambda: next(watch_claim_metadata("sealed", "r", root=root, **short))),
    "write below a mode-000 claim directory": failure(
        lambda: write_metadata_file(root / "resourceclaims" / "sealed" / "r" / "new" / "x", metadata(1))),
    "write into a directory of root's": failure(
        lambda: write_metadata_file(root / "resourceclaims" / "x" / "d-metadata.json", metadata(1))),
}))
"""


def test_an_unprivileged_reader() -> None:
    options, _ = unprivileged()
    root = Path(tempfile.mkdtemp(prefix="dra-metadata-faults-"))
    try:
        root.chmod(0o755)
        tree = MetadataTree(root)
        tree.add_claim("hidden", "r", DRIVER, ["n"]).chmod(0o000)
        tree.add_claim("locked", "r", DRIVER, ["n"]).parent.chmod(0o000)
        tree.add_claim("sealed", "r", DRIVER, ["n"]).parent.parent.chmod(0o000)
        (root / "resourceclaims").chmod(0o555)  # nobody may write here; not even root, without caps
        results = child_json(UNPRIVILEGED, str(root), **options)
        for what, error in results.items():
            assert error is not None, what
            assert error["errno"] == errno.EACCES, (what, error)
            expected = "MetadataWriteError" if what.startswith("write") else "MetadataReadError"
            assert error["type"] == expected, what
            assert str(root) in error["message"], what
    finally:
        for directory in [root, *root.rglob("*")]:
            if directory.is_dir():
                directory.chmod(0o755)
        shutil.rmtree(root)


KILLED_WRITER = """
path = Path(sys.argv[1])
generation = read_metadata_file(path).generation + 1
print("writing", flush=True)
while True:
    write_metadata_file(path, metadata(generation, devices=300), mode="atomic")
    generation += 1
"""


def test_a_killed_atomic_writer_leaves_a_whole_file(tmp_path: Path) -> None:
    path = tmp_path / f"{DRIVER}-metadata.json"
    write_metadata_file(path, metadata(1))
    generation = 1
    for trial in range(4):
        with subprocess.Popen(
            [sys.executable, "-c", PRELUDE + KILLED_WRITER, str(path)],
            stdout=subprocess.PIPE,
            text=True,
        ) as writer:
            assert writer.stdout is not None
            assert writer.stdout.readline() == "writing\n"
            time.sleep(0.02 + 0.03 * trial)  # somewhere in the middle of a write
            writer.send_signal(signal.SIGKILL)
            writer.wait()
        metadata_now = read_metadata_file(path)  # decodes: the old or a new file, never a part
        assert metadata_now.generation >= generation
        generation = metadata_now.generation
    # A killed writer can leave its temporary file; it never looks like a driver's file.
    assert [name for name in os.listdir(tmp_path) if name.endswith("-metadata.json")] == [path.name]


# A waiting watcher does no file-system work between scans (issue #16) -----------------------

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
