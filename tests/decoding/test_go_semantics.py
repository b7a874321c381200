"""The JSON semantics of the Go reference (spec §3.3), each point on the fast and the exact path.

Every expectation here was checked against the real decoder (Go's encoding/json and the
sigs.k8s.io/json fork it uses for the body); the cases with duplicate keys need the exact path,
which the decoder takes for any object orjson refuses or that has apiVersion or kind in another
case, and which tests reach directly through `exact` below.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone

import pytest

from dra_metadata import (
    MetadataDecodeError,
    NoCompatibleVersionError,
    NoMetadataError,
    ObjectMeta,
    decode_stream,
)

from helpers import V1ALPHA1, compact, read_every_object_exactly, stream, wire_object

HEAD = f'"kind":"DeviceMetadata","apiVersion":"{V1ALPHA1}"'


def known(body: str | bytes) -> bytes:
    """A v1alpha1 object with the given members after its type fields."""
    if isinstance(body, str):
        body = body.encode()
    return b"{" + HEAD.encode() + (b"," + body if body else b"") + b"}"


@pytest.fixture
def exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read every object with the exact parser, as the decoder does for what orjson refuses."""
    read_every_object_exactly(monkeypatch)


class TestTypeFieldsAreFoundCaseInsensitively:
    @pytest.mark.parametrize(
        "spelling",
        [
            '"KIND":"DeviceMetadata","APIVERSION":"{v}"',
            '"Kind":"DeviceMetadata","ApiVersion":"{v}"',
            '"\\u212aind":"DeviceMetadata","apiVer\\u017fion":"{v}"',  # Kelvin sign, long s
            '"\u212aind":"DeviceMetadata","apiVer\u017fion":"{v}"',  # the same, as UTF-8
        ],
    )
    def test_any_case(self, spelling: str) -> None:
        data = ("{" + spelling.format(v=V1ALPHA1) + ',"metadata":{"name":"x"}}').encode()
        result = decode_stream(data)
        assert result.api_version == V1ALPHA1
        assert result.metadata.name == "x"

    def test_the_last_matching_key_wins(self) -> None:
        with pytest.raises(MetadataDecodeError, match='kind "Nope"'):
            decode_stream(known('"Kind":"Nope"'))
        data = b'{"kind":"DeviceMetadata","apiVersion":"x/v1","APIVERSION":"' + V1ALPHA1.encode()
        assert decode_stream(data + b'"}').api_version == V1ALPHA1

    def test_null_changes_nothing_and_another_type_fails(self) -> None:
        assert decode_stream(known('"KIND":null')).api_version == V1ALPHA1
        with pytest.raises(MetadataDecodeError, match='"kind" that is the number 5'):
            decode_stream(known('"kInd":5'))

    def test_a_skipped_object_in_another_case(self) -> None:
        data = b'{"KIND":"Thing","ApiVersion":"x/v1"}' + compact(wire_object())
        assert decode_stream(data).skipped_versions == ("x/v1",)

    def test_other_keys_of_the_body_are_case_sensitive(self) -> None:
        result = decode_stream(known('"Metadata":{"name":"x"},"Requests":[{"name":"r"}]'))
        assert result.metadata.metadata == ObjectMeta()
        assert result.metadata.requests == ()


@pytest.mark.usefixtures("exact")
class TestDuplicateKeys:
    def test_objects_are_merged(self) -> None:
        metadata = decode_stream(known('"metadata":{"name":"a"},"metadata":{"uid":"u"}')).metadata
        assert (metadata.name, metadata.uid) == ("a", "u")

    def test_arrays_are_decoded_into_the_existing_elements_and_cut(self) -> None:
        body = (
            '"requests":[{"name":"r","devices":[{"driver":"d","name":"x"}]},{"name":"gone"}],'
            '"requests":[{"devices":[{"name":"y"}]}]'
        )
        (request,) = decode_stream(known(body)).metadata.requests
        assert request.name == "r"
        (device,) = request.devices
        assert (device.driver, device.name) == ("d", "y")

    def test_elements_cut_off_come_back_within_the_capacity(self) -> None:
        # Go's slices keep a backing array: [a,b,c] (capacity 4), then [x] (length 1), then two
        # nulls (length 2, and null leaves a string as it was) show x and the old b.
        body = (
            '"metadata":{"finalizers":["a","b","c"]},"metadata":{"finalizers":["x"]},'
            '"metadata":{"finalizers":[null,null]}'
        )
        assert decode_stream(known(body)).metadata.metadata.finalizers == ("x", "b")

    def test_an_empty_array_starts_afresh(self) -> None:
        body = '"metadata":{"finalizers":["a","b"]},"metadata":{"finalizers":[]},'
        body += '"metadata":{"finalizers":[null,null]}'
        assert decode_stream(known(body)).metadata.metadata.finalizers == ("", "")

    def test_map_entries_and_scalars_are_replaced(self) -> None:
        body = (
            '"requests":[{"name":"r","devices":[{"attributes":{"a":{"int":1},"a":{"string":"s"}},'
            '"name":"one","name":"two"}]}]'
        )
        (device,) = decode_stream(known(body)).metadata.devices
        assert device.name == "two"
        assert device.attributes["a"].members == ("string",)

    def test_maps_given_twice_are_merged(self) -> None:
        body = '"metadata":{"labels":{"a":"1","b":"2"}},"metadata":{"labels":{"b":"3"}}'
        assert dict(decode_stream(known(body)).metadata.metadata.labels) == {"a": "1", "b": "3"}

    def test_the_type_fields_too(self) -> None:
        data = b'{"apiVersion":"x/v1","kind":"K","apiVersion":"' + V1ALPHA1.encode() + b'",'
        data += b'"kind":"DeviceMetadata"}'
        assert decode_stream(data).api_version == V1ALPHA1


@pytest.mark.usefixtures("exact")
class TestNull:
    @pytest.mark.parametrize(
        ("body", "check"),
        [
            ('"podClaimName":"p","podClaimName":null', lambda m: m.pod_claim_name is None),
            ('"requests":[{"name":"r"}],"requests":null', lambda m: m.requests == ()),
            (
                '"metadata":{"labels":{"a":"b"}},"metadata":{"labels":null}',
                lambda m: dict(m.metadata.labels) == {},
            ),
            (
                (
                    '"metadata":{"deletionGracePeriodSeconds":5},'
                    '"metadata":{"deletionGracePeriodSeconds":null}'
                ),
                lambda m: m.metadata.deletion_grace_period_seconds is None,
            ),
            (  # a time's own UnmarshalJSON resets it
                (
                    '"metadata":{"creationTimestamp":"2008-01-01T00:00:00Z"},'
                    '"metadata":{"creationTimestamp":null}'
                ),
                lambda m: m.metadata.creation_timestamp is None,
            ),
        ],
    )
    def test_clears_maps_slices_and_pointers(self, body: str, check: object) -> None:
        assert check(decode_stream(known(body)).metadata)  # type: ignore[operator]

    @pytest.mark.parametrize(
        "body",
        [
            '"metadata":{"name":"a"},"metadata":null',
            '"metadata":{"name":"a"},"metadata":{"name":null}',
            '"metadata":{"name":"a","generation":0},"metadata":{"generation":null}',
        ],
    )
    def test_leaves_strings_numbers_and_structs(self, body: str) -> None:
        assert decode_stream(known(body)).metadata.name == "a"

    def test_on_the_fast_path_it_is_the_zero_value(self) -> None:
        obj = wire_object(podClaimName=None)
        obj["requests"] = [None, {"name": None, "devices": [None]}]
        result = decode_stream(compact(obj).replace(b'"kind"', b'"podClaimName":null,"kind"'))
        assert result.metadata.pod_claim_name is None
        assert [request.name for request in result.metadata.requests] == ["", ""]


class TestStrings:
    def test_invalid_utf8_becomes_one_replacement_character_per_byte(self) -> None:
        # A cut three-byte character is two replacement characters, as Go's utf8.DecodeRune
        # consumes one byte at a time; an encoded surrogate is three.
        data = stream(wire_object()).replace(b"my-claim", b"a\xe2\x82b\xed\xa0\x80c\xff")
        assert decode_stream(data).metadata.name == "a\ufffd\ufffdb\ufffd\ufffd\ufffdc\ufffd"

    def test_lone_surrogate_escapes(self) -> None:
        data = stream(wire_object()).replace(b"my-claim", b"\\ud800x\\udc00\\ud83d\\ude00")
        assert decode_stream(data).metadata.name == "\ufffdx\ufffd\U0001f600"

    def test_in_keys(self) -> None:
        data = known(b'"metadata":{"labels":{"k\\ud800\xff":"v"}}')
        assert dict(decode_stream(data).metadata.metadata.labels) == {"k\ufffd\ufffd": "v"}

    def test_in_skipped_objects(self) -> None:
        data = b'{"kind":"K\xff","apiVersion":"x/v\xff"}' + compact(wire_object())
        assert decode_stream(data).skipped_versions == ("x/v\ufffd",)
        with pytest.raises(NoCompatibleVersionError) as info:
            decode_stream(b'{"kind":"K","apiVersion":"x/\\udfff"}')
        assert info.value.unknown_versions == ("x/\ufffd",)

    def test_outside_strings_it_is_a_syntax_error(self) -> None:
        with pytest.raises(MetadataDecodeError, match="invalid character 'ÿ' after object key"):
            decode_stream(known(b'"x"\xff:1'))


class TestIgnoredValues:
    @pytest.mark.parametrize("number", ["1e400", "-1e400", "1" + "0" * 400, "0.5e-999"])
    def test_numbers_of_any_size(self, number: str) -> None:
        data = known(f'"status":{{"n":[{number}]}},"metadata":{{"name":"x"}}')
        assert decode_stream(data).metadata.name == "x"
        skipped = f'{{"kind":"K","apiVersion":"x/v1","n":{number}}}'.encode()
        assert decode_stream(skipped + compact(wire_object())).skipped_versions == ("x/v1",)

    @pytest.mark.parametrize("number", [str(10**30), str(-(2**64) - 1), "1e400"])
    def test_numbers_of_any_size_in_fields_v1(self, number: str) -> None:
        # Go keeps fieldsV1 as it is written: integers stay exact, whatever their size.
        data = known('"metadata":{"managedFields":[{"fieldsV1":{"f:x":[' + number + "]}}]}")
        (entry,) = decode_stream(data).metadata.metadata.managed_fields
        assert entry.fields_v1 == {"f:x": [float(number) if "e" in number else int(number)]}

    def test_but_not_where_a_field_needs_them(self) -> None:
        with pytest.raises(MetadataDecodeError, match="int64") as info:
            decode_stream(known('"metadata":{"generation":1e400}'))
        assert info.value.field == "metadata.generation"

    def test_nesting_up_to_10000_levels(self) -> None:
        deep = "[" * 9999 + "]" * 9999
        assert decode_stream(known(f'"status":{deep}')).api_version == V1ALPHA1
        too_deep = "[" * 10000 + "]" * 10000
        with pytest.raises(MetadataDecodeError, match="exceeded max depth"):
            decode_stream(known(f'"status":{too_deep}'))


class TestTimes:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("2008-01-02T03:04:05Z", datetime(2008, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
            ("2008-01-02T03:04:05,5Z", datetime(2008, 1, 2, 3, 4, 5, 500000, timezone.utc)),
            ("2008-01-02T3:04:05Z", datetime(2008, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
            (
                "2008-01-02T03:04:05.123456789123Z",
                datetime(2008, 1, 2, 3, 4, 5, 123456, timezone.utc),
            ),
            ("2008-01-02T03:04:05+24:00", datetime(2008, 1, 1, 3, 4, 5, tzinfo=timezone.utc)),
            ("2008-01-02T03:04:05-00:60", datetime(2008, 1, 2, 4, 4, 5, tzinfo=timezone.utc)),
            ("0001-01-01T01:00:00+01:00", None),  # Go's zero time: unset
        ],
    )
    def test_what_go_accepts(self, text: str, expected: datetime | None) -> None:
        data = known(f'"metadata":{{"creationTimestamp":"{text}"}}')
        assert decode_stream(data).metadata.metadata.creation_timestamp == expected

    @pytest.mark.parametrize(
        "text",
        [
            "2008-01-02t03:04:05Z",
            "2008-01-02T03:04:05z",
            "2008-01-02T03:04:60Z",
            "2008-01-02T24:00:00Z",
            "2007-02-29T00:00:00Z",
            "2008-01-02T03:04:05+25:00",
            "2008-01-02T03:04:05.Z",
            "2008-01-02T03:04:05Z ",
            "2008-1-02T03:04:05Z",
            "0000-01-01T00:00:00Z",  # Go has year 0; Python's datetime does not
        ],
    )
    def test_what_it_refuses(self, text: str) -> None:
        data = known(f'"metadata":{{"managedFields":[{{"time":"{text}"}}]}}')
        with pytest.raises(MetadataDecodeError) as info:
            decode_stream(data)
        assert info.value.field == "metadata.managedFields[0].time"


class TestStreams:
    def test_unknown_versions_named_up_to_ten(self) -> None:
        data = b"".join(b'{"kind":"K","apiVersion":"x/v%d"}' % index for index in range(25))
        with pytest.raises(NoCompatibleVersionError) as info:
            decode_stream(data)
        versions = ", ".join(f"x/v{index}" for index in range(10))
        assert f"(unknown versions: {versions}, and 15 more)" in str(info.value)
        assert info.value.unknown_versions == tuple(f"x/v{index}" for index in range(25))

    @pytest.mark.parametrize("separator", [b"", b"\n", b" \r\n\t"])
    def test_many_objects_then_a_known_one(self, separator: bytes) -> None:
        skipped = [b'{"kind":"K","apiVersion":"x/v%d"}' % (index % 3) for index in range(40)]
        data = separator.join([*skipped, compact(wire_object())])
        result = decode_stream(data + b"{ broken")
        assert result.skipped_versions == tuple(f"x/v{index % 3}" for index in range(40))
        assert result.metadata.name == "my-claim"

    @pytest.mark.parametrize(
        ("tail", "error"),
        [
            (b'{"apiVersion":"x/v1"}', 'decode x/v1: object 41 has no "kind"'),
            (b'{"kind":"K","apiVersion":1}', "object 41 has an .apiVersion. that is the number 1"),
            (b"{broken", "read metadata object from stream: object 41"),
            (b"7", "object 41 is the number 7"),
        ],
    )
    def test_many_objects_then_a_bad_one(self, tail: bytes, error: str) -> None:
        data = b'{"kind":"K","apiVersion":"x/v1"}\n' * 40 + tail
        with pytest.raises(MetadataDecodeError, match=error) as info:
            decode_stream(data)
        assert info.value.object_index == 41

    @pytest.mark.parametrize("separator", [b"", b"\n"])
    def test_a_known_object_among_many_small_ones(self, separator: bytes) -> None:
        small = b'{"kind":"K","apiVersion":"x/v1"}'
        known = b'{"kind":"DeviceMetadata","apiVersion":"' + V1ALPHA1.encode() + b'"}'
        data = separator.join([small] * 30 + [known] + [small] * 30)
        result = decode_stream(data)
        assert result.api_version == V1ALPHA1
        assert result.skipped_versions == ("x/v1",) * 30

    def test_a_kind_in_another_case_among_many_objects(self) -> None:
        small = b'{"kind":"K","apiVersion":"x/v1"}'
        odd = b'{"kind":"K","apiVersion":"x/v1","Kind":""}'  # the last kind wins: none
        with pytest.raises(MetadataDecodeError, match='object 21 has no "kind"'):
            decode_stream(small * 20 + odd + small * 20 + compact(wire_object()))

    def test_strings_that_look_like_separators(self) -> None:
        odd = b'{"kind":"K","apiVersion":"x/v1","s":"} {"}'
        data = odd * 20 + compact(wire_object())
        assert decode_stream(data).skipped_versions == ("x/v1",) * 20

    @pytest.mark.parametrize("where", [10, 20])
    def test_a_comma_between_objects_is_a_syntax_error(self, where: int) -> None:
        small = b'{"kind":"K","apiVersion":"x/v1"}\n'
        data = small * where + b"," + small * (20 - where) + compact(wire_object())
        with pytest.raises(MetadataDecodeError, match="invalid character ','") as info:
            decode_stream(data)
        assert info.value.object_index == where + 1

    def test_a_stray_brace_after_many_objects_ends_the_stream(self) -> None:
        data = b'{"kind":"K","apiVersion":"x/v1"}\n' * 20 + b"}" + compact(wire_object())
        with pytest.raises(NoCompatibleVersionError):
            decode_stream(data)

    @pytest.mark.parametrize("data", [b"", b" \n", b"]", b"} {"])
    def test_nothing(self, data: bytes) -> None:
        with pytest.raises(NoMetadataError):
            decode_stream(data)


def test_the_realistic_stream_stays_on_the_fast_path(head_fixture: bytes) -> None:
    # The exact parser is imported on first use only: decoding what writers write never needs it.
    code = (
        "import sys, dra_metadata\n"
        "from dra_metadata.writer import encode_stream\n"
        f"data = {head_fixture!r}\n"
        "dra_metadata.decode_stream(data)\n"
        "metadata = dra_metadata.decode_stream(data).metadata\n"
        "dra_metadata.decode_stream(encode_stream(metadata, versions=[metadata.api_version]))\n"
        "assert 'dra_metadata._decoding._gojson' not in sys.modules, 'the exact path was taken'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
