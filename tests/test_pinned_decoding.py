"""Decoding behaviours that no other test pinned (issue #18): found by mutation testing.

Only the public API is used, so that rewrites of the decoder keep these tests valid. Each error
is checked for its type, the key facts of its message and its attributes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_metadata import (
    MetadataDecodeError,
    NetworkDeviceData,
    NoCompatibleVersionError,
    NoMetadataError,
    decode_stream,
    read_metadata_file,
)
from dra_metadata._decoding import _decode as decode_module

from helpers import V1ALPHA1, V1BETA1, compact, outcome, stream, wire_object

TRUNCATED_HINT = "(the stream is truncated: the file may be in the middle of being written)"


def decode_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    return info.value


def with_device_field(field: str, value: object) -> dict[str, Any]:
    obj = wire_object()
    obj["requests"][0]["devices"][0][field] = value
    return obj


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


def creation_timestamp(value: str) -> datetime | None:
    obj = wire_object(metadata={"name": "x", "creationTimestamp": value})
    return decode_stream(stream(obj)).metadata.metadata.creation_timestamp


def utc(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=timezone.utc)  # type: ignore[misc]


class TestTimeFields:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("2008-01-01T01:01:01-07:30", utc(2008, 1, 1, 8, 31, 1)),
            ("2008-12-31T23:30:00-01:00", utc(2009, 1, 1, 0, 30, 0)),
            ("2008-01-01T00:30:00+01:00", utc(2007, 12, 31, 23, 30, 0)),
            ("2008-01-01T01:01:01+00:00", utc(2008, 1, 1, 1, 1, 1)),
            ("2008-01-01T01:01:01-00:00", utc(2008, 1, 1, 1, 1, 1)),
        ],
    )
    def test_utc_offsets(self, value: str, expected: datetime) -> None:
        parsed = creation_timestamp(value)
        assert parsed == expected
        assert parsed is not None
        assert parsed.utcoffset() is not None
        assert parsed.utcoffset().total_seconds() == 0  # type: ignore[union-attr]

    @pytest.mark.parametrize(
        ("fraction", "microseconds"),
        [
            ("1", 100000),
            ("12", 120000),
            ("123", 123000),
            ("1234", 123400),
            ("12345", 123450),
            ("123456", 123456),
            ("1234567", 123456),
            ("12345678", 123456),
            ("05", 50000),
            ("000001", 1),
            ("0", 0),
        ],
    )
    def test_fractions(self, fraction: str, microseconds: int) -> None:
        parsed = creation_timestamp(f"2008-01-01T01:01:01.{fraction}Z")
        assert parsed == utc(2008, 1, 1, 1, 1, 1, microseconds)

    def test_fractions_are_truncated_not_rounded(self) -> None:
        # Rounding .9999999 would carry into the next second, day and year.
        assert creation_timestamp("2008-12-31T23:59:59.9999999Z") == utc(
            2008, 12, 31, 23, 59, 59, 999999
        )

    def test_a_fraction_with_an_offset(self) -> None:
        assert creation_timestamp("2008-01-01T01:01:01.5-02:00") == utc(2008, 1, 1, 3, 1, 1, 500000)

    @pytest.mark.parametrize(
        "value",
        ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z", "0001-01-01T01:00:00+01:00"],
    )
    def test_go_zero_time_is_unset(self, value: str) -> None:
        meta = {
            "name": "x",
            "creationTimestamp": value,
            "deletionTimestamp": value,
            "managedFields": [{"manager": "m", "time": value}],
        }
        decoded = decode_stream(stream(wire_object(metadata=meta))).metadata.metadata
        assert decoded.creation_timestamp is None
        assert decoded.deletion_timestamp is None
        assert decoded.managed_fields[0].time is None
        assert decoded.managed_fields[0].manager == "m"

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("0001-01-01T00:00:01Z", utc(1, 1, 1, 0, 0, 1)),
            ("0001-01-01T00:00:00.000001Z", utc(1, 1, 1, 0, 0, 0, 1)),
            ("0001-01-02T00:00:00Z", utc(1, 1, 2)),
        ],
    )
    def test_just_after_the_zero_time_is_a_time(self, value: str, expected: datetime) -> None:
        assert creation_timestamp(value) == expected

    @pytest.mark.parametrize(
        "value", ["2008-01-01T01:01:01.Z", "2008-01-01T01:01:01+0100", "2008-02-30T01:01:01Z"]
    )
    def test_not_a_time(self, value: str) -> None:
        obj = wire_object(metadata={"name": "x", "managedFields": [{"time": value}]})
        error = decode_error(stream(obj))
        assert error.field == "metadata.managedFields[0].time"
        assert error.api_version == V1ALPHA1
        assert error.object_index == 1
        assert repr(value) in str(error)


class TestWrongJsonTypes:
    @pytest.mark.parametrize("field", ["driver", "pool", "name"])
    @pytest.mark.parametrize(
        ("value", "described"),
        [
            (5, "the number 5"),
            (1.5, "the number 1.5"),
            (True, "true"),
            (False, "false"),
            ([], "an array"),
            ({"a": 1}, "an object"),
        ],
    )
    def test_device_fields(self, field: str, value: object, described: str) -> None:
        error = decode_error(stream(with_device_field(field, value)))
        path = f"requests[0].devices[0].{field}"
        assert type(error) is MetadataDecodeError
        assert error.field == path
        assert error.api_version == V1ALPHA1
        assert error.object_index == 1
        assert error.truncated is False
        assert str(error) == (
            f"decode {V1ALPHA1}: object 1, field {path}: expected a string, got {described}"
        )

    @pytest.mark.parametrize(
        ("value", "shown"),
        [("x" * 40, "x" * 40), ("x" * 41, "x" * 37 + "..."), ("é" * 50, "é" * 37 + "...")],
    )
    def test_a_long_string_is_shown_shortened(self, value: str, shown: str) -> None:
        error = decode_error(stream(wire_object(metadata={"name": "n", "generation": value})))
        assert error.field == "metadata.generation"
        assert str(error).endswith(
            f"field metadata.generation: expected an integer in the int64 range, "
            f"got a string ({shown!r})"
        )

    def test_device_fields_of_a_later_device(self) -> None:
        obj = wire_object()
        request = obj["requests"][0]
        request["devices"].append({"driver": "d", "pool": "p", "name": 7})
        obj["requests"].append({"name": "second", "devices": [{"driver": "d", "pool": None}]})
        error = decode_error(stream(obj))
        assert error.field == "requests[0].devices[1].name"
        obj["requests"][0]["devices"][1]["name"] = "n"
        obj["requests"][1]["devices"][0]["pool"] = ["p"]
        assert decode_error(stream(obj)).field == "requests[1].devices[0].pool"

    @pytest.mark.parametrize("field", ["driver", "pool", "name"])
    def test_null_device_fields_are_empty(self, field: str) -> None:
        (device,) = decode_stream(stream(with_device_field(field, None))).metadata.devices
        assert getattr(device, field) == ""

    @pytest.mark.parametrize("field", ["name", "namespace", "uid"])
    @pytest.mark.parametrize(
        ("value", "described"),
        [(5, "the number 5"), (True, "true"), ([], "an array"), ({}, "an object")],
    )
    @pytest.mark.parametrize("other_keys", [{}, {"labels": {"a": "b"}}], ids=["few", "many"])
    def test_object_metadata_fields(
        self, field: str, value: object, described: str, other_keys: dict[str, object]
    ) -> None:
        meta = {"name": "n", "namespace": "ns", "uid": "u", "generation": 2, **other_keys}
        meta[field] = value
        error = decode_error(stream(wire_object(metadata=meta)))
        assert error.field == f"metadata.{field}"
        assert error.api_version == V1ALPHA1
        assert error.object_index == 1
        assert str(error) == (
            f"decode {V1ALPHA1}: object 1, field metadata.{field}: "
            f"expected a string, got {described}"
        )

    @pytest.mark.parametrize("other_keys", [{}, {"labels": {"a": "b"}}], ids=["few", "many"])
    def test_object_metadata_values(self, other_keys: dict[str, object]) -> None:
        meta = {"name": "n", "namespace": "ns", "uid": "u", "generation": 2, **other_keys}
        decoded = decode_stream(stream(wire_object(metadata=meta))).metadata
        assert (decoded.name, decoded.namespace, decoded.uid, decoded.generation) == (
            "n",
            "ns",
            "u",
            2,
        )
        assert dict(decoded.metadata.labels) == other_keys.get("labels", {})
        nulls = {"name": None, "namespace": None, "uid": None, "generation": None, **other_keys}
        decoded = decode_stream(stream(wire_object(metadata=nulls))).metadata
        assert (decoded.name, decoded.namespace, decoded.uid, decoded.generation) == ("", "", "", 0)

    def test_a_negative_generation(self) -> None:
        meta = {"name": "n", "generation": -3}
        assert decode_stream(stream(wire_object(metadata=meta))).metadata.generation == -3


def cut(data: bytes, character: str, keep: int) -> tuple[bytes, int]:
    """``data`` cut after ``keep`` bytes of the first ``character``; and where it starts."""
    start = data.index(character.encode())
    return data[: start + keep], start


class TestStreamCutInsideACharacter:
    @pytest.mark.parametrize(
        ("character", "keep"), [("ü", 1), ("✓", 1), ("✓", 2), ("🚀", 1), ("🚀", 3)]
    )
    def test_is_truncated_with_the_hint(self, character: str, keep: int) -> None:
        # The bytes of the cut character are a string's content, which Go takes whatever they
        # are: the stream ends inside the string, at its last byte (Go's offset).
        data, _ = cut(stream(wire_object(podClaimName=f"gr{character}ße")), character, keep)
        error = decode_error(data)
        assert error.truncated is True
        assert error.object_index == 1
        assert error.api_version is None
        assert error.field is None
        assert str(error) == (
            "read metadata object from stream: object 1: unexpected end of JSON input "
            f"at byte {len(data)} {TRUNCATED_HINT}"
        )

    def test_in_a_later_object(self) -> None:
        unknown = {"apiVersion": "example.com/v1", "kind": "Ünknown"}
        data, _ = cut(stream(unknown, wire_object(podClaimName="grüße")), "ü", 1)
        error = decode_error(data)
        assert error.truncated is True
        assert error.object_index == 2
        assert str(error) == (
            "read metadata object from stream: object 2: unexpected end of JSON input "
            f"at byte {len(data)} {TRUNCATED_HINT}"
        )

    def test_cut_just_after_a_character(self) -> None:
        data, _ = cut(stream(wire_object(podClaimName="grüße")), "ü", 2)
        error = decode_error(data)
        assert error.truncated is True
        assert f" at byte {len(data)} " in str(error)
        assert str(error).endswith(TRUNCATED_HINT)

    def test_an_invalid_byte_that_is_not_at_the_end_is_replaced(self) -> None:
        # Inside a string, each byte that is not part of valid UTF-8 becomes U+FFFD (spec §3.3).
        whole = stream(wire_object(podClaimName="grüße"))
        data, _ = cut(whole, "ü", 1)
        result = decode_stream(data + b"x" + whole[len(data) + 1 :])
        assert result.metadata.pod_claim_name == "gr\ufffdxße"  # ü (c3 bc) with x for bc
        assert result.api_version == V1ALPHA1

    @pytest.mark.parametrize(
        ("data", "offset"),
        [(b'{"kind": x}', 9), (b'{"kind": "DeviceMetadata" "apiVersion"}  ', 26)],
    )
    def test_a_syntax_error_is_not_truncation(self, data: bytes, offset: int) -> None:
        error = decode_error(data)
        assert error.truncated is False
        assert error.object_index == 1
        message = str(error)
        assert message.startswith("read metadata object from stream: object 1: ")
        assert message.endswith(f" at byte {offset}")

    def test_a_file_cut_inside_a_character(self, tmp_path: Path) -> None:
        data, _ = cut(stream(wire_object(podClaimName="grüße")), "ü", 1)
        path = tmp_path / "a-metadata.json"
        path.write_bytes(data)
        with pytest.raises(MetadataDecodeError) as info:
            read_metadata_file(path)
        assert info.value.truncated is True
        assert info.value.path == path
        assert str(info.value).startswith(f"{path}: read metadata object from stream: object 1:")
        assert str(info.value).endswith(TRUNCATED_HINT)


class TestValidateAttributesWithNullMembers:
    """A null member is unset (spec §3.3): next to one other member, the attribute is valid."""

    def decode(self, *attribute_maps: dict[str, Any], validate: Any = True) -> Any:
        devices = [
            {"driver": "d", "pool": "p", "name": f"dev-{index}", "attributes": attributes}
            for index, attributes in enumerate(attribute_maps)
        ]
        obj = wire_object(requests=[{"name": "gpu", "devices": devices}])
        return decode_stream(compact(obj), validate=validate)

    @pytest.mark.parametrize("validate", [True, "metadata", "strict"])
    def test_a_null_and_another_member_is_valid(self, validate: object) -> None:
        result = self.decode(
            {"a": {"int": None, "string": "x"}, "b": {"bool": True}},
            {"c": {"version": "1.2.3", "ints": None, "bools": None}},
            validate=validate,
        )
        assert result.errors == ()
        first, second = result.metadata.devices
        assert first.attributes["a"].members == ("string",)
        assert first.attribute("a") == "x"
        assert first.attribute("b") is True
        assert second.attributes["c"].members == ("version",)
        assert result.metadata.to_wire()["requests"][0]["devices"][0]["attributes"] == {
            "a": {"string": "x"},
            "b": {"bool": True},
        }

    def test_the_other_attributes_are_still_validated(self) -> None:
        result = self.decode(
            {"a": {"int": None, "string": "x"}, "b": {"int": 1, "string": "y"}, "c": {"int": None}}
        )
        assert [(error.path, error.type) for error in result.errors] == [
            ("requests[0].devices[0].attributes[b]", "invalid"),
            ("requests[0].devices[0].attributes[c]", "invalid"),
        ]
        several, none = result.errors
        assert "exactly one of" in several.detail
        assert "exactly one" not in none.detail
        assert "must specify one of" in none.detail

    def test_null_elements_of_a_list_member_are_zero(self) -> None:
        result = self.decode(
            {
                "ints": {"ints": [1, None, 3]},
                "bools": {"bools": [None, True]},
                "strings": {"strings": ["a", None]},
                "versions": {"versions": [None], "int": None},
            }
        )
        (device,) = result.metadata.devices
        assert device.attribute("ints") == (1, 0, 3)
        assert device.attribute("bools") == (False, True)
        assert device.attribute("strings") == ("a", "")
        assert device.attributes["versions"].versions == ("",)
        assert device.attributes["versions"].members == ("versions",)


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


class TestNestedObjectMetadata:
    """ownerReferences and managedFields: each field's type, named by its whole wire path."""

    def owners_error(self, owners: object) -> MetadataDecodeError:
        return decode_error(stream(wire_object(metadata={"name": "n", "ownerReferences": owners})))

    @pytest.mark.parametrize("field", ["controller", "blockOwnerDeletion"])
    @pytest.mark.parametrize(
        ("value", "described"),
        [("yes", "a string ('yes')"), (1, "the number 1"), ({}, "an object")],
    )
    def test_a_flag_of_an_owner(self, field: str, value: object, described: str) -> None:
        error = self.owners_error([{"name": "a"}, {"name": "b", field: value}])
        path = f"metadata.ownerReferences[1].{field}"
        assert error.field == path
        assert str(error) == (
            f"decode {V1ALPHA1}: object 1, field {path}: expected true or false, got {described}"
        )

    @pytest.mark.parametrize(("value", "flag"), [(True, True), (False, False), (None, None)])
    def test_the_flags_of_an_owner(self, value: object, flag: bool | None) -> None:
        owner = {"name": "b", "controller": value, "blockOwnerDeletion": value}
        meta = {"name": "n", "ownerReferences": [owner]}
        (decoded,) = decode_stream(
            stream(wire_object(metadata=meta))
        ).metadata.metadata.owner_references
        assert (decoded.controller, decoded.block_owner_deletion) == (flag, flag)

    def test_a_field_of_an_owner(self) -> None:
        error = self.owners_error([{"name": "a", "uid": 5}])
        assert error.field == "metadata.ownerReferences[0].uid"
        assert str(error).endswith("expected a string, got the number 5")

    def test_an_owner_that_is_not_an_object(self) -> None:
        error = self.owners_error([{"name": "a"}, "b"])
        assert error.field == "metadata.ownerReferences[1]"
        assert str(error).endswith("expected an object, got a string ('b')")

    def test_owners_that_are_not_a_list(self) -> None:
        error = self.owners_error({"name": "a"})
        assert error.field == "metadata.ownerReferences"
        assert str(error).endswith("expected an array, got an object")

    def test_a_field_of_a_managed_fields_entry(self) -> None:
        meta = {"name": "n", "managedFields": [{"manager": "m"}, {"operation": ["Apply"]}]}
        error = decode_error(stream(wire_object(metadata=meta)))
        assert error.field == "metadata.managedFields[1].operation"
        assert str(error).endswith("expected a string, got an array")


def edited(edit: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    """The upstream test object, changed in place by ``edit``."""
    obj = wire_object()
    edit(obj)
    return obj


def first_device(obj: dict[str, Any]) -> dict[str, Any]:
    device: dict[str, Any] = obj["requests"][0]["devices"][0]
    return device


def meta_field(**fields: object) -> Callable[[dict[str, Any]], object]:
    return lambda obj: obj.update(metadata={"name": "n", **fields})


OUT_OF_RANGE = {"<2**63>": str(2**63), "<-2**63-1>": str(-(2**63) - 1)}

WRONG_TYPES = [
    # how the object is changed, the field at fault, what the message says of it
    (lambda o: o.update(requests={"a": 1}), "requests", "expected an array, got an object"),
    (lambda o: o["requests"].append(7), "requests[1]", "expected an object, got the number 7"),
    (
        lambda o: o["requests"][0].update(name=3),
        "requests[0].name",
        "expected a string, got the number 3",
    ),
    (
        lambda o: o["requests"][0].update(devices="d"),
        "requests[0].devices",
        "expected an array, got a string ('d')",
    ),
    (
        lambda o: o["requests"][0]["devices"].append(True),
        "requests[0].devices[1]",
        "expected an object, got true",
    ),
    (
        lambda o: first_device(o).update(attributes=[1]),
        "requests[0].devices[0].attributes",
        "expected an object, got an array",
    ),
    (
        lambda o: first_device(o).update(attributes={"a": 5}),
        "requests[0].devices[0].attributes[a]",
        "expected an object, got the number 5",
    ),
    (
        lambda o: first_device(o).update(attributes={"a": {"int": "x"}}),
        "requests[0].devices[0].attributes[a].int",
        "expected an integer in the int64 range, got a string ('x')",
    ),
    (
        lambda o: first_device(o).update(attributes={"a": {"bool": 0}}),
        "requests[0].devices[0].attributes[a].bool",
        "expected true or false, got the number 0",
    ),
    (
        lambda o: first_device(o).update(attributes={"a": {"version": 1.5}}),
        "requests[0].devices[0].attributes[a].version",
        "expected a string, got the number 1.5",
    ),
    (
        lambda o: first_device(o).update(attributes={"a": {"ints": [1, "x"]}}),
        "requests[0].devices[0].attributes[a].ints[1]",
        "expected an integer in the int64 range, got a string ('x')",
    ),
    (
        lambda o: first_device(o).update(attributes={"a": {"strings": "s"}}),
        "requests[0].devices[0].attributes[a].strings",
        "expected an array, got a string ('s')",
    ),
    (
        lambda o: first_device(o).update(networkData=[]),
        "requests[0].devices[0].networkData",
        "expected an object, got an array",
    ),
    (
        lambda o: first_device(o).update(networkData={"interfaceName": 1}),
        "requests[0].devices[0].networkData.interfaceName",
        "expected a string, got the number 1",
    ),
    (
        lambda o: first_device(o).update(networkData={"hardwareAddress": False}),
        "requests[0].devices[0].networkData.hardwareAddress",
        "expected a string, got false",
    ),
    (
        lambda o: first_device(o).update(networkData={"ips": "10.0.0.1"}),
        "requests[0].devices[0].networkData.ips",
        "expected an array, got a string ('10.0.0.1')",
    ),
    (
        lambda o: first_device(o).update(networkData={"ips": ["10.0.0.1", 5]}),
        "requests[0].devices[0].networkData.ips[1]",
        "expected a string, got the number 5",
    ),
    (lambda o: o.update(podClaimName=5), "podClaimName", "expected a string, got the number 5"),
    (lambda o: o.update(metadata=[]), "metadata", "expected an object, got an array"),
    (meta_field(labels=[]), "metadata.labels", "expected an object, got an array"),
    (meta_field(labels={"a": 1}), "metadata.labels[a]", "expected a string, got the number 1"),
    (
        meta_field(annotations={"b": None, "c": []}),
        "metadata.annotations[c]",
        "expected a string, got an array",
    ),
    (meta_field(finalizers="f"), "metadata.finalizers", "expected an array, got a string ('f')"),
    (
        meta_field(finalizers=["f", 2]),
        "metadata.finalizers[1]",
        "expected a string, got the number 2",
    ),
    (
        meta_field(deletionGracePeriodSeconds="30"),
        "metadata.deletionGracePeriodSeconds",
        "expected an integer in the int64 range, got a string ('30')",
    ),
    (
        meta_field(generation="<2**63>"),
        "metadata.generation",
        f"expected an integer in the int64 range, got the number {2**63}",
    ),
    (
        meta_field(creationTimestamp=5),
        "metadata.creationTimestamp",
        "expected an RFC 3339 time string, got the number 5",
    ),
    (
        meta_field(deletionTimestamp="yesterday"),
        "metadata.deletionTimestamp",
        "not an RFC 3339 time (the year must be four digits): 'yesterday'",
    ),
    (
        meta_field(managedFields=[5]),
        "metadata.managedFields[0]",
        "expected an object, got the number 5",
    ),
    (
        meta_field(managedFields=[{"time": True}]),
        "metadata.managedFields[0].time",
        "expected an RFC 3339 time string, got true",
    ),
]


@pytest.mark.parametrize(("edit", "field", "problem"), WRONG_TYPES)
def test_a_wrong_json_type_is_named_by_its_wire_path(
    edit: Callable[[dict[str, Any]], object], field: str, problem: str
) -> None:
    data = stream(edited(edit))
    for placeholder, number in OUT_OF_RANGE.items():  # numbers orjson cannot write
        data = data.replace(f'"{placeholder}"'.encode(), number.encode())
    error = decode_error(data)
    assert error.field == field
    assert error.api_version == V1ALPHA1
    assert error.object_index == 1
    assert str(error) == f"decode {V1ALPHA1}: object 1, field {field}: {problem}"


def test_an_impossible_date_says_why() -> None:
    error = decode_error(stream(edited(meta_field(creationTimestamp="2008-02-30T01:01:01Z"))))
    assert error.field == "metadata.creationTimestamp"
    assert str(error) == (
        f"decode {V1ALPHA1}: object 1, field metadata.creationTimestamp: "
        "not an RFC 3339 time (day out of range): '2008-02-30T01:01:01Z'"
    )


@pytest.mark.parametrize(
    ("placement", "field"),
    [
        (lambda o, n: o.update(metadata={"name": "x", "generation": n}), "metadata.generation"),
        (lambda o, n: o.update(podClaimName=n), "podClaimName"),
        (
            lambda o, n: o["requests"][0]["devices"][0].update(name=n),
            "requests[0].devices[0].name",
        ),
        (
            lambda o, n: o["requests"][0]["devices"][0]["attributes"].update(a={"int": n}),
            "requests[0].devices[0].attributes[a].int",
        ),
        (
            lambda o, n: o["requests"][0]["devices"][0]["attributes"].update(a={"ints": [1, n]}),
            "requests[0].devices[0].attributes[a].ints[1]",
        ),
    ],
)
@pytest.mark.parametrize("number", [str(-(2**63) - 1), str(2**64), "1.50", "2E3", "-0.0"])
def test_a_number_is_quoted_as_written(
    placement: Callable[[dict[str, Any], str], object], field: str, number: str
) -> None:
    # orjson reads these as floats (-9.223372036854776e+18, 2000.0); Go quotes the literal.
    obj = wire_object()
    placement(obj, "<number>")
    data = stream(obj).replace(b'"<number>"', number.encode())
    error = decode_error(data)
    assert error.field == field
    expected = "a string" if field in {"podClaimName", "requests[0].devices[0].name"} else None
    problem = f"expected {expected or 'an integer in the int64 range'}, got the number {number}"
    assert str(error) == f"decode {V1ALPHA1}: object 1, field {field}: {problem}"


def test_a_number_is_quoted_as_written_after_a_run_of_small_objects() -> None:
    # Nine skipped objects are read at once; the known one after them is flat.
    skipped = b'{"apiVersion":"example.com/v1","kind":"K"}\n' * 12
    known = f'{{"apiVersion":"{V1ALPHA1}","kind":"DeviceMetadata","podClaimName":1.50}}'
    error = decode_error(skipped + known.encode())
    assert (error.object_index, error.field) == (13, "podClaimName")
    assert str(error) == (
        f"decode {V1ALPHA1}: object 13, field podClaimName: expected a string, got the number 1.50"
    )


@pytest.mark.parametrize("value", [2**63 - 1, -(2**63), 0])
def test_the_int64_range_is_inclusive(value: int) -> None:
    meta = {"name": "n", "generation": value, "deletionGracePeriodSeconds": value}
    decoded = decode_stream(stream(wire_object(metadata=meta))).metadata.metadata
    assert (decoded.generation, decoded.deletion_grace_period_seconds) == (value, value)


def test_null_elements_are_empty() -> None:
    obj = wire_object()
    obj["requests"].append(None)
    obj["requests"][0]["devices"].append(None)
    obj["requests"][0]["devices"][0]["networkData"] = {"ips": None, "interfaceName": None}
    metadata = decode_stream(stream(obj)).metadata
    assert [request.name for request in metadata.requests] == ["gpu", ""]
    first, second = metadata.requests[0].devices
    assert first.network_data == NetworkDeviceData()
    assert (second.driver, second.pool, second.name, dict(second.attributes)) == ("", "", "", {})
    assert second.network_data is None


def test_times_are_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        parsed = creation_timestamp("2008-01-01T01:01:01+02:00")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert parsed == utc(2007, 12, 31, 23, 1, 1)
    assert parsed is not None
    assert parsed.tzinfo is timezone.utc


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
"""What follows the object after the run: nothing (it is read alone) or more of the run (it is
read with the run, at once)."""


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
