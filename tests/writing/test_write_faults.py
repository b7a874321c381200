"""Writers facing faults: bad arguments, symlinks, a full disk, a read-only mount, failing system
calls, concurrent updates and writers killed with SIGKILL; the old content is kept or the error
says what is in place.

Real faults wherever the machine allows: a full tmpfs and a read-only mount in a private mount
namespace (``unshare -m``), writers killed with SIGKILL, and failing system calls injected by
``strace`` into a child process. Each test that needs a capability skips with the reason when it
is missing.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import (
    InvalidNameError,
    MetadataWriteError,
    read_metadata_file,
)
from dra_metadata.testing import MetadataTree
from dra_metadata.writer import update_metadata_file, write_metadata_file
from fault_children import DRIVER, PRELUDE, child_json, metadata

from helpers import can_unshare


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
