"""Reading behaviours that no other test pinned (issue #18): found by mutation testing.

Only the public API is used, so that rewrites of the modules behind it keep these tests valid.
Each error is checked for its type, the key facts of its message and its attributes.
"""

from __future__ import annotations

import errno
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dra_metadata import (
    DEFAULT_MAX_SIZE,
    InvalidNameError,
    MetadataConflictError,
    MetadataDecodeError,
    MetadataNotFoundError,
    MetadataReadError,
    MetadataTooLargeError,
    MetadataValidationError,
    NoMetadataError,
    metadata_file_name,
    read_claim_metadata,
    read_metadata_file,
    read_template_metadata,
    resource_claim_file_path,
    resource_claim_request_dir,
    resource_claim_template_file_path,
    resource_claim_template_request_dir,
)
from dra_metadata._reading import _read as read_module
from dra_metadata._reading._missing import WORDING

from helpers import V1ALPHA1, V1BETA1, compact, stream, wire_object

PROC_STATUS = Path("/proc/self/status")
"""A regular file whose reported size (0) is smaller than what reading it gives."""


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


class TestReadTemplateMetadataDriver:
    def test_reads_only_that_drivers_file_of_the_template_directory(self, tmp_path: Path) -> None:
        template_a = put(
            resource_claim_template_file_path("a.example.com", "acc", "gpu", root=tmp_path),
            devices_object("a.example.com", "a0", podClaimName="acc"),
        )
        put(
            resource_claim_template_file_path("b.example.com", "acc", "gpu", root=tmp_path),
            b"{ broken",
        )
        # A claim referenced by name with the same names must not be read instead.
        put(
            resource_claim_file_path("a.example.com", "acc", "gpu", root=tmp_path),
            devices_object("a.example.com", "wrong"),
        )
        metadata = read_template_metadata("acc", "gpu", driver="a.example.com", root=tmp_path)
        assert [device.name for device in metadata.devices] == ["a0"]
        assert metadata.pod_claim_name == "acc"
        assert metadata.generation == 1  # one file keeps its generation
        (source,) = metadata.sources
        assert (source.path, source.driver, source.api_version) == (
            template_a,
            "a.example.com",
            V1ALPHA1,
        )

    def test_a_missing_driver_file_names_the_template_path(self, tmp_path: Path) -> None:
        put(
            resource_claim_template_file_path("a.example.com", "acc", "gpu", root=tmp_path),
            devices_object("a.example.com", "a0"),
        )
        with pytest.raises(MetadataNotFoundError) as info:
            read_template_metadata("acc", "gpu", driver="b.example.com", root=tmp_path)
        expected = resource_claim_template_file_path("b.example.com", "acc", "gpu", root=tmp_path)
        assert info.value.path == expected
        assert info.value.filename == str(expected)
        assert info.value.errno == errno.ENOENT
        assert str(info.value) == (  # which drivers have a file, and what to do
            f"{expected}: driver b.example.com has no metadata file in {expected.parent}; "
            "drivers with a file: a.example.com (leave out driver= to read them all)"
        )

    def test_an_invalid_driver_name_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(InvalidNameError) as info:
            read_template_metadata("acc", "gpu", driver="../x", root=tmp_path)
        assert (info.value.argument, info.value.value) == ("driver", "../x")


class TestMergedApiVersion:
    @pytest.mark.parametrize("api_version", [V1BETA1, V1ALPHA1])
    def test_the_common_version_of_every_file(self, tmp_path: Path, api_version: str) -> None:
        for driver in ("a.example.com", "b.example.com", "c.example.com"):
            put(
                resource_claim_file_path(driver, "c", "gpu", root=tmp_path),
                devices_object(driver, f"{driver}-0", api_version=api_version),
            )
        metadata = read_claim_metadata("c", "gpu", root=tmp_path)
        assert metadata.api_version == api_version
        assert [source.api_version for source in metadata.sources] == [api_version] * 3
        assert metadata.generation == 0  # a merge has no generation of its own

    def test_one_file_differs(self, tmp_path: Path) -> None:
        for driver, api_version in (("a", V1BETA1), ("b", V1BETA1), ("c", V1ALPHA1)):
            put(
                resource_claim_file_path(driver, "c", "gpu", root=tmp_path),
                devices_object(driver, "0", api_version=api_version),
            )
        assert read_claim_metadata("c", "gpu", root=tmp_path).api_version == ""


class TestDirectoryReads:
    def test_files_are_merged_in_byte_order(self, tmp_path: Path) -> None:
        # As Go's Glob: by the bytes of the names. A name that is not UTF-8 (b"\xff") comes
        # after U+E000 (b"\xee\x80\x80"), though its Python string sorts first.
        directory = resource_claim_request_dir("c", "gpu", root=tmp_path)
        names = [os.fsdecode(b"\xff"), "\ue000", "a"]
        for index, driver in enumerate(names):
            put(directory / f"{driver}-metadata.json", devices_object("d", f"dev-{index}"))
        metadata = read_claim_metadata("c", "gpu", root=tmp_path)
        assert [source.driver for source in metadata.sources] == ["a", "\ue000", names[0]]
        assert [device.name for device in metadata.devices] == ["dev-2", "dev-1", "dev-0"]

    def test_a_conflict_lists_what_each_file_says(self, tmp_path: Path) -> None:
        directory = resource_claim_request_dir("c", "gpu", root=tmp_path)
        for driver, namespace in (("a", "ns-1"), ("b", "ns-1"), ("c", "ns-2")):
            meta = {"name": "c", "namespace": namespace, "uid": "u"}
            put(directory / metadata_file_name(driver), stream(wire_object(metadata=meta)))
        # As Go's merge: it succeeds, the field they disagree on empty, each file's own kept.
        merged = read_claim_metadata("c", "gpu", root=tmp_path)
        assert (merged.name, merged.namespace, merged.uid) == ("c", "", "u")
        assert [source.metadata.namespace for source in merged.sources] == ["ns-1", "ns-1", "ns-2"]
        with pytest.raises(MetadataConflictError) as info:
            read_claim_metadata("c", "gpu", root=tmp_path, validate=True)
        assert (info.value.field, info.value.values, info.value.path) == (
            "namespace",
            ("ns-1", "ns-2"),
            directory,
        )
        assert str(info.value) == (
            f"{directory}: the metadata files disagree about the claim's namespace "
            "(a-metadata.json: 'ns-1', b-metadata.json: 'ns-1', c-metadata.json: 'ns-2'); "
            "the merged namespace is empty and each file's own is in .sources"
        )

    def test_validation_names_the_file_or_the_directory(self, tmp_path: Path, kind: str) -> None:
        read, file_path = READERS[kind]
        invalid = wire_object()
        invalid["requests"][0]["devices"][0]["attributes"] = {"model": {"int": 1, "string": "x"}}
        path = put(file_path("a.example.com", "c", "gpu", root=tmp_path), stream(invalid))
        assert read("c", "gpu", root=tmp_path).devices[0].name == "gpu-0"  # not validated
        for driver, named in ((None, path.parent), ("a.example.com", path)):
            with pytest.raises(MetadataValidationError) as info:
                read("c", "gpu", driver=driver, root=tmp_path, validate=True)
            assert info.value.path == named
            assert [error.path for error in info.value.errors] == [
                "requests[0].devices[0].attributes[model]"
            ]
            assert info.value.metadata.devices[0].name == "gpu-0"


class TestOsErrno:
    """MetadataReadError carries the errno of the failure (None when there is none)."""

    def assert_read_error(
        self, error: MetadataReadError, path: Path, code: int | None, message: str
    ) -> None:
        assert isinstance(error, OSError)
        assert error.errno == code
        assert error.path == path
        assert error.filename == str(path)
        assert str(error) == f"{path}: {message}"
        assert error.strerror == message

    def test_a_directory(self, tmp_path: Path) -> None:
        path = tmp_path / "a-metadata.json"
        path.mkdir()
        with pytest.raises(MetadataReadError) as info:
            read_metadata_file(path)
        self.assert_read_error(
            info.value, path, errno.EISDIR, "open metadata file: it is a directory"
        )

    def test_a_fifo_has_no_errno(self, tmp_path: Path) -> None:
        path = tmp_path / "a-metadata.json"
        os.mkfifo(path)
        with pytest.raises(MetadataReadError) as info:
            read_metadata_file(path)
        self.assert_read_error(
            info.value, path, None, "open metadata file: it is not a regular file"
        )

    def test_open_fails(self, tmp_path: Path) -> None:
        path = tmp_path / "a-metadata.json"
        path.symlink_to(path.name)  # a loop: open fails with ELOOP, for root too
        with pytest.raises(MetadataReadError) as info:
            read_metadata_file(path)
        message = f"open metadata file: {os.strerror(errno.ELOOP)}"
        self.assert_read_error(info.value, path, errno.ELOOP, message)

    def test_read_fails(self) -> None:
        path = Path("/proc/self/mem")  # opens, and reading address 0 fails with EIO
        try:
            os.close(os.open(path, os.O_RDONLY))
        except OSError as error:
            pytest.skip(f"cannot open {path} here: {error}")
        with pytest.raises(MetadataReadError) as info:
            read_metadata_file(path)
        message = f"read metadata file: {os.strerror(errno.EIO)}"
        self.assert_read_error(info.value, path, errno.EIO, message)

    def test_the_request_path_is_a_file(self, tmp_path: Path, kind: str) -> None:
        read, _ = READERS[kind]
        build = (
            resource_claim_request_dir if kind == "claim" else resource_claim_template_request_dir
        )
        directory = build("c", "gpu", root=tmp_path)
        put(directory, b"")
        with pytest.raises(MetadataReadError) as info:
            read("c", "gpu", root=tmp_path)
        message = f"list metadata files: {directory} is not a directory"
        self.assert_read_error(info.value, directory, errno.ENOTDIR, message)

    def test_the_request_directory_cannot_be_listed(self, tmp_path: Path) -> None:
        directory = resource_claim_request_dir("c", "gpu", root=tmp_path)
        directory.parent.mkdir(parents=True)
        directory.symlink_to(directory.name)
        with pytest.raises(MetadataReadError) as info:
            read_claim_metadata("c", "gpu", root=tmp_path)
        message = f"list metadata files: {os.strerror(errno.ELOOP)}"
        self.assert_read_error(info.value, directory, errno.ELOOP, message)


INVALID_NAMES = [
    # call, argument, value, reason
    (lambda: resource_claim_request_dir("", "gpu"), "claim_name", "", "must not be empty"),
    (lambda: resource_claim_request_dir(".", "gpu"), "claim_name", ".", "'.' is not a name"),
    (lambda: resource_claim_request_dir("..", "gpu"), "claim_name", "..", "'..' is not a name"),
    (lambda: resource_claim_request_dir("a/b", "gpu"), "claim_name", "a/b", "must not contain '/'"),
    (
        lambda: resource_claim_request_dir("a\0b", "gpu"),
        "claim_name",
        "a\0b",
        "must not contain a NUL character",
    ),
    (
        lambda: resource_claim_request_dir(7, "gpu"),  # type: ignore[arg-type]
        "claim_name",
        7,
        "must be a str, not int",
    ),
    (
        lambda: resource_claim_request_dir("\ud800", "gpu"),
        "claim_name",
        "\ud800",
        "is not valid Unicode text",
    ),
    (
        lambda: resource_claim_request_dir("é" * 127, "gpu"),
        "claim_name",
        "é" * 127,
        "is 254 bytes long, at most 253 allowed",
    ),
    (
        lambda: resource_claim_template_request_dir("..", "gpu"),
        "pod_claim_name",
        "..",
        "'..' is not a name",
    ),
    (lambda: resource_claim_request_dir("c", ""), "request_name", "", "must not be empty"),
    (lambda: resource_claim_request_dir("c", "/sub"), "request_name", "/sub", "must not be empty"),
    (lambda: resource_claim_request_dir("c", "gpu/"), "request_name", "gpu/", "must not be empty"),
    (
        lambda: resource_claim_request_dir("c", "../sub"),
        "request_name",
        "../sub",
        "'..' is not a name",
    ),
    (
        lambda: resource_claim_request_dir("c", "gpu/."),
        "request_name",
        "gpu/.",
        "'.' is not a name",
    ),
    (
        lambda: resource_claim_request_dir("c", "gpu/a\0"),
        "request_name",
        "gpu/a\0",
        "must not contain a NUL character",
    ),
    (
        lambda: resource_claim_request_dir("c", "a/b/c"),
        "request_name",
        "a/b/c",
        "only one '/' (before the subrequest) is allowed",
    ),
    (
        lambda: resource_claim_request_dir("c", b"gpu"),  # type: ignore[arg-type]
        "request_name",
        b"gpu",
        "must be a str, not bytes",
    ),
    (
        lambda: resource_claim_request_dir("c", "g" * 254),
        "request_name",
        "g" * 254,
        "is 254 bytes long, at most 253 allowed",
    ),
    (lambda: metadata_file_name("a/b"), "driver", "a/b", "must not contain '/'"),
    (lambda: metadata_file_name(""), "driver", "", "must not be empty"),
    (
        lambda: read_claim_metadata("c", "gpu", driver="x\0"),
        "driver",
        "x\0",
        "must not contain a NUL character",
    ),
    (
        lambda: read_template_metadata("c", "a/b/c"),
        "request_name",
        "a/b/c",
        "only one '/' (before the subrequest) is allowed",
    ),
]


@pytest.mark.parametrize(("call", "argument", "value", "reason"), INVALID_NAMES)
def test_invalid_name_reasons(call: object, argument: str, value: object, reason: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        call()  # type: ignore[operator]
    error = info.value
    assert (error.argument, error.value, error.reason) == (argument, value, reason)
    assert error.path is None
    assert str(error) == f"invalid {argument} {value!r}: {reason}"


def test_253_bytes_pass_and_254_do_not() -> None:
    assert resource_claim_request_dir("c", "g" * 253).name == "g" * 253
    with pytest.raises(InvalidNameError) as info:
        resource_claim_request_dir("c", "g" * 254)
    assert info.value.reason == "is 254 bytes long, at most 253 allowed"
    with pytest.raises(InvalidNameError) as info:
        metadata_file_name("d" * 254)
    assert info.value.reason == "is 254 bytes long, at most 253 allowed"


def test_a_driver_file_name_fits_in_255_bytes() -> None:
    # A driver name of 253 bytes is a valid name, but its file name would not fit (NAME_MAX).
    assert metadata_file_name("d" * 241) == "d" * 241 + "-metadata.json"
    assert len(metadata_file_name("é" * 120 + "d").encode()) == 255
    for driver, size in (("d" * 242, 256), ("d" * 253, 267), ("é" * 121, 256)):
        with pytest.raises(InvalidNameError) as info:
            metadata_file_name(driver)
        assert (info.value.argument, info.value.value) == ("driver", driver)
        assert info.value.reason == (
            f"its file name {driver[:20]}...-metadata.json would be {size} bytes long, "
            "at most 255 allowed (241 bytes of driver name)"
        )


def test_a_host_directory_name_fits_in_255_bytes() -> None:
    from dra_metadata.writer import host_metadata_file_path  # noqa: PLC0415

    path = host_metadata_file_path("/p", "n" * 127, "c" * 127, "gpu/high-memory")
    assert path == Path("/p/dra-device-metadata") / f"{'n' * 127}_{'c' * 127}" / "gpu/metadata.json"
    with pytest.raises(InvalidNameError) as info:
        host_metadata_file_path("/p", "n" * 128, "c" * 127, "gpu")
    assert (info.value.argument, info.value.value) == ("claim_name", "c" * 127)
    assert info.value.reason == (
        "the directory name <namespace>_<claim_name> would be 256 bytes long, at most 255 allowed"
    )


@pytest.mark.parametrize("driver", [None, "a.example.com"])
def test_an_empty_file_is_being_written(tmp_path: Path, driver: str | None) -> None:
    path = put(resource_claim_file_path("a.example.com", "c", "gpu", root=tmp_path), b"")
    with pytest.raises(NoMetadataError) as info:
        read_claim_metadata("c", "gpu", driver=driver, root=tmp_path)
    assert info.value.path == path
    assert str(info.value) == (
        f"{path}: the metadata file is empty: the driver may be in the middle of writing it; "
        "read it again shortly"
    )


def test_each_stale_file_is_warned_about_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Two files the driver replaced on the host, each still open here as a bind mount keeps
    # it (a symlink to the open descriptor): one warning for each, not one for all.
    descriptors = []
    links = []
    try:
        for driver in ("a.example.com", "b.example.com"):
            host = put(tmp_path / "host" / driver, devices_object(driver, f"{driver[0]}0"))
            descriptors.append(os.open(host, os.O_RDONLY))
            host.unlink()
            link = resource_claim_file_path(driver, "c", "gpu", root=tmp_path)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(f"/proc/self/fd/{descriptors[-1]}")
            links.append(link)
        for _ in range(2):
            metadata = read_claim_metadata("c", "gpu", root=tmp_path)
            assert [source.stale for source in metadata.sources] == [True, True]
    finally:
        for descriptor in descriptors:
            os.close(descriptor)
    assert [record.getMessage().partition(":")[0] for record in caplog.records] == [
        str(link) for link in links
    ]
