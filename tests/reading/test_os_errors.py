"""Read errors carry the errno of the failing system call, and None where there is none."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from dra_metadata import (
    MetadataReadError,
    read_claim_metadata,
    read_metadata_file,
    read_template_metadata,
    resource_claim_file_path,
    resource_claim_request_dir,
    resource_claim_template_file_path,
    resource_claim_template_request_dir,
)
from dra_metadata._reading._paths import not_a_directory


def put(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


READERS = {
    "claim": (read_claim_metadata, resource_claim_file_path),
    "template": (read_template_metadata, resource_claim_template_file_path),
}


@pytest.fixture(params=sorted(READERS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


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

    def test_a_file_path_that_runs_through_a_regular_file_names_it(self, tmp_path: Path) -> None:
        root = put(tmp_path / "root.json", b"{}")
        path = root / "resourceclaims" / "c" / "gpu" / "a-metadata.json"
        with pytest.raises(MetadataReadError) as info:
            read_metadata_file(path)
        message = f"open metadata file: {root} is not a directory"
        self.assert_read_error(info.value, path, errno.ENOTDIR, message)
        assert info.value.__suppress_context__  # the OSError is told, not chained

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


def test_the_component_that_is_no_directory_is_the_first_such(tmp_path: Path) -> None:
    first = put(tmp_path / "root.json", b"{}")
    assert not_a_directory(first / "x" / "y") == first


def test_without_such_a_component_the_path_itself_is_named(tmp_path: Path) -> None:
    # the path changed since the error (the file is gone): nothing better to name
    missing = tmp_path / "gone" / "x" / "a-metadata.json"
    assert not_a_directory(missing) == missing
    assert not_a_directory(tmp_path) == tmp_path
