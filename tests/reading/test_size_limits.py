"""max_size= of the readers: per file, the 4 MiB default, zero, and files whose size lies.

Only the public API is used, so that rewrites of the modules behind it keep these tests valid.
Each error is checked for its type, the key facts of its message and its attributes.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dra_metadata import (
    DEFAULT_MAX_SIZE,
    MetadataDecodeError,
    MetadataTooLargeError,
    NoMetadataError,
    read_claim_metadata,
    read_metadata_file,
    read_template_metadata,
    resource_claim_file_path,
    resource_claim_template_file_path,
)
from dra_metadata._reading import _read as read_module
from dra_metadata._reading._missing import WORDING

from helpers import V1ALPHA1, compact, stream, wire_object

PROC_STATUS = Path("/proc/self/status")


def devices_object(driver: str, *names: str, api_version: str = V1ALPHA1, **top: object) -> bytes:
    devices = [{"driver": driver, "pool": "worker-0", "name": name} for name in names]
    return stream(wire_object(api_version, requests=[{"name": "gpu", "devices": devices}], **top))


def put(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def sparse(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def assert_too_large(error: MetadataTooLargeError, path: Path, limit: int, size: int) -> None:
    assert isinstance(error, MetadataDecodeError)
    assert error.path == path
    assert error.limit == limit
    assert str(error) == (
        f"{path}: file is larger than the limit of {limit} bytes (at least {size} bytes); "
        "pass max_size= to raise the limit"
    )


def test_the_command_words_how_to_raise_the_limit(tmp_path: Path) -> None:
    data = devices_object("a", "0")
    path = put(resource_claim_file_path("a.example.com", "c", "gpu", root=tmp_path), data)
    token = WORDING.set("command")  # as dra-metadata sets it for everything it calls
    try:
        with pytest.raises(MetadataTooLargeError) as info:
            read_claim_metadata("c", "gpu", root=tmp_path, max_size=len(data) - 1)
    finally:
        WORDING.reset(token)
    assert str(info.value) == (
        f"{path}: file is larger than the limit of {len(data) - 1} bytes (at least {len(data)} "
        "bytes); give --max-size SIZE (e.g. --max-size 16MiB) to raise the limit"
    )


READERS = {
    "claim": (read_claim_metadata, resource_claim_file_path),
    "template": (read_template_metadata, resource_claim_template_file_path),
}


@pytest.fixture(params=sorted(READERS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class TestMaxSizeOfARequestDirectory:
    """max_size= of read_claim_metadata / read_template_metadata, with and without driver=."""

    def test_the_limit_applies_to_each_file_not_to_their_sum(
        self, tmp_path: Path, kind: str
    ) -> None:
        read, file_path = READERS[kind]
        small = put(file_path("a.example.com", "c", "gpu", root=tmp_path), devices_object("a", "0"))
        large_data = devices_object("b", "0", "1", "2")
        large = put(file_path("b.example.com", "c", "gpu", root=tmp_path), large_data)
        size = len(large_data)
        assert small.stat().st_size < size

        metadata = read("c", "gpu", root=tmp_path, max_size=size)
        assert [source.path for source in metadata.sources] == [small, large]
        assert [device.name for device in metadata.devices] == ["0", "0", "1", "2"]

        with pytest.raises(MetadataTooLargeError) as info:
            read("c", "gpu", root=tmp_path, max_size=size - 1)
        assert_too_large(info.value, large, size - 1, size)

    def test_with_driver_only_that_file_is_measured(self, tmp_path: Path, kind: str) -> None:
        read, file_path = READERS[kind]
        data = devices_object("a", "0")
        path = put(file_path("a.example.com", "c", "gpu", root=tmp_path), data)
        sparse(file_path("b.example.com", "c", "gpu", root=tmp_path), DEFAULT_MAX_SIZE + 1)

        metadata = read("c", "gpu", driver="a.example.com", root=tmp_path, max_size=len(data))
        assert [source.path for source in metadata.sources] == [path]
        with pytest.raises(MetadataTooLargeError) as info:
            read("c", "gpu", driver="a.example.com", root=tmp_path, max_size=len(data) - 1)
        assert_too_large(info.value, path, len(data) - 1, len(data))

    def test_the_default_limit_is_4_mib(self, tmp_path: Path, kind: str) -> None:
        read, file_path = READERS[kind]
        path = sparse(file_path("a.example.com", "c", "gpu", root=tmp_path), DEFAULT_MAX_SIZE + 1)
        for driver in (None, "a.example.com"):
            with pytest.raises(MetadataTooLargeError) as info:
                read("c", "gpu", driver=driver, root=tmp_path)
            assert_too_large(info.value, path, DEFAULT_MAX_SIZE, DEFAULT_MAX_SIZE + 1)

    def test_a_negative_limit_is_refused(self, tmp_path: Path, kind: str) -> None:
        read, file_path = READERS[kind]
        put(file_path("a.example.com", "c", "gpu", root=tmp_path), devices_object("a", "0"))
        with pytest.raises(ValueError, match=r"max_size must be a number of bytes >= 0, not -1$"):
            read("c", "gpu", root=tmp_path, max_size=-1)


class TestMaxSizeZero:
    def test_an_empty_file_is_empty_not_too_large(self, tmp_path: Path, kind: str) -> None:
        read, file_path = READERS[kind]
        path = put(file_path("a.example.com", "c", "gpu", root=tmp_path), b"")
        for call in (
            lambda: read("c", "gpu", root=tmp_path, max_size=0),
            lambda: read("c", "gpu", driver="a.example.com", root=tmp_path, max_size=0),
            lambda: read_metadata_file(path, max_size=0),
        ):
            with pytest.raises(NoMetadataError) as info:
                call()
            assert not isinstance(info.value, MetadataTooLargeError)
            assert info.value.path == path
            assert "empty" in str(info.value)
            assert "middle of writing" in str(info.value)

    def test_one_byte_is_too_large(self, tmp_path: Path, kind: str) -> None:
        read, file_path = READERS[kind]
        path = put(file_path("a.example.com", "c", "gpu", root=tmp_path), b" ")
        with pytest.raises(MetadataTooLargeError) as info:
            read("c", "gpu", root=tmp_path, max_size=0)
        assert_too_large(info.value, path, 0, 1)
        with pytest.raises(MetadataTooLargeError) as info:
            read_metadata_file(path, max_size=0)
        assert_too_large(info.value, path, 0, 1)


class TestAFileLargerThanItsReportedSize:
    """A file that grows past the size fstat reported is measured by what is read.

    Files of /proc report a size of 0 and give their content when read: reading stops as soon
    as the limit is passed, whatever the size said.
    """

    @pytest.fixture
    def proc_status(self) -> bytes:
        if PROC_STATUS.stat().st_size != 0:
            pytest.skip("this kernel reports a size for /proc/self/status")
        return PROC_STATUS.read_bytes()

    def test_read_metadata_file(self, proc_status: bytes) -> None:
        limit = 16
        with pytest.raises(MetadataTooLargeError) as info:
            read_metadata_file(PROC_STATUS, max_size=limit)
        error = info.value
        assert error.path == PROC_STATUS
        assert error.limit == limit
        read = int(str(error).partition("(at least ")[2].partition(" bytes)")[0])
        assert limit < read <= len(proc_status) + 4096  # the first chunk, not the reported 0

    @pytest.mark.usefixtures("proc_status")
    def test_through_a_request_directory(self, tmp_path: Path) -> None:
        link = resource_claim_file_path("a.example.com", "c", "gpu", root=tmp_path)
        link.parent.mkdir(parents=True)
        link.symlink_to(PROC_STATUS)
        with pytest.raises(MetadataTooLargeError) as info:
            read_claim_metadata("c", "gpu", root=tmp_path, max_size=16)
        assert info.value.path == link
        assert info.value.limit == 16

    def test_its_content_is_read_although_its_size_is_0(self, proc_status: bytes) -> None:
        # Not "empty": the text of /proc/self/status is read and found not to be JSON.
        assert proc_status
        with pytest.raises(MetadataDecodeError) as info:
            read_metadata_file(PROC_STATUS)
        assert not isinstance(info.value, NoMetadataError)
        assert info.value.object_index == 1
        assert "at byte 0" in str(info.value)


@pytest.fixture
def growing_file() -> Iterator[tuple[Path, int]]:
    """A file whose content (a metadata object, then bytes never parsed) outgrows its size.

    The command line of a process, as /proc shows it: reported as 0 bytes, read in several
    reads. Yields its path and the length of its content.
    """
    obj = compact(wire_object(podClaimName="p" * 100_000)).strip().decode()
    child = subprocess.Popen([obj, "60"], executable="/bin/sleep")
    try:
        path = Path(f"/proc/{child.pid}/cmdline")
        deadline = time.monotonic() + 10
        while not path.read_bytes().startswith(b"{"):  # until the child has called exec
            assert time.monotonic() < deadline, "the child did not start"
            time.sleep(0.01)
        if path.stat().st_size != 0:
            pytest.skip("this kernel reports a size for /proc/PID/cmdline")
        yield path, len(obj) + len(b"\x0060\x00")
    finally:
        child.kill()
        child.wait()


class TestAFileThatOutgrowsItsSize:
    """What a read gives counts, not the size reported before it (a file being appended to)."""

    def test_is_read_whole(self, growing_file: tuple[Path, int]) -> None:
        path, size = growing_file
        assert size > 65536  # more than one read
        metadata = read_metadata_file(path, max_size=size)
        assert metadata.pod_claim_name == "p" * 100_000
        assert metadata.name == "my-claim"

    def test_the_limit_counts_every_read(self, growing_file: tuple[Path, int]) -> None:
        path, size = growing_file
        limit = 65536 + 1000  # more than any single read gives, less than the whole
        with pytest.raises(MetadataTooLargeError) as info:
            read_metadata_file(path, max_size=limit)
        assert info.value.limit == limit
        shown = int(str(info.value).partition("(at least ")[2].partition(" bytes)")[0])
        assert limit < shown <= size

    @pytest.mark.parametrize(
        ("size_before", "limit", "shown"),
        [
            (10, 100, 65536),  # the first read asks for 64 KiB when the size says less
            (100_000, 200_000, 100_000 + 65536 + 65536),  # the size first, then 64 KiB reads
        ],
    )
    def test_at_least_counts_the_bytes_of_the_reads(
        self, tmp_path: Path, size_before: int, limit: int, shown: int
    ) -> None:
        """The size each read asks for decides the "at least" of the message: pinned for a
        regular file that grows between its fstat and the reads."""
        path = tmp_path / "d-metadata.json"
        path.write_bytes(b"x" * size_before)
        descriptor = os.open(path, os.O_RDONLY)
        try:
            assert os.fstat(descriptor).st_size == size_before
            with path.open("ab") as appended:  # the file grows after its status was taken
                appended.write(b"x" * (1_000_000 - size_before))
            with pytest.raises(MetadataTooLargeError) as info:
                read_module._content(descriptor, path, size_before, limit)
        finally:
            os.close(descriptor)
        assert str(info.value) == (
            f"{path}: file is larger than the limit of {limit} bytes (at least {shown} bytes); "
            "pass max_size= to raise the limit"
        )
