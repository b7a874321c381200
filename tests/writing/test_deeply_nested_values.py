"""Kept JSON nested deeper than Python recurses (fieldsV1, up to Go's 10,000 levels).

Reading such a file works, as in Go; comparing, hashing, printing and updating it never leak
a RecursionError: what cannot be written again is the documented MetadataEncodeError, which
names the file and the field, and the file is left as it was.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import Device, MetadataEncodeError
from dra_metadata._model._raw_json import json_repr
from dra_metadata.writer import encode_stream, update_metadata_file, write_metadata_file


def nested(depth: int, leaf: str = "{}") -> str:
    """``{"f:a":{"f:a":...{}...}}``: ``depth`` objects, one inside the other."""
    return '{"f:a":' * (depth - 1) + leaf + "}" * (depth - 1)


def deep_file(directory: Path, depth: int, leaf: str = "{}") -> Path:
    path = directory / "gpu.example.com-metadata.json"
    path.write_text(
        '{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1beta1",'
        ' "metadata": {"name": "c", "namespace": "ns", "uid": "u", "generation": 1,'
        f' "managedFields": [{{"manager": "m", "fieldsV1": {nested(depth, leaf)}}}]}},'
        ' "requests": [{"name": "gpu", "devices": [{"driver": "gpu.example.com", "pool": "p",'
        ' "name": "gpu-0"}]}]}\n'
    )
    return path


DEPTHS = [300, 1000, 2500, 9990]


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_file_reads_compares_and_hashes(tmp_path: Path, depth: int) -> None:
    path = deep_file(tmp_path, depth)
    metadata = dra_metadata.read_metadata_file(path)
    again = dra_metadata.read_metadata_file(path)
    assert metadata == again
    assert hash(metadata) == hash(again)
    (entry,) = metadata.metadata.managed_fields
    (tmp_path / "other").mkdir()
    other = deep_file(tmp_path / "other", depth, '{"f:b": {}}')
    different = dra_metadata.read_metadata_file(other)
    assert different != metadata  # the innermost object differs
    assert entry != different.metadata.managed_fields[0]
    shown = repr(metadata)  # the same text as repr of the value where that does not recurse
    assert f"fields_v1={nested(depth)}".replace('"', "'").replace(":{", ": {") in shown
    assert repr(entry) == f"ManagedFieldsEntry(manager='m', fields_v1={json_repr(entry.fields_v1)})"


@pytest.mark.parametrize(
    "value",
    [
        None, 1, 1.5, "a'b", True, [], {}, [1, [2, [3]], {}], {"f:a": {"f:b": [None, "x"]}},
        {"k": [{"a": 1}, {"b": [True, False]}], "z": {}},
    ],
)  # fmt: skip
def test_kept_json_is_shown_as_repr_shows_it(value: object) -> None:
    assert json_repr(value) == repr(value)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("change", ["function", "devices"])
def test_an_update_names_the_file_and_leaves_it_as_it_was(
    tmp_path: Path, depth: int, change: str
) -> None:
    path = deep_file(tmp_path, depth)
    before = path.read_bytes()
    argument = (
        (lambda current: current)
        if change == "function"
        else [Device(driver="gpu.example.com", pool="p", name="gpu-1")]
    )
    with pytest.raises(MetadataEncodeError) as raised:
        update_metadata_file(path, argument)
    error = raised.value
    assert error.path == path
    assert error.field == "metadata.managedFields[0].fieldsV1"
    assert f"it nests {depth} levels deep" in error.reason
    assert str(error).startswith(f"{path}: cannot encode metadata.managedFields[0].fieldsV1: ")
    assert path.read_bytes() == before
    assert sorted(item.name for item in tmp_path.iterdir()) == [path.name]  # no temporary left


@pytest.mark.parametrize("depth", [1000, 9990])
def test_encoding_and_writing_raise_the_documented_error(tmp_path: Path, depth: int) -> None:
    metadata = dra_metadata.read_metadata_file(deep_file(tmp_path, depth))
    for encode in (encode_stream, lambda m: m.to_wire()):
        with pytest.raises(MetadataEncodeError) as raised:
            encode(metadata)
        assert raised.value.field == "metadata.managedFields[0].fieldsV1"
        assert raised.value.path is None
    target = tmp_path / "out" / "gpu.example.com-metadata.json"
    with pytest.raises(MetadataEncodeError) as raised:
        write_metadata_file(target, metadata)
    assert raised.value.path == target
    assert not target.exists()


def test_a_file_just_shallow_enough_is_updated(tmp_path: Path) -> None:
    path = deep_file(tmp_path, 240)
    updated = update_metadata_file(path, lambda current: current)
    assert updated.generation == 2
    reread = dra_metadata.read_metadata_file(path)
    assert reread.metadata.managed_fields == updated.metadata.managed_fields


def test_an_unencodable_value_deep_inside_is_located_without_recursion() -> None:
    value: object = "\ud800"  # a lone surrogate, which JSON cannot hold
    for _ in range(200):
        value = {"f:a": value}
    entry = dra_metadata.ManagedFieldsEntry(manager="m", fields_v1=value)
    metadata = dra_metadata.DeviceMetadata(metadata=dra_metadata.ObjectMeta(managed_fields=[entry]))
    with pytest.raises(MetadataEncodeError) as raised:
        encode_stream(metadata)
    assert raised.value.field == "metadata.managedFields[0].fieldsV1" + "[f:a]" * 200
    assert "surrogates not allowed" in raised.value.reason


def test_deep_kept_json_built_by_hand_compares_without_recursion() -> None:
    one: object = {}
    other: object = {}
    for _ in range(5000):
        one, other = {"f:a": one}, {"f:a": other}
    first = dra_metadata.ManagedFieldsEntry(manager="m", fields_v1=one)
    second = dataclasses.replace(first, fields_v1=other)
    assert first == second
    assert hash(first) == hash(second)
    third = dataclasses.replace(first, fields_v1=[one])
    assert first != third
