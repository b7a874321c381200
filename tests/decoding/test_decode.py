"""decode_stream: the upstream decode cases (spec §4, §12.1) and bad inputs: typed errors."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import orjson
import pytest

import dra_metadata
from dra_metadata import (
    DecodeResult,
    MetadataDecodeError,
    NoCompatibleVersionError,
    NoMetadataError,
    decode_stream,
)
from dra_metadata._decoding import _convert as convert_module

from helpers import V1ALPHA1, V1BETA1, compact, stream, wire_object

UNKNOWN = {
    "apiVersion": "metadata.k8s.io/v99",
    "kind": "DeviceMetadata",
    "metadata": {"name": "test"},
}


def expected_claim(result: DecodeResult, api_version: str) -> None:
    metadata = result.metadata
    assert result.api_version == api_version
    assert metadata.api_version == api_version
    assert (metadata.name, metadata.namespace, metadata.uid, metadata.generation) == (
        "my-claim",
        "default",
        "uid-1234",
        1,
    )
    assert [request.name for request in metadata.requests] == ["gpu"]
    (device,) = metadata.devices
    assert (device.driver, device.pool, device.name) == ("gpu.example.com", "worker-0", "gpu-0")
    assert device.attribute("model") == "LATEST-GPU-MODEL"


class TestUpstreamFixtures:
    def test_head_decodes_every_field(self, head_fixture: bytes) -> None:
        result = decode_stream(head_fixture)
        assert result.api_version == V1BETA1
        assert result.skipped_versions == ()
        metadata = result.metadata
        meta = metadata.metadata
        assert meta.name == "claim"
        assert meta.generate_name == "generateNameValue"
        assert meta.namespace == "default"
        assert meta.self_link == "selfLinkValue"
        assert meta.uid == "claim-uid"
        assert meta.resource_version == "resourceVersionValue"
        assert meta.generation == 7
        assert meta.creation_timestamp == datetime(2008, 1, 1, 1, 1, 1, tzinfo=timezone.utc)
        assert meta.deletion_timestamp == datetime(2009, 1, 1, 1, 1, 1, tzinfo=timezone.utc)
        assert meta.deletion_grace_period_seconds == 10
        assert dict(meta.labels) == {"labelsKey": "labelsValue"}
        assert dict(meta.annotations) == {"annotationsKey": "annotationsValue"}
        (owner,) = meta.owner_references
        assert (owner.api_version, owner.kind, owner.name, owner.uid) == (
            "apiVersionValue",
            "kindValue",
            "nameValue",
            "uidValue",
        )
        assert owner.controller is True
        assert owner.block_owner_deletion is True
        assert meta.finalizers == ("finalizersValue",)
        (managed,) = meta.managed_fields
        assert managed.manager == "managerValue"
        assert managed.operation == "operationValue"
        assert managed.api_version == "apiVersionValue"
        assert managed.time == datetime(2004, 1, 1, 1, 1, 1, tzinfo=timezone.utc)
        assert managed.fields_type == "fieldsTypeValue"
        assert managed.fields_v1 == {}
        assert managed.subresource == "subresourceValue"
        assert metadata.pod_claim_name == "<no json tag> PodClaimNameValue"
        (request,) = metadata.requests
        assert request.name == "request"
        assert request.base_name == "request"
        assert request.subrequest_name is None
        (device,) = request.devices
        assert (device.driver, device.pool, device.name) == ("gpu.example.com", "worker-0", "gpu-0")
        assert list(device.attributes) == ["model"]
        model = device.attributes["model"]
        assert model.int == 2
        assert model.bool is True
        assert model.string == "LATEST-GPU-MODEL"
        assert model.version == "versionValue"
        assert model.ints == (6,)
        assert model.bools == (True,)
        assert model.strings == ("stringsValue",)
        assert model.versions == ("versionsValue",)
        assert device.network_data is not None
        assert device.network_data.interface_name == "interfaceNameValue"
        assert device.network_data.ips == ("ipsValue",)
        assert device.network_data.hardware_address == "hardwareAddressValue"

    def test_v136_is_the_same_object_in_v1alpha1(
        self, head_fixture: bytes, v136_fixture: bytes
    ) -> None:
        old = decode_stream(v136_fixture)
        new = decode_stream(head_fixture)
        assert old.api_version == V1ALPHA1
        assert old.metadata == replace(new.metadata, api_version=V1ALPHA1)

    def test_second_object_of_head_is_not_parsed(self, head_fixture: bytes) -> None:
        # Bytes after the first usable object are never examined: breaking them changes nothing.
        first_end = head_fixture.index(b"}\n{") + 2
        broken = head_fixture[:first_end] + b"{ this is not json"
        assert decode_stream(broken).metadata == decode_stream(head_fixture).metadata


class TestUpstreamDecodeCases:
    """Cases of upstream's TestDecodeMetadataFromStream (spec §12.1), by their number there."""

    @pytest.mark.parametrize("version", [V1ALPHA1, V1BETA1])
    def test_single_object_of_each_version(self, version: str) -> None:  # 1-6
        expected_claim(decode_stream(stream(wire_object(version))), version)

    @pytest.mark.parametrize(("first", "second"), [(V1BETA1, V1ALPHA1), (V1ALPHA1, V1BETA1)])
    def test_first_object_wins(self, first: str, second: str) -> None:  # 7-10
        expected_claim(decode_stream(stream(wire_object(first), wire_object(second))), first)

    @pytest.mark.parametrize("version", [V1ALPHA1, V1BETA1])
    def test_invalid_pod_claim_name_still_decodes(self, version: str) -> None:  # 12, 13
        result = decode_stream(stream(wire_object(version, podClaimName="%!$#")))
        assert result.metadata.pod_claim_name == "%!$#"

    @pytest.mark.parametrize("data", [b"", b"   ", b"\n\t\r\n "])
    def test_empty_stream(self, data: bytes) -> None:  # 14
        with pytest.raises(NoMetadataError, match="no metadata objects found in stream"):
            decode_stream(data)

    def test_not_json(self) -> None:  # 15
        with pytest.raises(MetadataDecodeError, match="read metadata object from stream") as info:
            decode_stream(b"{not-json")
        assert type(info.value) is MetadataDecodeError
        assert info.value.object_index == 1

    def test_truncated(self) -> None:  # 16
        data = compact(wire_object())
        with pytest.raises(
            MetadataDecodeError, match="read metadata object from stream.*truncated"
        ):
            decode_stream(data[: len(data) // 2])

    def test_missing_kind(self) -> None:  # 17
        with pytest.raises(MetadataDecodeError, match=f"decode {V1ALPHA1}: object 1 has no .kind."):
            decode_stream(stream(wire_object(kind=None)))

    def test_missing_api_version(self) -> None:  # 18
        with pytest.raises(MetadataDecodeError, match="decode metadata object: object 1"):
            decode_stream(stream(wire_object(api_version=None)))

    def test_requests_of_wrong_type(self) -> None:  # 19
        with pytest.raises(MetadataDecodeError, match=f"decode {V1ALPHA1}") as info:
            decode_stream(stream(wire_object(requests="not-a-list")))
        assert info.value.field == "requests"
        assert info.value.api_version == V1ALPHA1

    def test_only_unknown(self) -> None:  # 20
        with pytest.raises(
            NoCompatibleVersionError,
            match=r"no compatible metadata version found in stream \(unknown versions: "
            r"metadata.k8s.io/v99\)",
        ) as info:
            decode_stream(stream(UNKNOWN))
        assert info.value.unknown_versions == ("metadata.k8s.io/v99",)

    def test_unknown_without_kind_is_fatal(self) -> None:  # 21
        obj = {"apiVersion": "metadata.k8s.io/v99", "metadata": {"name": "test"}}
        with pytest.raises(MetadataDecodeError, match="decode metadata.k8s.io/v99") as info:
            decode_stream(stream(obj))
        assert not isinstance(info.value, NoCompatibleVersionError)

    def test_several_unknown_in_stream_order(self) -> None:  # 22
        v100 = {**UNKNOWN, "apiVersion": "metadata.k8s.io/v100"}
        with pytest.raises(
            NoCompatibleVersionError,
            match=r"\(unknown versions: metadata.k8s.io/v99, metadata.k8s.io/v100\)",
        ):
            decode_stream(stream(UNKNOWN, v100))

    def test_valid_then_broken(self) -> None:  # 23
        expected_claim(decode_stream(stream(wire_object()) + b"{broken"), V1ALPHA1)

    def test_unknown_then_valid(self) -> None:  # 24
        result = decode_stream(stream(UNKNOWN, wire_object()))
        expected_claim(result, V1ALPHA1)
        assert result.skipped_versions == ("metadata.k8s.io/v99",)

    def test_malformed_known_then_valid(self) -> None:  # 25
        with pytest.raises(MetadataDecodeError, match=f"decode {V1ALPHA1}"):
            decode_stream(stream(wire_object(requests="x"), wire_object()))

    def test_missing_kind_then_valid(self) -> None:  # 26
        with pytest.raises(MetadataDecodeError, match=f"decode {V1ALPHA1}"):
            decode_stream(stream(wire_object(kind=None), wire_object()))

    def test_missing_api_version_then_valid(self) -> None:  # 27
        with pytest.raises(MetadataDecodeError, match="decode metadata object"):
            decode_stream(stream(wire_object(api_version=None), wire_object()))

    def test_unknown_then_missing_kind(self) -> None:  # 28
        with pytest.raises(MetadataDecodeError, match=f"decode {V1ALPHA1}"):
            decode_stream(stream(UNKNOWN, wire_object(kind=None)))

    def test_package_example_skips_v1000(self) -> None:  # example_test.go
        v1000 = {
            "apiVersion": "metadata.resource.k8s.io/v1000",
            "kind": "DeviceMetadata",
            "claim": {"name": "my-claim"},
            "allocations": [{"request": "gpu"}],
        }
        result = decode_stream(stream(v1000, wire_object()))
        expected_claim(result, V1ALPHA1)
        assert result.skipped_versions == ("metadata.resource.k8s.io/v1000",)


class TestDecisionTable:
    """The remaining rows of the B1 column of spec §4.2."""

    def test_known_version_with_another_kind_is_fatal(self) -> None:
        with pytest.raises(MetadataDecodeError, match=f"decode {V1BETA1}.*ListOptions"):
            decode_stream(stream(wire_object(V1BETA1, kind="ListOptions"), wire_object()))

    def test_unknown_version_then_malformed_known_is_fatal(self) -> None:
        with pytest.raises(MetadataDecodeError, match=f"decode {V1ALPHA1}") as info:
            decode_stream(stream(UNKNOWN, wire_object(metadata=[])))
        assert info.value.object_index == 2
        assert info.value.field == "metadata"

    def test_stray_closing_bracket_ends_the_stream(self) -> None:
        with pytest.raises(NoCompatibleVersionError):
            decode_stream(stream(UNKNOWN) + b"}" + compact(wire_object()))

    @pytest.mark.parametrize("data", [b"}", b"]", b"  ] garbage"])
    def test_leading_closing_bracket_means_no_objects(self, data: bytes) -> None:
        with pytest.raises(NoMetadataError):
            decode_stream(data)


class TestJsonDetails:
    @pytest.mark.parametrize("separator", [b"", b" ", b"\t", b"\r\n", b"\n\n  \t"])
    def test_any_whitespace_or_none_between_objects(self, separator: bytes) -> None:
        data = orjson.dumps(UNKNOWN) + separator + orjson.dumps(wire_object())
        expected_claim(decode_stream(data), V1ALPHA1)

    def test_str_input(self) -> None:
        expected_claim(decode_stream(stream(wire_object()).decode()), V1ALPHA1)

    def test_bytearray_and_memoryview_input(self) -> None:
        data = stream(wire_object())
        expected_claim(decode_stream(bytearray(data)), V1ALPHA1)  # type: ignore[arg-type]
        expected_claim(decode_stream(memoryview(data)), V1ALPHA1)  # type: ignore[arg-type]

    @pytest.mark.parametrize("data", [None, 5, [b"{}"]])
    def test_other_input_is_refused(self, data: object) -> None:
        # bytes(5) would be five NUL bytes: refused as what it is, not decoded.
        with pytest.raises(TypeError, match="data must be bytes"):
            decode_stream(data)  # type: ignore[arg-type]

    @pytest.mark.parametrize("value", ["1.0", "1e3", str(2**63), str(2**64), str(-(2**63) - 1)])
    def test_integers_must_be_int64(self, value: str) -> None:
        template = compact(wire_object(metadata={"name": "x", "generation": 0}))
        data = template.replace(b'"generation":0', b'"generation":' + value.encode())
        with pytest.raises(MetadataDecodeError, match="int64") as info:
            decode_stream(data)
        assert info.value.field == "metadata.generation"

    @pytest.mark.parametrize("value", ["1.5", "1e3", str(2**63), "true", '"1"'])
    def test_attribute_int_must_be_int64(self, value: str) -> None:
        data = compact(wire_object()).replace(
            b'{"string":"LATEST-GPU-MODEL"}', b'{"int":' + value.encode() + b"}"
        )
        with pytest.raises(MetadataDecodeError) as info:
            decode_stream(data)
        assert info.value.field == "requests[0].devices[0].attributes[model].int"

    def test_int64_bounds_are_accepted(self) -> None:
        attributes = {"max": {"int": 2**63 - 1}, "min": {"int": -(2**63)}}
        device = {"driver": "d", "pool": "p", "name": "n", "attributes": attributes}
        result = decode_stream(stream(wire_object(requests=[{"name": "r", "devices": [device]}])))
        (decoded,) = result.metadata.devices
        assert decoded.attribute("max") == 2**63 - 1
        assert decoded.attribute("min") == -(2**63)

    @pytest.mark.parametrize(
        ("attribute", "field"),
        [
            ({"bool": "yes"}, "bool"),
            ({"string": 5}, "string"),
            ({"version": False}, "version"),
            ({"ints": [1, "2"]}, "ints[1]"),
            ({"bools": "true"}, "bools"),
            ({"strings": [1]}, "strings[0]"),
            ({"versions": [{}]}, "versions[0]"),
            ({"int": 1, "string": []}, "string"),
        ],
    )
    def test_attribute_member_types(self, attribute: dict[str, object], field: str) -> None:
        device = {"driver": "d", "pool": "p", "name": "n", "attributes": {"a": attribute}}
        with pytest.raises(MetadataDecodeError) as info:
            decode_stream(stream(wire_object(requests=[{"name": "r", "devices": [device]}])))
        assert info.value.field == f"requests[0].devices[0].attributes[a].{field}"

    def test_attribute_value_must_be_an_object(self) -> None:
        device = {"driver": "d", "pool": "p", "name": "n", "attributes": {"ok": {"int": 1}, "a": 3}}
        with pytest.raises(MetadataDecodeError, match="expected an object") as info:
            decode_stream(stream(wire_object(requests=[{"name": "r", "devices": [device]}])))
        assert info.value.field == "requests[0].devices[0].attributes[a]"

    def test_lenient_attributes_decode(self) -> None:
        # Several members, no member, unknown members and nulls are validation matters.
        attributes = {
            "several": {"int": 1, "string": "x"},
            "none": {},
            "null": None,
            "unknown": {"capacity": {"value": "1Gi"}},
            "nulls": {"ints": [1, None], "strings": [None], "int": None},
        }
        device = {"driver": "d", "pool": "p", "name": "n", "attributes": attributes}
        result = decode_stream(stream(wire_object(requests=[{"name": "r", "devices": [device]}])))
        (decoded,) = result.metadata.devices
        assert decoded.attributes["several"].members == ("int", "string")
        assert decoded.attributes["none"].members == ()
        assert decoded.attributes["null"].members == ()
        assert decoded.attributes["unknown"].members == ()
        assert decoded.attributes["nulls"].ints == (1, 0)  # Go's zero value for null elements
        assert decoded.attributes["nulls"].strings == ("",)

    def test_duplicate_keys_last_wins(self) -> None:
        data = (
            b'{"kind":"DeviceMetadata","apiVersion":"metadata.k8s.io/v1",'
            b'"apiVersion":"metadata.resource.k8s.io/v1alpha1",'
            b'"metadata":{"name":"first","name":"second"}}'
        )
        result = decode_stream(data)
        assert result.api_version == V1ALPHA1
        assert result.metadata.name == "second"

    def test_unknown_fields_are_ignored(self) -> None:
        obj = wire_object(status={"x": 1}, spec=[1, 2])
        obj["requests"][0]["devices"][0]["consumedCapacity"] = {"memory": "1Gi"}
        expected_claim(decode_stream(stream(obj)), V1ALPHA1)

    def test_null_leaves_fields_unset(self) -> None:
        obj = wire_object(podClaimName=None, metadata=None)
        obj["requests"] = [None, {"name": None, "devices": None}]
        obj["metadata"] = None
        data = compact(obj).replace(b'"kind"', b'"podClaimName":null,"metadata":null,"kind"')
        result = decode_stream(data)
        assert result.metadata.pod_claim_name is None
        assert result.metadata.metadata == dra_metadata.ObjectMeta()
        assert [request.name for request in result.metadata.requests] == ["", ""]

    def test_keys_are_case_sensitive(self) -> None:
        obj = wire_object(Requests="ignored", requests=None)
        assert decode_stream(stream(obj)).metadata.requests == ()

    @pytest.mark.parametrize(
        "value", ["2008-01-01", "yesterday", "2008-13-01T00:00:00Z", "2008-01-01T01:01:01"]
    )
    def test_timestamps_must_be_rfc3339(self, value: str) -> None:
        obj = wire_object(metadata={"name": "x", "creationTimestamp": value})
        with pytest.raises(MetadataDecodeError) as info:
            decode_stream(stream(obj))
        assert info.value.field == "metadata.creationTimestamp"

    def test_timestamp_offsets_are_normalized_to_utc(self) -> None:
        obj = wire_object(metadata={"creationTimestamp": "2008-01-01T03:01:01.123456789+02:00"})
        created = decode_stream(stream(obj)).metadata.metadata.creation_timestamp
        assert created == datetime(2008, 1, 1, 1, 1, 1, 123456, tzinfo=timezone.utc)


class TestBadInput:
    @pytest.mark.parametrize(
        ("data", "what"),
        [
            (b"null", "null"),
            (b"[]", "an array"),
            (b"[1, 2]", "an array"),
            (b'"text"', "a string"),
            (b"42", "the number 42"),
            (b"true", "true"),
        ],
    )
    def test_non_objects_are_fatal(self, data: bytes, what: str) -> None:
        with pytest.raises(
            MetadataDecodeError, match=f"decode metadata object: object 1 is {what}"
        ):
            decode_stream(data)

    def test_bom(self) -> None:
        with pytest.raises(MetadataDecodeError, match="byte order mark"):
            decode_stream(b"\xef\xbb\xbf" + stream(wire_object()))

    def test_invalid_utf8_outside_strings_is_a_syntax_error(self) -> None:
        data = stream(wire_object()).replace(b'"kind"', b'\xff"kind"')
        with pytest.raises(
            MetadataDecodeError, match="invalid character 'ÿ' looking for beginning"
        ):
            decode_stream(data)

    def test_invalid_utf8_after_the_object_is_never_read(self) -> None:
        expected_claim(decode_stream(stream(wire_object()) + b"\xff\xfe garbage"), V1ALPHA1)

    def test_non_ascii_text_before_a_second_object(self) -> None:
        obj = wire_object(podClaimName="gpu-ünïcödé-✓")
        result = decode_stream(orjson.dumps(UNKNOWN) + orjson.dumps(obj) + b"  {")
        assert result.metadata.pod_claim_name == "gpu-ünïcödé-✓"

    def test_deeply_nested(self) -> None:
        data = b'{"kind":"DeviceMetadata","apiVersion":"' + V1ALPHA1.encode() + b'","x":'
        data += b"[" * 100_000 + b"]" * 100_000 + b"}"
        with pytest.raises(MetadataDecodeError, match="read metadata object from stream"):
            decode_stream(data)

    @pytest.mark.parametrize("api_version", ["", "/", "a/b/c", "group/", 7, None, ["x"], {"a": 1}])
    def test_unusable_api_version(self, api_version: object) -> None:
        obj = {"kind": "DeviceMetadata", "apiVersion": api_version}
        with pytest.raises(MetadataDecodeError, match="decode metadata object"):
            decode_stream(orjson.dumps(obj))

    def test_kind_must_be_a_string(self) -> None:
        with pytest.raises(MetadataDecodeError, match='"kind" that is the number 1'):
            decode_stream(stream(wire_object(kind=1)))

    def test_str_input_stands_for_its_bytes(self) -> None:
        # A str that os.fsdecode or "surrogateescape" made of bytes that are not UTF-8 is read
        # as those bytes: U+FFFD each, as in Go; other lone surrogates likewise.
        data = stream(wire_object()).replace(b"my-claim", b"my-\xffclaim")
        text = data.decode("utf-8", "surrogateescape")
        assert decode_stream(text).metadata.name == "my-\ufffdclaim"
        text = text.replace("\udcff", "\ud800")
        assert decode_stream(text).metadata.name == "my-\ufffd\ufffd\ufffdclaim"

    def test_errors_are_device_metadata_errors_without_path(self) -> None:
        with pytest.raises(dra_metadata.DeviceMetadataError) as info:
            decode_stream(b"{")
        assert info.value.path is None
        assert str(info.value).startswith("read metadata object from stream")


class TestBulkAttributeCheck:
    """The attribute check works on all devices at once; each way it can fail is exact."""

    @staticmethod
    def devices(*attributes: dict[str, object]) -> bytes:
        devices = [
            {"driver": "d", "pool": "p", "name": f"n{index}", "attributes": each}
            for index, each in enumerate(attributes)
        ]
        return stream(wire_object(requests=[{"name": "r", "devices": devices}]))

    FAULTS = (
        ({"a": {"int": "x"}, "b": {"string": "s"}}, "a].int"),
        ({"a": {"string": 5}, "b": {"string": "s"}}, "a].string"),
        ({"a": {"int": 1}, "b": {"strings": [1]}}, "b].strings[0]"),
        ({"a": {"int": 2**63}, "b": {"string": "s"}}, "a].int"),
        ({"a": {"int": 1}, "b": 7}, "b]"),
        ({"a": {"int": 1, "string": 5}, "b": {"string": "s"}}, "a].string"),
        ({"a": {"int": True}, "b": {"string": "s"}}, "a].int"),
        ({"a": {"int": 1.5}, "b": {"string": "s"}}, "a].int"),
    )

    @pytest.mark.parametrize("devices", [1, 3])
    @pytest.mark.parametrize(("faulty", "field"), FAULTS)
    def test_a_layout_seen_before_hides_no_fault(
        self, devices: int, faulty: dict[str, object], field: str
    ) -> None:
        # The layout of the last attributes with the same first name is tried first.
        good = {"a": {"int": 1}, "b": {"string": "s"}}
        decode_stream(self.devices(*[good] * devices))
        with pytest.raises(MetadataDecodeError) as info:
            decode_stream(self.devices(*[good] * (devices - 1), faulty))
        assert info.value.field == f"requests[0].devices[{devices - 1}].attributes[{field}"
        result = decode_stream(self.devices(*[good] * devices))
        assert all(device.attributes.one_scalar_member_each for device in result.metadata.devices)  # type: ignore[attr-defined]

    def test_a_layout_seen_before_hides_no_second_member(self) -> None:
        good = {"a": {"int": 1}, "b": {"string": "s"}}
        several = {"a": {"int": 1, "string": "x"}, "b": {"string": "s"}}
        decode_stream(self.devices(good, good))
        result = decode_stream(self.devices(good, several))
        assert result.metadata.devices[1].attributes["a"].members == ("int", "string")
        attributes = [device.attributes for device in result.metadata.devices]
        assert not any(getattr(each, "one_scalar_member_each", False) for each in attributes)

    def test_layouts_of_another_size_or_member(self) -> None:
        good = {"a": {"int": 1}, "b": {"string": "s"}}
        decode_stream(self.devices(good, good, good))
        assert decode_stream(self.devices(good)).metadata.devices[0].attribute("a") == 1
        other = {"a": {"version": "1.0.0"}, "b": {"bools": [True]}}
        result = decode_stream(self.devices(other, other))
        assert [device.attribute("b") for device in result.metadata.devices] == [(True,)] * 2
        with pytest.raises(MetadataDecodeError, match=r"attributes\[b\]\.bools\[0\]"):
            decode_stream(self.devices(other, {"a": {"version": "1"}, "b": {"bools": [1]}}))

    def test_the_layouts_kept_are_few_and_small(self) -> None:
        for index in range(200):
            decode_stream(self.devices({f"a{index}": {"int": index}}))
        assert len(convert_module._LAYOUTS) <= convert_module._LAYOUTS_KEPT
        many = {f"many{index}": {"int": index} for index in range(4097)}
        decode_stream(self.devices(many))
        assert "many0" not in convert_module._LAYOUTS
        assert decode_stream(self.devices(many)).metadata.devices[0].attribute("many4096") == 4096

    @pytest.mark.parametrize(
        ("second", "field"),
        [
            ({"a": {"int": "x"}, "b": {"string": "s"}}, "requests[0].devices[2].attributes[a].int"),
            (
                {"a": {"string": 5}, "b": {"string": "s"}},
                "requests[0].devices[2].attributes[a].string",
            ),
            (
                {"a": {"int": 1}, "b": {"strings": [1]}},
                "requests[0].devices[2].attributes[b].strings[0]",
            ),
            (
                {"a": {"int": 2**63}, "b": {"string": "s"}},
                "requests[0].devices[2].attributes[a].int",
            ),
            ({"a": {"int": 1}, "b": 7}, "requests[0].devices[2].attributes[b]"),
            (  # the first device's member is there, and one more
                {"a": {"int": 1, "string": 5}, "b": {"string": "s"}},
                "requests[0].devices[2].attributes[a].string",
            ),
        ],
    )
    def test_a_device_unlike_the_first(self, second: dict[str, object], field: str) -> None:
        first = {"a": {"int": 1}, "b": {"string": "s"}}
        with pytest.raises(MetadataDecodeError) as info:
            decode_stream(self.devices(first, first, second))
        assert info.value.field == field

    def test_devices_with_other_members_decode(self) -> None:
        first = {"a": {"int": 1}, "b": {"strings": ["x"]}}
        other = {"a": {"version": "1.0.0"}, "b": {"ints": [2**63 - 1, -(2**63)]}}
        several = {"a": {"int": 1, "string": "s"}, "b": {"strings": ["y"], "bool": True}}
        result = decode_stream(self.devices(first, other, several, first))
        attributes = [device.attributes for device in result.metadata.devices]
        assert [each["a"].members for each in attributes] == [
            ("int",),
            ("version",),
            ("int", "string"),
            ("int",),
        ]
        assert attributes[1]["b"].ints == (2**63 - 1, -(2**63))
        assert attributes[2]["b"].members == ("bool", "strings")
        assert not any(getattr(each, "one_scalar_member_each", False) for each in attributes)

    @pytest.mark.parametrize("elements", [[1, True], [True, 1], ["x", 1], [1.5]])
    def test_list_elements_of_another_type(self, elements: list[object]) -> None:
        member = "bools" if elements[0] is True else "ints"
        with pytest.raises(MetadataDecodeError) as info:
            decode_stream(self.devices({"a": {member: elements}}, {"a": {member: elements}}))
        assert info.value.field is not None
        assert info.value.field.startswith("requests[0].devices[0].attributes[a]")
