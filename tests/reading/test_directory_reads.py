"""Reads of a request directory: one driver's file, the merged version, byte order, conflicts,
files being written, stale files.

Only the public API is used, so that rewrites of the modules behind it keep these tests valid.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from dra_metadata import (
    InvalidNameError,
    MetadataConflictError,
    MetadataNotFoundError,
    MetadataValidationError,
    NoMetadataError,
    metadata_file_name,
    read_claim_metadata,
    read_template_metadata,
    resource_claim_file_path,
    resource_claim_request_dir,
    resource_claim_template_file_path,
)

from helpers import V1ALPHA1, V1BETA1, stream, wire_object


def devices_object(driver: str, *names: str, api_version: str = V1ALPHA1, **top: object) -> bytes:
    devices = [{"driver": driver, "pool": "worker-0", "name": name} for name in names]
    return stream(wire_object(api_version, requests=[{"name": "gpu", "devices": devices}], **top))


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
