"""No input makes decoding or reading raise anything but the documented errors.

Hypothesis feeds arbitrary bytes and real streams that were mutated (bytes flipped, cut, values
of every JSON type spliced in at every position of an attribute, a device, a request and the
metadata) to decode_stream, on the fast and the exact path, and to the readers; inputs that once broke them
are named regression tests.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_metadata import (
    DecodeResult,
    DeviceMetadataError,
    MetadataDecodeError,
    NoCompatibleVersionError,
    decode_stream,
    read_claim_metadata,
    read_metadata_file,
    resource_claim_request_dir,
    strategies,
)
from dra_metadata.writer import encode_stream

from helpers import V1ALPHA1, compact, read_every_object_exactly, stream, wire_object

GENEROUS = 30.0
"""Seconds: far above what a linear decoder needs, far below the quadratic one (10 minutes)."""

# Values of every JSON type, and literals orjson cannot write (or read) that Go accepts somewhere.
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)
ODD_LITERALS = st.sampled_from(
    [
        b"1e400",
        b"-" + b"9" * 400,
        b'"\\ud800"',
        b'"\xff\xfe"',
        b'"\xe2\x82"',
        b"[" * 1100 + b"]" * 1100,
        b'{"a":1,"a":{"b":null},"a":[2]}',
        b'"2008-01-02T3:04:05,5+24:00"',
        b"-0",
        b"18446744073709551615",
    ]
)
FIELDS = {
    "top": ["kind", "apiVersion", "metadata", "podClaimName", "requests", "Kind", "APIVERSION"],
    "metadata": [
        "name",
        "namespace",
        "uid",
        "generation",
        "labels",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "ownerReferences",
        "finalizers",
        "managedFields",
    ],
    "request": ["name", "devices"],
    "device": ["driver", "pool", "name", "attributes", "networkData"],
    "attributes": ["model", "index", "gpu.example.com/uuid"],
    "attribute": ["int", "bool", "string", "version", "ints", "bools", "strings", "versions"],
    "networkData": ["interfaceName", "ips", "hardwareAddress"],
}
PLACEHOLDER = "\x00spliced\x00"


def containers(wire: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of a wire object that has a schema, with the name of its kind."""
    yield "top", wire
    if isinstance(wire.get("metadata"), dict):
        yield "metadata", wire["metadata"]
    for request in wire.get("requests") or ():
        yield "request", request
        for device in request.get("devices") or ():
            yield "device", device
            attributes = device.get("attributes")
            if attributes:
                yield "attributes", attributes
                for attribute in attributes.values():
                    yield "attribute", attribute
            if device.get("networkData"):
                yield "networkData", device["networkData"]


@st.composite
def spliced_streams(draw: st.DrawFn) -> bytes:
    """A real stream whose first object got a value of any JSON type at some position."""
    generated = draw(strategies.metadata_streams(unknown_versions=False, compact=True))
    data = encode_stream(generated.metadata)
    wire = orjson.loads(data[: data.index(b"\n}\n") + 2])
    kind, target = draw(st.sampled_from(list(containers(wire))))
    key = draw(st.sampled_from(sorted({*FIELDS[kind], *target})))
    odd = draw(st.none() | ODD_LITERALS)
    target[key] = PLACEHOLDER if odd is not None else draw(JSON_VALUES)
    spliced = orjson.dumps(wire)
    if odd is not None:
        spliced = spliced.replace(orjson.dumps(PLACEHOLDER), odd)
    return spliced + b"\n" + data


@st.composite
def mutated_streams(draw: st.DrawFn) -> bytes:
    """A real stream with a few bytes flipped, inserted or removed, or cut short."""
    data = bytearray(draw(strategies.metadata_streams()).data)
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        position = draw(st.integers(0, len(data) - 1))
        operation = draw(st.sampled_from(["flip", "insert", "delete", "cut"]))
        if operation == "flip":
            data[position] = draw(st.integers(0, 255))
        elif operation == "insert":
            data[position:position] = draw(
                st.sampled_from([b"\xff", b"{", b"}", b'"', b",", b"1e400"])
            )
        elif operation == "delete":
            del data[position : position + draw(st.integers(1, 8))]
        else:
            del data[position:]
    return bytes(data)


def decodes_or_refuses(data: bytes) -> DecodeResult | MetadataDecodeError:
    try:
        return decode_stream(data)
    except MetadataDecodeError as error:
        return error


def decoded_exactly(data: bytes) -> DecodeResult | MetadataDecodeError:
    with pytest.MonkeyPatch.context() as patch:
        read_every_object_exactly(patch)
        return decodes_or_refuses(data)


def same_outcome(fast: object, exact: object) -> bool:
    if isinstance(fast, DecodeResult) and isinstance(exact, DecodeResult):
        return (fast.metadata, fast.api_version, fast.skipped_versions) == (
            exact.metadata,
            exact.api_version,
            exact.skipped_versions,
        )
    return (
        type(fast) is type(exact)
        and getattr(fast, "object_index", None) == getattr(exact, "object_index", None)
        and getattr(fast, "api_version", None) == getattr(exact, "api_version", None)
    )


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes(data: bytes) -> None:
    decodes_or_refuses(data)
    decoded_exactly(data)


@SETTINGS
@given(mutated_streams())
def test_mutated_streams(data: bytes) -> None:
    decodes_or_refuses(data)
    decoded_exactly(data)


@SETTINGS
@given(spliced_streams())
def test_spliced_values_decode_alike_on_both_paths(data: bytes) -> None:
    # orjson writes no duplicate keys, so the fast path must agree with Go's semantics here.
    assert same_outcome(decodes_or_refuses(data), decoded_exactly(data))


PLAIN = b'{"kind":"K","apiVersion":"x/v1"}'
SMALL_OBJECTS = st.sampled_from(
    [
        *[PLAIN] * 14,  # mostly runs that can be read at once, then something else
        b'{"apiVersion":"x/v2","kind":"K","s":"} {"}',
        b'{"kind":"K","apiVersion":"a}{b"}',
        b'{"kind":"K","apiVersion":"x/v1","n":[1,{}]}',
        b'{"kind":"K","apiVersion":"x/v1","Kind":"Z"}',
        b'{"kind":"","apiVersion":"x/v1"}',
        b'{"kind":null,"apiVersion":"v1"}',
        b'{"kind":"K","apiVersion":1}',
        b'{"kind":"K","apiVersion":"x/\xff"}',
        b'{"kind":"DeviceMetadata","apiVersion":"metadata.resource.k8s.io/v1beta1"}',
        b"5",
        b"{",
        b",",
        b"]",
    ]
)


@SETTINGS
@given(
    st.lists(SMALL_OBJECTS, min_size=9, max_size=40),
    st.sampled_from([b"", b"\n", b" ", b"\r\n"]),
    st.integers(0, 40),
)
def test_many_small_objects_decode_alike_on_both_paths(
    pieces: list[bytes], separator: bytes, plain: int
) -> None:
    # Runs of small objects are parsed at once where it provably splits as Go's reader does.
    data = separator.join([PLAIN] * plain + pieces)
    assert same_outcome(decodes_or_refuses(data), decoded_exactly(data))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(spliced_streams(), mutated_streams(), st.binary(max_size=200)))
def test_readers(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    root = tmp_path_factory.mktemp("root")
    directory = resource_claim_request_dir("claim", "request", root=root)
    directory.mkdir(parents=True)
    (directory / "a.example.com-metadata.json").write_bytes(stream(wire_object()))
    (directory / "b.example.com-metadata.json").write_bytes(data)
    with contextlib.suppress(DeviceMetadataError):
        read_metadata_file(directory / "b.example.com-metadata.json")
    with contextlib.suppress(DeviceMetadataError):
        read_claim_metadata("claim", "request", root=root)
    with contextlib.suppress(DeviceMetadataError):
        read_claim_metadata("claim", "request", root=root, validate="strict")


class TestReportedCases:
    @pytest.mark.parametrize("value", ["[5]", "[true]", "[0]", '"x"', "5", "[{}]"])
    def test_an_attribute_that_is_no_object(self, value: str) -> None:
        # Was a bare IndexError from the bulk check when every other attribute had one member.
        device = {"driver": "d", "pool": "p", "name": "n", "attributes": {"ok": {"int": 1}}}
        obj = wire_object(requests=[{"name": "r", "devices": [device]}])
        data = compact(obj).replace(b'"ok":', b'"a":' + value.encode() + b',"ok":')
        with pytest.raises(MetadataDecodeError, match="expected an object") as info:
            decode_stream(data)
        assert info.value.field == "requests[0].devices[0].attributes[a]"

    def test_125000_unknown_objects_take_linear_time(self) -> None:
        # Was about 10 minutes: every skipped object parsed and checked the rest of the buffer.
        data = b'{"kind":"K","apiVersion":"x/v1"}' * 125_000
        assert len(data) == 4_000_000
        start = time.monotonic()
        with pytest.raises(NoCompatibleVersionError) as info:
            decode_stream(data)
        assert time.monotonic() - start < GENEROUS
        assert len(info.value.unknown_versions) == 125_000
        assert "x/v1, and 124990 more)" in str(info.value)

    @pytest.mark.parametrize("last", [b'"note":"\xc3\xa9"', b'"note":"\xe9"', b'"\xc3\xa9":1'])
    def test_a_megabyte_with_one_non_ascii_character_at_the_end(self, last: bytes) -> None:
        # Was 19 s: each object checked the rest of the buffer for non-ASCII bytes.
        small = b'{"kind":"K","apiVersion":"x/v1"}\n'
        data = small * (1_000_000 // len(small)) + b'{"kind":"K","apiVersion":"x/v2",' + last
        data += b"}\n" + compact(wire_object())
        start = time.monotonic()
        result = decode_stream(data)
        assert time.monotonic() - start < GENEROUS
        assert result.skipped_versions[-2:] == ("x/v1", "x/v2")
        assert result.api_version == V1ALPHA1

    def test_a_megabyte_then_garbage(self) -> None:
        small = b'{"kind":"K","apiVersion":"x/v1"}\n'
        data = small * (1_000_000 // len(small)) + "é".encode()
        start = time.monotonic()
        with pytest.raises(MetadataDecodeError, match="invalid character 'Ã'") as info:
            decode_stream(data)
        assert time.monotonic() - start < GENEROUS
        assert info.value.object_index == 1_000_000 // len(small) + 1


def test_readers_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x-metadata.json"
    path.write_bytes(b'{"kind":"DeviceMetadata","apiVersion":"' + V1ALPHA1.encode() + b'","x":[')
    with pytest.raises(MetadataDecodeError) as info:
        read_metadata_file(path)
    assert info.value.path == path
    assert info.value.truncated
