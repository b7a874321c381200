"""Writer and decoder are inverses: upstream fixtures byte for byte, generated objects as values."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from dra_metadata import decode_stream, strategies
from dra_metadata.writer import encode_stream

from conftest import SHARED_UPSTREAM, UPSTREAM
from helpers import V1ALPHA1, V1BETA1


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


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
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
