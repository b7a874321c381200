"""Validation apart from decoding (spec §5): every rule with a valid and an invalid example."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_metadata import (
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    FieldError,
    ManagedFieldsEntry,
    MetadataValidationError,
    NetworkDeviceData,
    ObjectMeta,
    OwnerReference,
    decode_stream,
    read_claim_metadata,
    read_metadata_file,
    resource_claim_request_dir,
    validate,
)
from dra_metadata._validation._findings import GO_ERROR_TYPES
from dra_metadata._validation._profiles import ErrorType
from dra_metadata.writer import encode_stream

from helpers import REPO, UPSTREAM, V1ALPHA1, V1BETA1, stream, wire_object

MODEL = DeviceAttribute(string="LATEST-GPU-MODEL")


def base(**device_fields: object) -> DeviceMetadata:
    """The base object of upstream's validation tests (spec §12.5), valid as it is."""
    device = Device(
        **{
            "driver": "gpu.example.com",
            "pool": "worker-0",
            "name": "gpu-0",
            "attributes": {"model": MODEL},
        }
        | device_fields  # type: ignore[arg-type]
    )
    return DeviceMetadata(
        api_version=V1BETA1,
        metadata=ObjectMeta(name="claim", namespace="default", generation=1),
        pod_claim_name="claim",
        requests=[DeviceMetadataRequest(name="request/subrequest", devices=[device])],
    )


def findings(metadata: DeviceMetadata, profile: str = "metadata") -> list[tuple[str, str]]:
    return [(error.path, error.type) for error in validate(metadata, profile=profile)]  # type: ignore[arg-type]


DEVICE = "requests[0].devices[0]"


class TestUpstreamCases:
    """spec §12.5 and §12.6: each invalid case yields exactly one error at the given path."""

    @pytest.mark.parametrize("version", [V1ALPHA1, V1BETA1])
    def test_base_is_valid_in_both_versions(self, version: str) -> None:
        assert validate(replace(base(), api_version=version)) == ()
        assert validate(replace(base(), api_version=version), profile="strict") == ()

    def test_pod_claim_name(self) -> None:
        assert findings(replace(base(), pod_claim_name="INVALID")) == [("podClaimName", "invalid")]

    def test_request_name_required(self) -> None:
        metadata = replace(base(), requests=[DeviceMetadataRequest(name="")])
        assert findings(metadata) == [("requests[0].name", "required")]

    def test_driver_required_only(self) -> None:
        assert findings(base(driver="")) == [(f"{DEVICE}.driver", "required")]

    def test_driver_length_only(self) -> None:
        assert findings(base(driver="a" * 64)) == [(f"{DEVICE}.driver", "too_long")]

    def test_pool_name(self) -> None:
        assert findings(base(pool="worker-0/")) == [(f"{DEVICE}.pool", "invalid")]

    def test_device_name(self) -> None:
        assert findings(base(name="GPU-0")) == [(f"{DEVICE}.name", "invalid")]

    def test_33_attributes_give_one_error(self) -> None:
        attributes = {f"a{index}": DeviceAttribute(bool=True, int=1) for index in range(33)}
        assert findings(base(attributes=attributes)) == [(f"{DEVICE}.attributes", "too_many")]

    def test_attribute_with_nothing_set(self) -> None:
        assert findings(base(attributes={"model": DeviceAttribute()})) == [
            (f"{DEVICE}.attributes[model]", "invalid")
        ]

    def test_attribute_with_two_members(self) -> None:
        attribute = DeviceAttribute(bool=True, string="x")
        assert findings(base(attributes={"model": attribute})) == [
            (f"{DEVICE}.attributes[model]", "invalid")
        ]

    def test_network_data_valid(self) -> None:
        data = NetworkDeviceData("eth0", ("192.0.2.5/24",), "02:42:ac:11:00:02")
        assert findings(base(network_data=data)) == []
        assert findings(base(network_data=data), "strict") == []

    def test_interface_name_too_long(self) -> None:
        data = NetworkDeviceData(interface_name="e" * 257)
        assert findings(base(network_data=data)) == [
            (f"{DEVICE}.networkData.interfaceName", "too_long")
        ]
        assert findings(base(network_data=NetworkDeviceData(interface_name="e" * 256))) == []

    def test_seventeen_ips(self) -> None:
        ips = tuple(f"10.0.0.{index}/24" for index in range(17))
        assert findings(base(network_data=NetworkDeviceData(ips=ips))) == [
            (f"{DEVICE}.networkData.ips", "too_many")
        ]
        assert findings(base(network_data=NetworkDeviceData(ips=ips[:16]))) == []

    def test_duplicate_ip_at_the_later_index(self) -> None:
        data = NetworkDeviceData(ips=("10.0.0.1/24", "10.0.0.1/24"))
        assert findings(base(network_data=data)) == [(f"{DEVICE}.networkData.ips[1]", "duplicate")]

    def test_hardware_address_too_long(self) -> None:
        assert findings(base(network_data=NetworkDeviceData(hardware_address="a" * 129))) == [
            (f"{DEVICE}.networkData.hardwareAddress", "too_long")
        ]


class TestMetadataProfile:
    def test_negative_generation(self) -> None:
        metadata = replace(base(), metadata=ObjectMeta(generation=-1))
        assert findings(metadata) == [("metadata.generation", "invalid")]

    @pytest.mark.parametrize(("operation", "kind"), [("", "required"), ("Patch", "not_supported")])
    def test_managed_fields_operation(self, operation: str, kind: str) -> None:
        entries = (ManagedFieldsEntry(operation="Apply"), ManagedFieldsEntry(operation=operation))
        metadata = replace(base(), metadata=ObjectMeta(managed_fields=entries))
        assert findings(metadata) == [("metadata.managedFields[1].operation", kind)]

    def test_empty_pod_claim_name_is_checked_when_present(self) -> None:
        assert findings(replace(base(), pod_claim_name="")) == [("podClaimName", "invalid")]
        assert findings(replace(base(), pod_claim_name=None)) == []

    def test_request_names_are_free_form_and_may_repeat(self) -> None:
        requests = [DeviceMetadataRequest(name="A/B/C"), DeviceMetadataRequest(name="A/B/C")]
        assert findings(replace(base(), requests=requests)) == []

    def test_other_object_metadata_is_free_form(self) -> None:
        meta = ObjectMeta(name="Not A Name!", namespace="@", uid="?", labels={"!": "?"})
        assert findings(replace(base(), metadata=meta)) == []

    @pytest.mark.parametrize(
        ("driver", "valid"),
        [
            ("gpu.example.com", True),
            ("GPU.Example.COM", True),  # caseless
            ("a" * 63, True),
            ("-gpu.example.com", False),
            ("gpu..example.com", False),
            ("gpu_example", False),
        ],
    )
    def test_driver_format(self, driver: str, valid: bool) -> None:
        assert findings(base(driver=driver)) == ([] if valid else [(f"{DEVICE}.driver", "invalid")])

    def test_driver_too_long_and_malformed_gives_both_in_go_order(self) -> None:
        assert findings(base(driver="_" * 64)) == [
            (f"{DEVICE}.driver", "invalid"),
            (f"{DEVICE}.driver", "too_long"),
        ]

    @pytest.mark.parametrize(
        ("pool", "valid"),
        [
            ("worker-0", True),
            ("node-a/ens1f0", True),
            ("a.b/c.d/e", True),
            ("/worker", False),
            ("Worker", False),
        ],
    )
    def test_pool_format(self, pool: str, valid: bool) -> None:
        assert findings(base(pool=pool)) == ([] if valid else [(f"{DEVICE}.pool", "invalid")])

    def test_required_pool_and_name(self) -> None:
        assert findings(base(pool="", name="")) == [
            (f"{DEVICE}.name", "required"),
            (f"{DEVICE}.pool", "required"),
        ]

    def test_device_name_length(self) -> None:
        assert findings(base(name="a" * 63)) == []
        assert findings(base(name="a" * 64)) == [(f"{DEVICE}.name", "invalid")]

    def test_strings_elements_at_most_64_bytes(self) -> None:
        good = DeviceAttribute(strings=("é" * 32,))
        bad = DeviceAttribute(strings=("ok", "é" * 33))
        assert findings(base(attributes={"s": good})) == []
        assert findings(base(attributes={"s": bad})) == [
            (f"{DEVICE}.attributes[s].strings[1]", "too_long")
        ]

    def test_not_checked_by_the_metadata_profile(self) -> None:
        attributes = {
            "bad/key/name": DeviceAttribute(string="x" * 100),
            "v": DeviceAttribute(version="not-semver"),
            "vs": DeviceAttribute(versions=("x" * 100,)),
        }
        data = NetworkDeviceData(ips=("not-an-ip",))
        assert findings(base(attributes=attributes, network_data=data)) == []

    def test_an_empty_list_counts_as_unset(self) -> None:
        decoded = decode_stream(
            stream(
                wire_object(
                    requests=[
                        {
                            "name": "r",
                            "devices": [
                                {
                                    "driver": "d",
                                    "pool": "p",
                                    "name": "n",
                                    "attributes": {"a": {"ints": [], "bool": True}},
                                }
                            ],
                        }
                    ]
                )
            ),
            validate=True,
        )
        assert decoded.errors == ()

    def test_errors_are_sorted_by_path_with_numeric_indices(self) -> None:
        devices = [Device(driver="", pool="p", name="n") for _ in range(12)]
        metadata = DeviceMetadata(requests=[DeviceMetadataRequest(name="r", devices=devices)])
        paths = [error.path for error in validate(metadata)]
        assert paths == [f"requests[0].devices[{index}].driver" for index in range(12)]

    def test_field_error_text(self) -> None:
        (error,) = validate(base(driver=""))
        assert str(error) == "requests[0].devices[0].driver: Required value"
        (error,) = validate(base(name="GPU-0"))
        assert str(error).startswith('requests[0].devices[0].name: Invalid value: "GPU-0": ')
        assert isinstance(error, FieldError)
        assert (error.type, error.value) == ("invalid", "GPU-0")

    def test_unknown_profile(self) -> None:
        with pytest.raises(ValueError, match="profile"):
            validate(base(), profile="lenient")  # type: ignore[arg-type]


class TestStrictProfile:
    @pytest.mark.parametrize(
        "key",
        ["model", "gpu.example.com/model", "Example.COM/model", "_x", "a" * 32, f"{'d' * 63}/x"],
    )
    def test_valid_qualified_names(self, key: str) -> None:
        assert findings(base(attributes={key: MODEL}), "strict") == []

    @pytest.mark.parametrize(
        "key",
        [
            "/model",
            "a/b/c",
            "gpu.example.com/",
            "1model",
            "mo-del",
            "a" * 33,
            f"{'d' * 64}/x",
            "-d/x",
        ],
    )
    def test_invalid_qualified_names(self, key: str) -> None:
        assert findings(base(attributes={key: MODEL}), "strict") == [
            (f"{DEVICE}.attributes[{key}]", "invalid")
        ]
        assert findings(base(attributes={key: MODEL})) == []  # not a metadata rule

    def test_string_length(self) -> None:
        assert findings(base(attributes={"s": DeviceAttribute(string="x" * 64)}), "strict") == []
        assert findings(base(attributes={"s": DeviceAttribute(string="x" * 65)}), "strict") == [
            (f"{DEVICE}.attributes[s].string", "too_long")
        ]

    @pytest.mark.parametrize("version", ["1.0.0", "0.1.2-rc.1+build.5", "10.20.30-alpha.1"])
    def test_semver_valid(self, version: str) -> None:
        attributes = {
            "v": DeviceAttribute(version=version),
            "vs": DeviceAttribute(versions=(version,)),
        }
        assert findings(base(attributes=attributes), "strict") == []

    @pytest.mark.parametrize("version", ["1.0", "v1.0.0", "01.0.0", "1.0.0-", "1.0.0+", "1.٠.0"])  # noqa: RUF001
    def test_semver_invalid(self, version: str) -> None:
        attributes = {
            "v": DeviceAttribute(version=version),
            "vs": DeviceAttribute(versions=("1.0.0", version)),
        }
        assert findings(base(attributes=attributes), "strict") == [
            (f"{DEVICE}.attributes[v].version", "invalid"),
            (f"{DEVICE}.attributes[vs].versions[1]", "invalid"),
        ]

    def test_version_length(self) -> None:
        long_version = "1.0.0-" + "a" * 59
        assert findings(
            base(attributes={"v": DeviceAttribute(version=long_version)}), "strict"
        ) == [(f"{DEVICE}.attributes[v].version", "too_long")]

    def test_at_most_48_values_per_device(self) -> None:
        attributes = {f"l{index}": DeviceAttribute(ints=tuple(range(12))) for index in range(4)}
        assert findings(base(attributes=attributes), "strict") == []
        attributes["one_more"] = DeviceAttribute(int=1)
        assert findings(base(attributes=attributes), "strict") == [
            (f"{DEVICE}.attributes", "too_many")
        ]

    @pytest.mark.parametrize("ip", ["10.9.8.7/24", "2001:db8::1/64", "fd00::5/128", "0.0.0.0/0"])
    def test_canonical_interface_addresses(self, ip: str) -> None:
        assert findings(base(network_data=NetworkDeviceData(ips=(ip,))), "strict") == []

    @pytest.mark.parametrize(
        "ip",
        [
            "10.9.8.7",
            "10.9.8.7/33",
            "2001:DB8::1/64",
            "2001:db8:0::1/64",
            "::ffff:1.2.3.4/120",
            "x/24",
        ],
    )
    def test_non_canonical_interface_addresses(self, ip: str) -> None:
        assert findings(base(network_data=NetworkDeviceData(ips=(ip,))), "strict") == [
            (f"{DEVICE}.networkData.ips[0]", "invalid")
        ]


def _meta(**fields: object) -> Callable[[], DeviceMetadata]:
    return lambda: replace(base(), metadata=ObjectMeta(name="claim", **fields))  # type: ignore[arg-type]


def _top(**fields: object) -> Callable[[], DeviceMetadata]:
    return lambda: replace(base(), **fields)  # type: ignore[arg-type]


def _device(**fields: object) -> Callable[[], DeviceMetadata]:
    return lambda: base(**fields)


def _attributes(**attributes: DeviceAttribute) -> Callable[[], DeviceMetadata]:
    return lambda: base(attributes=attributes)


def _network(**fields: object) -> Callable[[], DeviceMetadata]:
    return lambda: base(network_data=NetworkDeviceData(**fields))  # type: ignore[arg-type]


ATTRIBUTE = f"{DEVICE}.attributes[a]"
NETWORK = f"{DEVICE}.networkData"
OWNER = "metadata.ownerReferences[0]"
INV, REQ, LONG, MANY = "invalid", "required", "too_long", "too_many"


def at(path: str, *error_types: str) -> list[tuple[str, str]]:
    """Several findings at one path, in the order given."""
    return [(path, error_type) for error_type in error_types]


# One case per rule of spec §5.1 (and per way a rule reports more than one finding), with the
# findings of Go's validator: path and type of each, in the order validate() promises.
GO_CASES = [
    pytest.param(_meta(generation=-1), [("metadata.generation", INV)], id="generation"),
    pytest.param(
        _meta(managed_fields=[ManagedFieldsEntry(operation="")]),
        [("metadata.managedFields[0].operation", REQ)],
        id="operation-required",
    ),
    pytest.param(
        _meta(managed_fields=[ManagedFieldsEntry(operation="Patch")]),
        [("metadata.managedFields[0].operation", "not_supported")],
        id="operation-unsupported",
    ),
    pytest.param(
        _meta(owner_references=[OwnerReference()]),
        [
            (f"{OWNER}.apiVersion", REQ),
            (f"{OWNER}.kind", REQ),
            (f"{OWNER}.name", REQ),
            (f"{OWNER}.uid", REQ),
        ],
        id="owner-reference-required",
    ),
    pytest.param(
        _meta(owner_references=[OwnerReference("v1", "Pod", "Not A Name!", "?")]),
        [],
        id="owner-reference-free-form",
    ),
    pytest.param(_top(pod_claim_name="INVALID"), [("podClaimName", INV)], id="pod-claim-name"),
    pytest.param(_top(pod_claim_name=""), [("podClaimName", INV)], id="pod-claim-name-empty"),
    pytest.param(_top(pod_claim_name="a.b"), [("podClaimName", INV)], id="pod-claim-name-dots"),
    pytest.param(_top(pod_claim_name="a" * 64), [("podClaimName", INV)], id="pod-claim-name-64"),
    pytest.param(
        _top(pod_claim_name="A" * 64),
        at("podClaimName", INV, INV),
        id="pod-claim-name-64-upper",
    ),
    pytest.param(
        _top(requests=[DeviceMetadataRequest(name="")]),
        [("requests[0].name", REQ)],
        id="request-name",
    ),
    pytest.param(_device(driver=""), [(f"{DEVICE}.driver", REQ)], id="driver-required"),
    pytest.param(_device(driver="-gpu.example.com"), [(f"{DEVICE}.driver", INV)], id="driver"),
    pytest.param(_device(driver="a" * 64), [(f"{DEVICE}.driver", LONG)], id="driver-64"),
    pytest.param(
        _device(driver="_" * 64),
        at(f"{DEVICE}.driver", INV, LONG),
        id="driver-64-malformed",
    ),
    pytest.param(
        _device(driver="a" * 254),
        at(f"{DEVICE}.driver", INV, LONG),
        id="driver-254",
    ),
    pytest.param(
        _device(driver="\u017f" * 63), [], id="driver-63-characters-of-2-bytes"
    ),  # LONG S folds to s
    pytest.param(_device(driver="\u212a8s.io"), [], id="driver-kelvin-sign"),  # folds to k
    pytest.param(
        _device(driver="\u0130.example.com"), [(f"{DEVICE}.driver", INV)], id="driver-dotted-i"
    ),
    pytest.param(_device(pool=""), [(f"{DEVICE}.pool", REQ)], id="pool-required"),
    pytest.param(_device(pool="worker-0/"), [(f"{DEVICE}.pool", INV)], id="pool"),
    pytest.param(
        _device(pool="Worker/"),
        at(f"{DEVICE}.pool", INV, INV),
        id="pool-Worker/",
    ),
    pytest.param(_device(pool="x" * 254), at(f"{DEVICE}.pool", LONG, INV), id="pool-254"),
    pytest.param(
        _device(pool="a" * 200 + "/" + "b" * 53), [(f"{DEVICE}.pool", LONG)], id="pool-254-segments"
    ),
    pytest.param(
        _device(pool="X" * 254),
        at(f"{DEVICE}.pool", LONG, INV, INV),
        id="pool-254-malformed",
    ),
    pytest.param(_device(pool="a//b"), [(f"{DEVICE}.pool", INV)], id="pool-empty-segment"),
    pytest.param(_device(name=""), [(f"{DEVICE}.name", REQ)], id="name-required"),
    pytest.param(_device(name="GPU-0"), [(f"{DEVICE}.name", INV)], id="name"),
    pytest.param(_device(name="gpu.0"), [(f"{DEVICE}.name", INV)], id="name-dots"),
    pytest.param(_device(name="a" * 64), [(f"{DEVICE}.name", INV)], id="name-64"),
    pytest.param(
        _device(name="A" * 64),
        at(f"{DEVICE}.name", INV, INV),
        id="name-64-upper",
    ),
    pytest.param(
        _device(attributes={f"a{index}": DeviceAttribute() for index in range(33)}),
        [(f"{DEVICE}.attributes", MANY)],
        id="attributes-33",
    ),
    pytest.param(_attributes(a=DeviceAttribute()), [(ATTRIBUTE, INV)], id="attribute-no-member"),
    pytest.param(
        _attributes(a=DeviceAttribute(bool=True, strings=("x",))),
        [(ATTRIBUTE, INV)],
        id="attribute-several-members",
    ),
    pytest.param(
        _attributes(a=DeviceAttribute(strings=("x", "é" * 33))),
        [(f"{ATTRIBUTE}.strings[1]", LONG)],
        id="strings-element-66-bytes",
    ),
    pytest.param(
        _attributes(a=DeviceAttribute(int=1, strings=("x" * 65,))),
        [(ATTRIBUTE, INV), (f"{ATTRIBUTE}.strings[0]", LONG)],
        id="attribute-several-members-and-long-strings",
    ),
    pytest.param(
        _network(interface_name="é" * 129),
        [(f"{NETWORK}.interfaceName", LONG)],
        id="interface-name-258-bytes",
    ),
    pytest.param(
        _network(ips=("10.0.0.1/24",) * 17), [(f"{NETWORK}.ips", MANY)], id="ips-17-all-equal"
    ),
    pytest.param(
        _network(ips=("a", "b", "a", "a")),
        [(f"{NETWORK}.ips[2]", "duplicate"), (f"{NETWORK}.ips[3]", "duplicate")],
        id="ips-duplicate",
    ),
    pytest.param(
        _network(hardware_address="a" * 129),
        [(f"{NETWORK}.hardwareAddress", LONG)],
        id="hardware-address-129",
    ),
]


class TestGoFindings:
    """The findings of Go's validator, for objects built by hand and decoded ones alike."""

    @pytest.mark.parametrize("version", [V1ALPHA1, V1BETA1])
    @pytest.mark.parametrize(("make", "expected"), GO_CASES)
    def test_count_and_types(
        self, make: Callable[[], DeviceMetadata], expected: list[tuple[str, str]], version: str
    ) -> None:
        built = replace(make(), api_version=version)
        decoded = decode_stream(encode_stream(built, versions=[version])).metadata
        assert decoded.api_version == version
        assert findings(built) == expected
        assert findings(decoded) == expected
        strict = findings(built, "strict")  # the strict profile adds to these, never drops one
        assert [finding for finding in strict if finding in expected] == expected

    def test_pool_over_253_bytes(self) -> None:
        errors = validate(base(pool="x" * 254))
        assert [(error.type, error.detail) for error in errors] == [
            ("too_long", "may not be more than 253 bytes"),
            ("invalid", "segment 0: must be no more than 253 bytes"),
        ]
        assert {error.value for error in errors} == {"x" * 254}

    def test_pool_segments_are_reported_one_by_one(self) -> None:
        first, second = validate(base(pool="Worker/"))
        assert first.detail.startswith("segment 0: must be a lowercase RFC 1123 subdomain")
        assert second.detail == "segment 1: must not be empty"
        assert str(second) == (
            'requests[0].devices[0].pool: Invalid value: "Worker/": segment 1: must not be empty'
        )

    def test_attribute_union_values(self) -> None:
        (none,) = validate(base(attributes={"a": DeviceAttribute()}))
        assert (none.type, none.value) == ("invalid", "")
        assert none.detail == (
            "must specify one of: `int`, `bool`, `string`, `version`, `ints`, `bools`, "
            "`strings`, `versions`"
        )
        (several,) = validate(base(attributes={"a": DeviceAttribute(bool=True, string="x")}))
        assert (several.type, several.value) == ("invalid", "{bool, string}")
        assert several.detail.startswith("must specify exactly one of: `int`, ")

    def test_driver_length_counts_characters(self) -> None:
        (error,) = validate(base(driver="a" * 64))
        assert (error.type, error.detail) == ("too_long", "may not be more than 63 characters")

    def test_name_length_and_spelling_are_two_findings(self) -> None:
        details = [error.detail for error in validate(base(name="A" * 64))]
        assert details[0] == "must be no more than 63 bytes"
        assert details[1].startswith("must be a lowercase RFC 1123 label")
        (dotted,) = validate(base(name="gpu.0"))
        assert dotted.detail == "must not contain dots"

    def test_too_many_shows_the_count_as_go_does(self) -> None:
        attributes = {f"a{index}": MODEL for index in range(33)}
        (error,) = validate(base(attributes=attributes))
        assert str(error) == (
            "requests[0].devices[0].attributes: Too many: 33: must have at most 32 attributes"
        )

    def test_readme_maps_each_type_to_go_one_to_one(self) -> None:
        page = (REPO / "docs" / "reference" / "validation.md").read_text(encoding="utf-8")
        rows = re.findall(
            r"^\| `([a-z_]+)` \| `(FieldValue\w+)` \| ([^|]+?) \|", page, re.MULTILINE
        )
        assert {name: (go_type, message) for name, go_type, message in rows} == GO_ERROR_TYPES
        assert set(GO_ERROR_TYPES) == set(get_args(ErrorType))
        assert len({go_type for go_type, _ in GO_ERROR_TYPES.values()}) == len(GO_ERROR_TYPES)


class TestWithDecodingAndReading:
    def test_fixtures_decode_without_validation(self) -> None:
        for fixture in ("HEAD", "v1.36.0"):
            result = decode_stream((UPSTREAM / fixture / "metadata.json").read_bytes())
            assert result.errors == ()

    @pytest.mark.parametrize("fixture", ["HEAD", "v1.36.0"])
    def test_fixtures_report_their_deliberately_invalid_fields(self, fixture: str) -> None:
        result = decode_stream((UPSTREAM / fixture / "metadata.json").read_bytes(), validate=True)
        assert [(error.path, error.type) for error in result.errors] == [
            ("metadata.managedFields[0].operation", "not_supported"),
            ("podClaimName", "invalid"),
            ("requests[0].devices[0].attributes[model]", "invalid"),
        ]
        assert result.metadata.name == "claim"  # decoded all the same

    @pytest.mark.parametrize("version", [V1ALPHA1, V1BETA1])
    def test_upstream_decode_cases_12_and_13(self, version: str) -> None:
        data = stream(wire_object(version, podClaimName="%!$#"))
        assert decode_stream(data).errors == ()
        result = decode_stream(data, validate=True)
        assert result.metadata.pod_claim_name == "%!$#"
        assert [error.path for error in result.errors] == ["podClaimName"]

    def test_valid_stream_has_no_errors(self) -> None:
        assert decode_stream(stream(wire_object()), validate="strict").errors == ()

    def test_reader_raises_with_everything(self, tmp_path: Path) -> None:
        path = tmp_path / "x-metadata.json"
        path.write_bytes(stream(wire_object(podClaimName="BAD")))
        assert read_metadata_file(path).pod_claim_name == "BAD"
        with pytest.raises(MetadataValidationError) as info:
            read_metadata_file(path, validate=True)
        error = info.value
        assert error.path == path
        assert error.metadata.pod_claim_name == "BAD"
        assert [(e.path, e.file) for e in error.errors] == [("podClaimName", path)]
        assert str(error).startswith(f"{path}: 1 validation error: {path}: podClaimName: Invalid")

    def test_merged_read_validates_each_file(self, tmp_path: Path) -> None:
        directory = resource_claim_request_dir("my-claim", "gpu", root=tmp_path)
        directory.mkdir(parents=True)
        (directory / "a-metadata.json").write_bytes(stream(wire_object(V1ALPHA1)))
        bad_device = {"driver": "", "pool": "p", "name": "n"}
        bad = wire_object(V1BETA1, requests=[{"name": "gpu", "devices": [bad_device]}])
        (directory / "b-metadata.json").write_bytes(stream(bad))
        assert (
            len(read_claim_metadata("my-claim", "gpu", root=tmp_path, validate=False).devices) == 2
        )
        with pytest.raises(MetadataValidationError) as info:
            read_claim_metadata("my-claim", "gpu", root=tmp_path, validate="strict")
        (error,) = info.value.errors
        assert (error.path, error.file) == (
            "requests[0].devices[0].driver",
            directory / "b-metadata.json",
        )
        assert len(info.value.metadata.devices) == 2
        assert info.value.path == directory

    def test_only_metadata_is_validated(self) -> None:
        with pytest.raises(TypeError, match="metadata must be a DeviceMetadata, not dict"):
            validate({"kind": "DeviceMetadata"})  # type: ignore[arg-type]

    def test_validate_option_values(self) -> None:
        with pytest.raises(ValueError, match="validate must be"):
            decode_stream(stream(wire_object()), validate="yes")  # type: ignore[arg-type]


_KEYS = st.sampled_from(
    ["model", "gpu.example.com/uuid", "Bad.Domain/x", "/x", "a/b/c", "9lives", "x" * 33]
)
_SCALARS = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(lambda v: DeviceAttribute(int=v)),
    st.booleans().map(lambda v: DeviceAttribute(bool=v)),
    st.text(max_size=70).map(lambda v: DeviceAttribute(string=v)),
    st.sampled_from(["1.2.3", "1.2.3-rc.1+b5", "01.2.3", "1.2", "v1.0.0", "1.0.0-" + "a" * 60]).map(
        lambda v: DeviceAttribute(version=v)
    ),
)


@settings(max_examples=150, deadline=None)  # correctness, not speed: the machine may be busy
@given(st.lists(st.dictionaries(_KEYS, _SCALARS, max_size=7), min_size=1, max_size=3))
def test_decoded_single_scalars_get_the_findings_of_built_ones(
    attribute_maps: list[dict[str, DeviceAttribute]],
) -> None:
    # The decoder marks maps whose attributes hold one scalar member each, and validation then
    # checks their wire objects instead of DeviceAttributes: the findings must not differ.
    built = base()
    device = built.requests[0].devices[0]
    devices = [
        replace(device, name=f"gpu-{index}", attributes=attributes)
        for index, attributes in enumerate(attribute_maps)
    ]
    built = replace(built, requests=[replace(built.requests[0], devices=devices)])
    decoded = decode_stream(encode_stream(built, versions=[V1BETA1])).metadata
    assert all(
        getattr(each.attributes, "one_scalar_member_each", False)
        for each in decoded.requests[0].devices
        if each.attributes
    )
    for profile in ("metadata", "strict"):
        assert validate(decoded, profile=profile) == validate(built, profile=profile)
