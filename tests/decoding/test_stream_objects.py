"""Which objects of a stream are read, skipped or fatal, and what decode_stream accepts.

Unknown versions with another kind, fatal objects in a file (the error names it), long streams,
runs of small objects read at once, and the types of data decode_stream takes. Only the public
API is used, so that rewrites of the decoder keep these tests valid.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_metadata import (
    MetadataDecodeError,
    NoCompatibleVersionError,
    NoMetadataError,
    decode_stream,
    read_metadata_file,
)
from dra_metadata._decoding import _decode as decode_module

from helpers import V1ALPHA1, V1BETA1, outcome, stream, wire_object


def decode_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    return info.value


class TestUnknownVersionWithAnotherKind:
    """An object of an unknown version is skipped whatever its kind (spec §4.1, step 3)."""

    def test_skipped_before_a_known_object(self) -> None:
        other = {"apiVersion": "metadata.resource.k8s.io/v2", "kind": "DeviceMetadataList"}
        result = decode_stream(stream(other, wire_object(V1BETA1)))
        assert result.skipped_versions == ("metadata.resource.k8s.io/v2",)
        assert result.api_version == V1BETA1
        assert result.metadata.name == "my-claim"

    def test_only_such_objects(self) -> None:
        data = stream(
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
            {"apiVersion": "example.com/v1", "kind": "DeviceMetadata"},
            {"apiVersion": "v1", "kind": "ConfigMap"},
        )
        with pytest.raises(NoCompatibleVersionError) as info:
            decode_stream(data)
        error = info.value
        assert isinstance(error, MetadataDecodeError)
        assert error.unknown_versions == ("example.com/v1", "example.com/v1", "v1")
        assert str(error).startswith(
            "no compatible metadata version found in stream "
            "(unknown versions: example.com/v1, example.com/v1, v1)"
        )
        assert V1BETA1 in str(error)
        assert V1ALPHA1 in str(error)
        assert error.path is None

    def test_an_unknown_version_without_kind_is_fatal(self) -> None:
        error = decode_error(stream({"apiVersion": "example.com/v1"}, wire_object()))
        assert type(error) is MetadataDecodeError
        assert error.object_index == 1
        assert error.api_version == "example.com/v1"
        assert str(error) == 'decode example.com/v1: object 1 has no "kind"'

    def test_a_known_version_with_another_kind_is_fatal(self) -> None:
        other = {"apiVersion": "example.com/v1", "kind": "Widget"}
        error = decode_error(stream(other, wire_object(V1BETA1, kind="DeviceMetadataList")))
        assert error.object_index == 2
        assert error.api_version == V1BETA1
        assert error.field is None
        assert str(error) == (
            f'decode {V1BETA1}: object 2 has kind "DeviceMetadataList"; '
            "the only kind of this version is DeviceMetadata"
        )


FATAL_OBJECTS = [
    # data, the error's type, api_version, the message after "<path>: "
    (
        b"[]",
        MetadataDecodeError,
        None,
        "decode metadata object: object 1 is an array, not a JSON object",
    ),
    (
        b'{"kind": 7, "apiVersion": "example.com/v1"}',
        MetadataDecodeError,
        None,
        'decode metadata object: object 1 has a "kind" that is the number 7, not a string',
    ),
    (
        b'{"kind": "DeviceMetadata", "apiVersion": ["v1"]}',
        MetadataDecodeError,
        None,
        'decode metadata object: object 1 has an "apiVersion" that is an array, not a string',
    ),
    (
        b'{"apiVersion": "a/b/c"}',
        MetadataDecodeError,
        None,
        'decode metadata object: object 1 has no "kind"',
    ),
    (
        b'{"kind": "DeviceMetadata", "apiVersion": "a/b/c"}',
        MetadataDecodeError,
        None,
        'decode metadata object: object 1 has no usable "apiVersion": ',
    ),
    (
        b'{"apiVersion": "example.com/v1", "kind": ""}',
        MetadataDecodeError,
        "example.com/v1",
        'decode example.com/v1: object 1 has no "kind"',
    ),
    (
        b'{"apiVersion": "metadata.resource.k8s.io/v1beta1", "kind": "Other"}',
        MetadataDecodeError,
        V1BETA1,
        (
            f'decode {V1BETA1}: object 1 has kind "Other"; the only kind of this version is '
            "DeviceMetadata"
        ),
    ),
    (
        (
            b'{"apiVersion": "metadata.resource.k8s.io/v1beta1", "kind": "DeviceMetadata", '
            b'"requests": 5}'
        ),
        MetadataDecodeError,
        V1BETA1,
        f"decode {V1BETA1}: object 1, field requests: expected an array, got the number 5",
    ),
    (
        b'{"apiVersion": "example.com/v1", "kind": "DeviceMetadata"}',
        NoCompatibleVersionError,
        None,
        (
            "no compatible metadata version found in stream (unknown versions: example.com/v1); "
            f"this library reads {V1BETA1}, {V1ALPHA1}"
        ),
    ),
    (
        b" \n\t ",
        NoMetadataError,
        None,
        (
            "no metadata objects found in stream: it is empty or holds only whitespace "
            "(a file may be in the middle of being written)"
        ),
    ),
]


class TestFatalObjectsInAFile:
    """Every error of the decoder names the file it read, and says what is wrong."""

    @pytest.mark.parametrize(("data", "kind", "api_version", "message"), FATAL_OBJECTS)
    def test_the_error_names_the_file(
        self, tmp_path: Path, data: bytes, kind: type, api_version: str | None, message: str
    ) -> None:
        path = tmp_path / "a-metadata.json"
        path.write_bytes(data)
        with pytest.raises(MetadataDecodeError) as info:
            read_metadata_file(path)
        error = info.value
        assert type(error) is kind
        assert error.path == path
        assert error.api_version == api_version
        assert error.truncated is False
        if kind is MetadataDecodeError:
            assert error.object_index == 1
        assert str(error).startswith(f"{path}: {message}")
        assert str(error) == f"{path}: {decode_error_message(data)}"


def decode_error_message(data: bytes) -> str:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    assert info.value.path is None
    return str(info.value)


class TestLongStreams:
    """Objects far apart: the end of each object is found wherever it is in the stream."""

    @pytest.mark.parametrize("indent", [False, True], ids=["compact", "indented"])
    @pytest.mark.parametrize("older", [False, True], ids=["two", "three"])
    def test_a_large_unknown_object_before_a_larger_known_one(
        self, indent: bool, older: bool
    ) -> None:
        objects = [
            {"apiVersion": "example.com/v2", "kind": "DeviceMetadata", "x": "u" * 1000},
            wire_object(V1BETA1, podClaimName="k" * 3000),
        ]
        if older:
            objects.append(wire_object(V1ALPHA1, podClaimName="o" * 3000))
        option = orjson.OPT_INDENT_2 if indent else 0
        data = b"\n".join(orjson.dumps(obj, option=option) for obj in objects)
        result = decode_stream(data + b"\n")
        assert result.skipped_versions == ("example.com/v2",)
        assert result.api_version == V1BETA1
        assert result.metadata.pod_claim_name == "k" * 3000


class TestDecodeStreamArguments:
    def test_strict_validation_is_stricter(self) -> None:
        obj = wire_object()
        obj["requests"][0]["devices"][0]["attributes"] = {"not a name": {"int": 1}}
        assert decode_stream(stream(obj), validate=True).errors == ()
        (error,) = decode_stream(stream(obj), validate="strict").errors
        assert error.path == "requests[0].devices[0].attributes[not a name]"

    @pytest.mark.parametrize(("data", "name"), [(12, "int"), (None, "NoneType"), ([1], "list")])
    def test_data_of_another_type(self, data: object, name: str) -> None:
        with pytest.raises(TypeError) as info:
            decode_stream(data)  # type: ignore[arg-type]
        assert str(info.value) == f"data must be bytes (or bytes-like) or str, not {name}"


RUN_OBJECTS = [
    b'{"kind":"K","apiVersion":"x/v1"}',
    b'{"apiVersion":"x/v2","kind":"K"}',
    b'{"kind":"K","apiVersion":"v1"}',
    b'{"kind":"K","apiVersion":"/v3"}',
    b'{"kind":"K","apiVersion":"a/b/c"}',
    b'{"kind":"K","apiVersion":"x/"}',
    b'{"kind":"K","apiVersion":""}',
    b'{"kind":"K","apiVersion":"/"}',
    b'{"kind":"K"}',
    b'{"apiVersion":"x/v1"}',
    b'{"kind":"","apiVersion":"x/v1"}',
    b'{"kind":null,"apiVersion":"x/v1"}',
    b'{"kind":7,"apiVersion":"x/v1"}',
    b'{"kind":"K","apiVersion":7}',
    b'{"kind":["K"],"apiVersion":"x/v1"}',
    b'{"kind":"K","apiVersion":"x/v1","extra":1}',
    b'{"kind":"K","apiVersion":"x/v1","s":"} {"}',
    b'{"kind":"K","apiVersion":"x}{v1"}',
    b'{"kind":"K{","apiVersion":"x/v1"}',
    b'{"kind":"K","apiVersion":"x/v1","n":[1,{}]}',
    b'{"kind":"K","apiVersion":"x/v1","o":{}}',
    b'{"kind":"K","apiVersion":"x/v1","Kind":"Z"}',
    b'{"KIND":"K","apiVersion":"x/v1"}',
    b'{"kind":"K","apiVersion":"x/\xff"}',
    b'{"kind":"K","apiVersion":"x/\\ud800"}',
    b'{"kind":"K","apiVersion":"x/v1","kind":"L"}',
    b'{"kind":"DeviceMetadata","apiVersion":"metadata.resource.k8s.io/v1beta1"}',
    b'{"kind":"DeviceMetadata","apiVersion":"metadata.resource.k8s.io/v1alpha1","podClaimName":"p"}',
    b'{"kind":"DeviceMetadata","apiVersion":"metadata.resource.k8s.io/v1alpha1","podClaimName":5}',
    b'{"kind":"Other","apiVersion":"metadata.resource.k8s.io/v1alpha1"}',
    b'{"kind":"DeviceMetadata","apiVersion":"metadata.resource.k8s.io/v1alpha1","requests":7}',
    b'{"kind":"K","apiVersion":"x/v1"',
    b"{}",
    b"[]",
    b"[1]",
    b"5",
    b'"s"',
    b"null",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(RUN_OBJECTS), min_size=1, max_size=30),
    st.integers(0, 30),
    st.sampled_from([b"", b"\n", b" ", b"\r\n", b"\t \n"]),
    st.sampled_from([b"", b"\n", b"}", b"]", b"{ broken", b"\n\n"]),
)
def test_runs_of_small_objects_read_at_once_as_one_by_one(
    objects: list[bytes], plain: int, separator: bytes, tail: bytes
) -> None:
    # After eight skipped objects the rest of a run of small objects is parsed in one go; what
    # a caller sees must be exactly what reading them one by one gives.
    data = separator.join([RUN_OBJECTS[0]] * plain + objects) + tail
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decode_module, "_AT_ONCE_AFTER", -1)  # never at once
        one_by_one = outcome(data)
    assert outcome(data) == one_by_one


class _Bytes(bytes):
    pass


@pytest.mark.parametrize("kind", [_Bytes, bytearray, memoryview])
def test_bytes_like_data(kind: Callable[[bytes], object]) -> None:
    data = stream(wire_object())
    result = decode_stream(kind(data))  # type: ignore[arg-type]
    assert result.metadata == decode_stream(data).metadata


@pytest.mark.parametrize(("data", "name"), [(5, "int"), (None, "NoneType"), ([b"{}"], "list")])
def test_data_of_another_type(data: object, name: str) -> None:
    with pytest.raises(TypeError) as info:
        decode_stream(data)  # type: ignore[arg-type]
    assert str(info.value) == f"data must be bytes (or bytes-like) or str, not {name}"


def test_exactly_ten_unknown_versions_are_all_named() -> None:
    data = b"".join(b'{"kind":"K","apiVersion":"x/v%d"}' % index for index in range(10))
    with pytest.raises(NoCompatibleVersionError) as info:
        decode_stream(data)
    versions = ", ".join(f"x/v{index}" for index in range(10))
    assert str(info.value).startswith(
        f"no compatible metadata version found in stream (unknown versions: {versions}); "
    )


SKIPPED_RUN = b'{"kind":"K","apiVersion":"x/v1"}\n' * 12
WRONG_NUMBER = "expected a string, got the number 5"
WHERE_IN_THE_RUN = [
    pytest.param(b"", id="last"),
    pytest.param(b"\n" + SKIPPED_RUN[: len(SKIPPED_RUN) // 2], id="inside the run"),
]


@pytest.mark.parametrize(
    ("last", "message", "field"),
    [
        (b'{"apiVersion":"x/v1"}', 'decode x/v1: object 13 has no "kind"', None),
        (b'{"apiVersion":"x/\xff"}', 'decode x/\ufffd: object 13 has no "kind"', None),
        (
            b'{"kind":"DeviceMetadata","apiVersion":"%s","podClaimName":5}' % V1ALPHA1.encode(),
            f"decode {V1ALPHA1}: object 13, field podClaimName: {WRONG_NUMBER}",
            "podClaimName",
        ),
    ],
)
@pytest.mark.parametrize("after", WHERE_IN_THE_RUN)
def test_a_file_s_errors_name_it_after_a_run_of_small_objects(
    tmp_path: Path, last: bytes, message: str, field: str | None, after: bytes
) -> None:
    path = tmp_path / "a-metadata.json"
    path.write_bytes(SKIPPED_RUN + last + after)
    with pytest.raises(MetadataDecodeError) as info:
        read_metadata_file(path)
    assert (info.value.path, info.value.object_index, info.value.field) == (path, 13, field)
    assert str(info.value) == f"{path}: {message}"


@pytest.mark.parametrize("after", WHERE_IN_THE_RUN)
def test_a_known_object_after_a_run_of_small_objects(after: bytes) -> None:
    last = b'{"kind":"DeviceMetadata","apiVersion":"%s","podClaimName":"p"}' % V1ALPHA1.encode()
    result = decode_stream(SKIPPED_RUN + last + after)
    assert (result.api_version, result.skipped_versions) == (V1ALPHA1, ("x/v1",) * 12)
    assert result.metadata.pod_claim_name == "p"
    assert result.metadata.api_version == V1ALPHA1
    assert result.errors == ()
    assert decode_stream(SKIPPED_RUN + last + after, validate=True).errors == ()
