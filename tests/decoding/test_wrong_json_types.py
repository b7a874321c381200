"""A value of the wrong JSON type: a typed error that names its wire path and quotes the value.

Only the public API is used, so that rewrites of the decoder keep these tests valid. Each error
is checked for its type, the key facts of its message and its attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dra_metadata import (
    MetadataDecodeError,
    NetworkDeviceData,
    decode_stream,
)

from helpers import V1ALPHA1, stream, wire_object


def decode_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    return info.value


def with_device_field(field: str, value: object) -> dict[str, Any]:
    obj = wire_object()
    obj["requests"][0]["devices"][0][field] = value
    return obj


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
