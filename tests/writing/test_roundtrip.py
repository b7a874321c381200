"""Writer and decoder are inverses: upstream fixtures byte for byte, generated objects as values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from dra_metadata import decode_stream, strategies
from dra_metadata.writer import encode_stream

from helpers import SHARED_UPSTREAM, UPSTREAM, V1ALPHA1, V1BETA1


@pytest.mark.parametrize(
    ("fixture", "versions"),
    [("HEAD", (V1BETA1, V1ALPHA1)), ("v1.36.0", (V1ALPHA1,))],
)
def test_upstream_fixtures_round_trip_byte_for_byte(
    fixture: str, versions: tuple[str, ...]
) -> None:
    data = (UPSTREAM / fixture / "metadata.json").read_bytes()
    assert encode_stream(decode_stream(data).metadata, versions=versions) == data


def test_every_fixture_directory_is_covered() -> None:
    # Upstream adds a directory per release (copied from HEAD); each must decode and round-trip.
    for directory in sorted(UPSTREAM.iterdir()):
        if not directory.is_dir():
            continue
        assert [path.name for path in directory.iterdir()] == ["metadata.json"]
        data = (directory / "metadata.json").read_bytes()
        chunks = data.split(b"\n}\n")[:-1]
        versions = [decode_stream(chunk + b"\n}\n").api_version for chunk in chunks]
        assert encode_stream(decode_stream(data).metadata, versions=versions) == data


@pytest.mark.skipif(not SHARED_UPSTREAM.is_dir(), reason="shared/ is not beside the repository")
def test_vendored_fixtures_match_shared() -> None:
    for fixture in SHARED_UPSTREAM.glob("*/metadata.json"):
        vendored = UPSTREAM / fixture.relative_to(SHARED_UPSTREAM)
        assert vendored.read_bytes() == fixture.read_bytes(), f"{vendored} drifted"


@settings(max_examples=150)
@given(strategies.metadata_streams(strategies.device_metadata(full_object_meta=True)))
def test_any_stream_decodes_to_what_was_written(stream: strategies.MetadataStream) -> None:
    result = decode_stream(stream.data)
    assert result.metadata == stream.metadata
    assert result.api_version == stream.metadata.api_version
    assert result.skipped_versions == stream.skipped_versions


@settings(max_examples=100)
@given(strategies.device_metadata(full_object_meta=True))
def test_encode_decode_encode_is_stable(metadata: object) -> None:
    from dra_metadata import DeviceMetadata  # noqa: PLC0415

    assert isinstance(metadata, DeviceMetadata)
    data = encode_stream(metadata)
    assert encode_stream(decode_stream(data).metadata) == data


def _sorted_map_keys_everywhere(wire: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Each Go map of an encoded object (labels, annotations, attributes) with its key order."""
    maps = [
        ("labels", wire["metadata"].get("labels", {})),
        ("annotations", wire["metadata"].get("annotations", {})),
    ]
    maps += [
        (f"{request['name']}/{device['name']}", device.get("attributes", {}))
        for request in wire.get("requests", [])
        for device in request.get("devices", [])
    ]
    return [(name, list(keys)) for name, keys in maps]


@settings(max_examples=150)
@given(strategies.device_metadata(full_object_meta=True))
def test_maps_come_out_sorted_and_laid_out_as_go_does(metadata: object) -> None:
    # Hypothesis builds maps in any key order; Go writes every map with sorted keys, and
    # decoded maps keep the file's order, so both the built and the decoded object are checked.
    from dra_metadata import DeviceMetadata  # noqa: PLC0415

    assert isinstance(metadata, DeviceMetadata)
    for source in (metadata, decode_stream(encode_stream(metadata, versions=[V1ALPHA1])).metadata):
        data = encode_stream(source, versions=[V1BETA1])
        wire = json.loads(data)
        for name, keys in _sorted_map_keys_everywhere(wire):
            assert keys == sorted(keys), name
        text = json.dumps(wire, indent=2, ensure_ascii=False) + "\n"
        for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
            text = text.replace(raw, escaped)
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
        assert data == text.encode()


def test_decoded_maps_in_any_key_order_are_sorted() -> None:
    # A writer other than Go's may leave keys unsorted, in some devices only: a device with the
    # same names as a sorted one, but in another order, must not pass for sorted.
    def device(name: str, keys: str) -> dict[str, Any]:
        attributes = {key: {"int": index} for index, key in enumerate(keys)}
        return {"driver": "d", "pool": "p", "name": name, "attributes": attributes}

    written = {
        "kind": "DeviceMetadata",
        "apiVersion": V1BETA1,
        "metadata": {"name": "c", "labels": {"z": "1", "a": "2"}},
        "requests": [
            {
                "name": "r",
                "devices": [
                    device("0", "abc"),
                    device("1", "bac"),
                    device("2", "abc"),
                    device("3", "cba"),
                    device("4", "ab"),
                ],
            }
        ],
    }
    data = encode_stream(decode_stream(json.dumps(written).encode()).metadata)
    wire = json.loads(data.split(b"\n}\n")[0] + b"\n}")
    assert _sorted_map_keys_everywhere(wire) == [
        ("labels", ["a", "z"]),
        ("annotations", []),
        ("r/0", ["a", "b", "c"]),
        ("r/1", ["a", "b", "c"]),
        ("r/2", ["a", "b", "c"]),
        ("r/3", ["a", "b", "c"]),
        ("r/4", ["a", "b"]),
    ]
    assert wire["requests"][0]["devices"][1]["attributes"] == {
        "a": {"int": 1},
        "b": {"int": 0},
        "c": {"int": 2},
    }


def test_go_escaping() -> None:
    from dra_metadata import DeviceMetadata, ObjectMeta  # noqa: PLC0415

    metadata = DeviceMetadata(
        metadata=ObjectMeta(name="a<b>&c\u2028\u2029é\x01\n"), pod_claim_name=""
    )
    data = encode_stream(metadata, versions=[V1ALPHA1])
    assert b'"name": "a\\u003cb\\u003e\\u0026c\\u2028\\u2029\xc3\xa9\\u0001\\n"' in data
    assert b'"podClaimName": ""' in data  # set but empty is written (a pointer in Go)
    assert decode_stream(data).metadata.metadata.name == "a<b>&c\u2028\u2029é\x01\n"


def test_minimal_object_layout(tmp_path: Path) -> None:
    from dra_metadata import Device, DeviceMetadata, DeviceMetadataRequest, ObjectMeta  # noqa: PLC0415

    metadata = DeviceMetadata(
        metadata=ObjectMeta(name="c", namespace="ns", uid="u", generation=1),
        requests=[
            DeviceMetadataRequest(name="r", devices=[Device(driver="d", pool="p", name="n")])
        ],
    )
    assert encode_stream(metadata, versions=[V1BETA1]) == (
        b'{\n  "kind": "DeviceMetadata",\n  "apiVersion": "metadata.resource.k8s.io/v1beta1",\n'
        b'  "metadata": {\n    "name": "c",\n    "namespace": "ns",\n    "uid": "u",\n'
        b'    "generation": 1\n  },\n  "requests": [\n    {\n      "name": "r",\n'
        b'      "devices": [\n        {\n          "driver": "d",\n          "pool": "p",\n'
        b'          "name": "n"\n        }\n      ]\n    }\n  ]\n}\n'
    )
    empty = encode_stream(DeviceMetadata(), versions=[V1ALPHA1])
    assert empty == (
        b'{\n  "kind": "DeviceMetadata",\n  "apiVersion": "metadata.resource.k8s.io/v1alpha1",\n'
        b'  "metadata": {}\n}\n'
    )


@pytest.mark.parametrize(
    ("versions", "message"),
    [
        ([], "none given"),
        (["metadata.resource.k8s.io/v99"], "not supported"),
        ([V1BETA1, V1BETA1], "must not repeat"),
    ],
)
def test_versions_are_checked(versions: list[str], message: str) -> None:
    from dra_metadata import DeviceMetadata  # noqa: PLC0415

    with pytest.raises(ValueError, match=message):
        encode_stream(DeviceMetadata(), versions=versions)


def test_arguments_of_the_wrong_type_are_refused() -> None:
    from dra_metadata import DeviceMetadata  # noqa: PLC0415

    with pytest.raises(TypeError, match="not a str: \\['metadata.resource.k8s.io/v1beta1'\\]"):
        encode_stream(DeviceMetadata(), versions=V1BETA1)
    for wrong in (None, {"kind": "DeviceMetadata"}):
        with pytest.raises(TypeError, match="metadata must be a DeviceMetadata, not"):
            encode_stream(wrong)  # type: ignore[arg-type]
