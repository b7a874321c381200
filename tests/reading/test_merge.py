"""Merged reads of a request directory (spec §6): they succeed wherever Go's do."""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_metadata import (
    MetadataConflictError,
    MetadataValidationError,
    ObjectMeta,
    read_claim_metadata,
    resource_claim_request_dir,
)

from helpers import stream, wire_object

REQUESTS_ONLY = {  # a custom driver that writes no metadata at all
    "kind": "DeviceMetadata",
    "apiVersion": "metadata.resource.k8s.io/v1alpha1",
    "requests": [{"name": "gpu", "devices": [{"driver": "nic", "pool": "p", "name": "nic-0"}]}],
}


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    path = resource_claim_request_dir("my-claim", "gpu", root=tmp_path)
    path.mkdir(parents=True)
    return path


def write(directory: Path, driver: str, obj: dict[str, object]) -> Path:
    path = directory / f"{driver}-metadata.json"
    path.write_bytes(stream(obj))
    return path


def read(directory: Path, **options: object) -> object:
    root = directory.parents[2]
    return read_claim_metadata("my-claim", "gpu", root=root, **options)  # type: ignore[arg-type]


def test_a_file_without_metadata_never_conflicts(directory: Path) -> None:
    write(directory, "gpu.example.com", wire_object())
    write(directory, "nic.example.com", REQUESTS_ONLY)
    for validate in (False, True):
        metadata = read(directory, validate=validate)
        assert (metadata.name, metadata.namespace, metadata.uid) == (  # type: ignore[attr-defined]
            "my-claim",
            "default",
            "uid-1234",
        )
        (request,) = metadata.requests  # type: ignore[attr-defined]
        assert [device.name for device in request.devices] == ["gpu-0", "nic-0"]


@pytest.mark.parametrize("field", ["name", "namespace", "uid"])
def test_files_that_disagree_merge_with_the_field_empty(directory: Path, field: str) -> None:
    first = write(directory, "a", wire_object())
    meta = {"name": "my-claim", "namespace": "default", "uid": "uid-1234", field: "other"}
    second = write(directory, "b", wire_object(metadata=meta))
    merged = read(directory)
    assert getattr(merged, field) == ""
    others = {"name", "namespace", "uid"} - {field}
    assert all(getattr(merged, other) for other in others)  # the fields they agree on stay
    own = [getattr(source.metadata, field) for source in merged.sources]  # type: ignore[attr-defined]
    assert own == [{"name": "my-claim", "namespace": "default", "uid": "uid-1234"}[field], "other"]
    assert [source.path for source in merged.sources] == [first, second]  # type: ignore[attr-defined]
    with pytest.raises(MetadataConflictError, match=f"disagree about the claim's {field}") as info:
        read(directory, validate=True)
    assert info.value.field == field
    assert "other" in info.value.values
    assert info.value.path == directory
    with pytest.raises(MetadataConflictError):
        read(directory, validate="strict")


def test_other_fields_are_kept_where_the_files_that_set_them_agree(directory: Path) -> None:
    labelled = {"name": "my-claim", "uid": "u", "generation": 3, "labels": {"team": "ml"}}
    write(directory, "a", wire_object(metadata=labelled))
    write(directory, "b", wire_object(metadata={"name": "my-claim", "generation": 5}))
    write(directory, "c", REQUESTS_ONLY)
    merged = read(directory)
    assert merged.metadata == ObjectMeta(name="my-claim", uid="u", labels={"team": "ml"})  # type: ignore[attr-defined]
    assert [source.generation for source in merged.sources] == [3, 5, 0]  # type: ignore[attr-defined]


def test_a_conflict_is_reported_before_the_findings_of_each_file(directory: Path) -> None:
    write(directory, "a", wire_object(podClaimName="INVALID"))
    with pytest.raises(MetadataValidationError):
        read(directory, validate=True)
    write(directory, "b", wire_object(metadata={"uid": "other"}))
    with pytest.raises(MetadataConflictError):
        read(directory, validate=True)
