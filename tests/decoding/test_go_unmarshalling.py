"""Go's unmarshalling on the exact path: duplicate keys, nulls, cut-off elements, int64.

Only the public API is used: an object whose ``kind`` key is spelled ``KIND`` (found by Go's
case-insensitive lookup) is read by the exact parser, the same object with ``kind`` by orjson.
Objects without duplicate keys decode alike on both paths, errors included.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dra_metadata import MetadataDecodeError, decode_stream

from helpers import V1ALPHA1

PATHS = ["fast", "exact"]


def known(body: str, path: str = "exact") -> bytes:
    kind = "kind" if path == "fast" else "KIND"
    return f'{{"{kind}":"DeviceMetadata","apiVersion":"{V1ALPHA1}",{body}}}'.encode()


def field_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    assert (info.value.api_version, info.value.object_index) == (V1ALPHA1, 1)
    return info.value


def device(body: str) -> str:
    return f'"requests":[{{"name":"r","devices":[{body}]}}]'


def attribute(member: str) -> str:
    return device(f'{{"name":"d","attributes":{{"a":{{{member}}}}}}}')


LONG = "x" * 41
WRONG_TYPES = [
    # body, the field at fault, what the message says of it
    ('"requests":{"a":1}', "requests", "expected an array, got an object"),
    ('"requests":[7]', "requests[0]", "expected an object, got the number 7"),
    ('"requests":[{"name":3}]', "requests[0].name", "expected a string, got the number 3"),
    (
        '"requests":[{"devices":"x"}]',
        "requests[0].devices",
        "expected an array, got a string ('x')",
    ),
    (device("true"), "requests[0].devices[0]", "expected an object, got true"),
    (device('{"driver":false}'), "requests[0].devices[0].driver", "expected a string, got false"),
    (device('{"pool":[]}'), "requests[0].devices[0].pool", "expected a string, got an array"),
    (device('{"name":{}}'), "requests[0].devices[0].name", "expected a string, got an object"),
    (
        device('{"pool":"' + LONG + '","driver":7}'),
        "requests[0].devices[0].driver",
        "expected a string, got the number 7",
    ),
    (
        device('{"attributes":[]}'),
        "requests[0].devices[0].attributes",
        "expected an object, got an array",
    ),
    (
        device('{"attributes":{"a":5}}'),
        "requests[0].devices[0].attributes[a]",
        "expected an object, got the number 5",
    ),
    (
        attribute('"int":"5"'),
        "requests[0].devices[0].attributes[a].int",
        "expected an integer in the int64 range, got a string ('5')",
    ),
    (
        attribute('"bool":1'),
        "requests[0].devices[0].attributes[a].bool",
        "expected true or false, got the number 1",
    ),
    (
        attribute('"string":true'),
        "requests[0].devices[0].attributes[a].string",
        "expected a string, got true",
    ),
    (
        attribute('"version":2'),
        "requests[0].devices[0].attributes[a].version",
        "expected a string, got the number 2",
    ),
    (
        attribute('"ints":[1,"2"]'),
        "requests[0].devices[0].attributes[a].ints[1]",
        "expected an integer in the int64 range, got a string ('2')",
    ),
    (
        attribute('"ints":{}'),
        "requests[0].devices[0].attributes[a].ints",
        "expected an array, got an object",
    ),
    (
        attribute('"bools":[true,0]'),
        "requests[0].devices[0].attributes[a].bools[1]",
        "expected true or false, got the number 0",
    ),
    (
        attribute('"strings":["s",false]'),
        "requests[0].devices[0].attributes[a].strings[1]",
        "expected a string, got false",
    ),
    (
        attribute('"versions":[1]'),
        "requests[0].devices[0].attributes[a].versions[0]",
        "expected a string, got the number 1",
    ),
    (
        attribute(f'"string":{json.dumps(LONG)},"int":{json.dumps(LONG)}'),
        "requests[0].devices[0].attributes[a].int",
        f"expected an integer in the int64 range, got a string ('{'x' * 37}...')",
    ),
    (
        attribute(f'"int":{json.dumps(LONG[1:])}'),  # 40 characters are shown whole
        "requests[0].devices[0].attributes[a].int",
        f"expected an integer in the int64 range, got a string ('{LONG[1:]}')",
    ),
    (
        device('{"networkData":[]}'),
        "requests[0].devices[0].networkData",
        "expected an object, got an array",
    ),
    (
        device('{"networkData":{"interfaceName":1}}'),
        "requests[0].devices[0].networkData.interfaceName",
        "expected a string, got the number 1",
    ),
    (
        device('{"networkData":{"ips":["a",2]}}'),
        "requests[0].devices[0].networkData.ips[1]",
        "expected a string, got the number 2",
    ),
    (
        device('{"networkData":{"ips":"a"}}'),
        "requests[0].devices[0].networkData.ips",
        "expected an array, got a string ('a')",
    ),
    (
        device('{"networkData":{"hardwareAddress":true}}'),
        "requests[0].devices[0].networkData.hardwareAddress",
        "expected a string, got true",
    ),
    ('"podClaimName":5', "podClaimName", "expected a string, got the number 5"),
    ('"metadata":[]', "metadata", "expected an object, got an array"),
    ('"metadata":{"name":1}', "metadata.name", "expected a string, got the number 1"),
    ('"metadata":{"namespace":[]}', "metadata.namespace", "expected a string, got an array"),
    ('"metadata":{"uid":true}', "metadata.uid", "expected a string, got true"),
    (
        '"metadata":{"generateName":1}',
        "metadata.generateName",
        "expected a string, got the number 1",
    ),
    ('"metadata":{"selfLink":1}', "metadata.selfLink", "expected a string, got the number 1"),
    (
        '"metadata":{"resourceVersion":1}',
        "metadata.resourceVersion",
        "expected a string, got the number 1",
    ),
    (
        '"metadata":{"generation":"1"}',
        "metadata.generation",
        "expected an integer in the int64 range, got a string ('1')",
    ),
    (
        '"metadata":{"generation":1.0}',
        "metadata.generation",
        "expected an integer in the int64 range, got the number 1.0",
    ),
    (
        '"metadata":{"generation":1e2}',
        "metadata.generation",
        "expected an integer in the int64 range, got the number 1e2",
    ),
    (
        '"metadata":{"generation":9223372036854775808}',
        "metadata.generation",
        "expected an integer in the int64 range, got the number 9223372036854775808",
    ),
    (
        '"metadata":{"generation":-9223372036854775809}',
        "metadata.generation",
        "expected an integer in the int64 range, got the number -9223372036854775809",
    ),
    (
        '"metadata":{"generation":12345678901234567890123}',
        "metadata.generation",
        "expected an integer in the int64 range, got the number 12345678901234567890123",
    ),
    (
        '"metadata":{"deletionGracePeriodSeconds":true}',
        "metadata.deletionGracePeriodSeconds",
        "expected an integer in the int64 range, got true",
    ),
    ('"metadata":{"labels":[]}', "metadata.labels", "expected an object, got an array"),
    ('"metadata":{"labels":{"k":1}}', "metadata.labels[k]", "expected a string, got the number 1"),
    (
        '"metadata":{"annotations":{"k":{}}}',
        "metadata.annotations[k]",
        "expected a string, got an object",
    ),
    (
        '"metadata":{"finalizers":[1]}',
        "metadata.finalizers[0]",
        "expected a string, got the number 1",
    ),
    ('"metadata":{"finalizers":{}}', "metadata.finalizers", "expected an array, got an object"),
    (
        '"metadata":{"ownerReferences":[1]}',
        "metadata.ownerReferences[0]",
        "expected an object, got the number 1",
    ),
    (
        '"metadata":{"ownerReferences":{}}',
        "metadata.ownerReferences",
        "expected an array, got an object",
    ),
    *(
        (
            f'"metadata":{{"ownerReferences":[{{"{key}":1}}]}}',
            f"metadata.ownerReferences[0].{key}",
            "expected a string, got the number 1",
        )
        for key in ("apiVersion", "kind", "name", "uid")
    ),
    *(
        (
            f'"metadata":{{"ownerReferences":[{{"{key}":"yes"}}]}}',
            f"metadata.ownerReferences[0].{key}",
            "expected true or false, got a string ('yes')",
        )
        for key in ("controller", "blockOwnerDeletion")
    ),
    *(
        (
            f'"metadata":{{"managedFields":[{{"{key}":1}}]}}',
            f"metadata.managedFields[0].{key}",
            "expected a string, got the number 1",
        )
        for key in ("manager", "operation", "apiVersion", "fieldsType", "subresource")
    ),
    (
        '"metadata":{"managedFields":[null,{"time":5}]}',
        "metadata.managedFields[1].time",
        "expected an RFC 3339 time string, got the number 5",
    ),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("body", "field", "problem"), WRONG_TYPES)
def test_a_wrong_type_on_either_path(body: str, field: str, problem: str, path: str) -> None:
    error = field_error(known(body, path))
    assert error.field == field
    assert str(error) == f"decode {V1ALPHA1}: object 1, field {field}: {problem}"


def test_the_first_wrong_type_in_the_document_is_reported() -> None:
    error = field_error(known('"metadata":{"uid":6,"name":5},"podClaimName":1'))
    assert error.field == "metadata.uid"
    error = field_error(known(attribute('"bools":[1],"int":"x"')))
    assert error.field == "requests[0].devices[0].attributes[a].bools[0]"


def test_a_time_that_does_not_parse_stops_decoding_at_once() -> None:
    # A wrong type is remembered and decoding goes on; a time's own error ends it (Go).
    body = '"metadata":{"name":5,"creationTimestamp":"never","uid":6}'
    error = field_error(known(body))
    assert error.field == "metadata.creationTimestamp"
    assert str(error).endswith("not an RFC 3339 time (the year must be four digits): 'never'")


@pytest.mark.parametrize("path", PATHS)
def test_the_int64_range_and_minus_zero(path: str) -> None:
    body = (
        '"metadata":{"generation":-0,"deletionGracePeriodSeconds":-9223372036854775808},'
        + attribute('"ints":[9223372036854775807,-9223372036854775808,0,-0]')
    )
    metadata = decode_stream(known(body, path)).metadata
    assert metadata.metadata.generation == 0
    assert metadata.metadata.deletion_grace_period_seconds == -(2**63)
    assert metadata.devices[0].attributes["a"].ints == (2**63 - 1, -(2**63), 0, 0)


@pytest.mark.parametrize("path", PATHS)
def test_null_elements_and_entries_are_zero_values(path: str) -> None:
    body = (
        '"metadata":{"labels":{"k":null},"finalizers":[null,"f"],"ownerReferences":[null]},'
        '"requests":[{"name":"r","devices":[null,{"name":"d","attributes":{'
        '"i":{"ints":[null,2]},"b":{"bools":[null]},"s":{"strings":[null]},"n":null}}]}]'
    )
    metadata = decode_stream(known(body, path)).metadata
    assert dict(metadata.metadata.labels) == {"k": ""}
    assert metadata.metadata.finalizers == ("", "f")
    (owner,) = metadata.metadata.owner_references
    assert (owner.name, owner.controller, owner.block_owner_deletion) == ("", None, None)
    first, second = metadata.devices
    assert (first.driver, first.pool, first.name, len(first.attributes)) == ("", "", "", 0)
    assert first.network_data is None
    attributes = second.attributes
    assert (attributes["i"].ints, attributes["b"].bools, attributes["s"].strings) == (
        (0, 2),
        (False,),
        ("",),
    )
    assert attributes["n"].members == ()


@pytest.mark.parametrize("path", PATHS)
def test_null_members_and_pointers_are_unset(path: str) -> None:
    body = (
        '"podClaimName":null,"metadata":{"deletionGracePeriodSeconds":null,'
        '"ownerReferences":[{"controller":null,"blockOwnerDeletion":true}]},'
        + device(
            '{"name":"d","networkData":null,"attributes":{"a":{"int":null,"bool":null,'
            '"string":"s","version":null,"ints":null}}}'
        )
    )
    metadata = decode_stream(known(body, path)).metadata
    assert metadata.pod_claim_name is None
    assert metadata.metadata.deletion_grace_period_seconds is None
    (owner,) = metadata.metadata.owner_references
    assert (owner.controller, owner.block_owner_deletion) == (None, True)
    (only,) = metadata.devices
    assert only.network_data is None
    assert only.attributes["a"].members == ("string",)


class TestDuplicateKeys:
    def test_a_second_null_clears_pointers_maps_and_slices(self) -> None:
        body = (
            '"podClaimName":"p","podClaimName":null,'
            '"metadata":{"annotations":{"a":"b"},"finalizers":["f"],"deletionTimestamp":'
            '"2008-01-02T03:04:05Z","ownerReferences":[{"controller":true}]},'
            '"metadata":{"annotations":null,"finalizers":null,"deletionTimestamp":null,'
            '"ownerReferences":[{"controller":null}]},'
            + device(
                '{"name":"d","networkData":{"interfaceName":"n","ips":["i"]},'
                '"attributes":{"a":{"int":1,"ints":[1]}}}'
            )
            + ","
            + device('{"networkData":null,"attributes":{"a":{"int":null,"ints":null}}}')
        )
        metadata = decode_stream(known(body)).metadata
        assert metadata.pod_claim_name is None
        meta = metadata.metadata
        assert (dict(meta.annotations), meta.finalizers, meta.deletion_timestamp) == ({}, (), None)
        assert meta.owner_references[0].controller is None
        (only,) = metadata.devices
        assert only.name == "d"  # the device was decoded into, not replaced
        assert only.network_data is None
        assert only.attributes["a"].members == ()  # a map entry starts afresh

    def test_a_second_null_leaves_strings_numbers_and_structs(self) -> None:
        body = (
            '"metadata":{"name":"n","generation":3,"labels":{"a":"b"}},'
            '"metadata":{"name":null,"generation":null},"metadata":null,'
            + device('{"name":"d","pool":"p","driver":"x"}')
            + ","
            + device('{"name":null,"pool":null,"driver":null}')
        )
        metadata = decode_stream(known(body)).metadata
        assert (metadata.name, metadata.metadata.generation) == ("n", 3)
        assert dict(metadata.metadata.labels) == {"a": "b"}
        (only,) = metadata.devices
        assert (only.name, only.pool, only.driver) == ("d", "p", "x")

    def test_objects_merge_at_every_level(self) -> None:
        body = (
            '"metadata":{"ownerReferences":[{"name":"o","uid":"u"}],"labels":{"a":"1"}},'
            '"metadata":{"ownerReferences":[{"kind":"K"}],"labels":{"b":"2"}},'
            + device('{"name":"d","networkData":{"interfaceName":"n"}}')
            + ","
            + device('{"networkData":{"ips":["i"]}}')
        )
        metadata = decode_stream(known(body)).metadata
        (owner,) = metadata.metadata.owner_references
        assert (owner.name, owner.uid, owner.kind) == ("o", "u", "K")
        assert dict(metadata.metadata.labels) == {"a": "1", "b": "2"}
        data = metadata.devices[0].network_data
        assert data is not None
        assert (data.interface_name, data.ips) == ("n", ("i",))

    def test_an_empty_array_drops_what_came_before(self) -> None:
        body = '"requests":[{"name":"a"},{"name":"b"}],"requests":[],"requests":[null]'
        (request,) = decode_stream(known(body)).metadata.requests
        assert request.name == ""

    def test_a_later_time_replaces_an_earlier_one(self) -> None:
        body = (
            '"metadata":{"creationTimestamp":"2008-01-02T03:04:05Z"},'
            '"metadata":{"creationTimestamp":"2009-01-02T03:04:05Z"}'
        )
        created = decode_stream(known(body)).metadata.metadata.creation_timestamp
        assert created is not None
        assert created.year == 2009

    def test_fields_v1_given_twice_keeps_the_last(self) -> None:
        body = (
            '"metadata":{"managedFields":[{"fieldsV1":{"a":1},"manager":"m"}]},'
            '"metadata":{"managedFields":[{"fieldsV1":{"b":2}}]},'
            '"metadata":{"managedFields":[{"fieldsV1":null}]}'
        )
        (entry,) = decode_stream(known(body)).metadata.metadata.managed_fields
        assert (entry.fields_v1, entry.manager) == (None, "m")
        body = body.rpartition(",")[0]
        (entry,) = decode_stream(known(body)).metadata.metadata.managed_fields
        assert entry.fields_v1 == {"b": 2}


# Go decodes a duplicate array into the slice the first one made: elements beyond the new
# length stay in its backing array, and a later, longer array decodes into them again (null
# leaves them as they were); beyond them, elements start from their zero value.
def _three_then_one_then_four(key: str, items: list[str], one: str) -> str:
    nulls = "null,null,null,null"
    return f'"{key}":[{",".join(items)}],"{key}":[{one}],"{key}":[{nulls}]'


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("finalizers", ("x", "f1", "f2", "")),
        ("ints", (7, 1, 2, 0)),
        ("bools", (False, True, True, False)),
        ("requests", ("x", "f1", "f2", "")),
        ("devices", ("x", "f1", "f2", "")),
        ("ownerReferences", ("x", "f1", "f2", "")),
        ("managedFields", ("x", "f1", "f2", "")),
    ],
)
def test_elements_cut_off_come_back(kind: str, expected: tuple[Any, ...]) -> None:
    named = [f'{{"name":"f{index}","manager":"f{index}"}}' for index in range(3)]
    one = '{"name":"x","manager":"x"}'
    if kind == "finalizers":
        body = (
            '"metadata":{"finalizers":["f0","f1","f2"]},"metadata":{"finalizers":["x"]},'
            '"metadata":{"finalizers":[null,null,null,null]}'
        )
        assert decode_stream(known(body)).metadata.metadata.finalizers == expected
    elif kind in {"ints", "bools"}:
        values = ["0", "1", "2"] if kind == "ints" else ["false", "true", "true"]
        member = _three_then_one_then_four(kind, values, "7" if kind == "ints" else "false")
        attributes = decode_stream(known(attribute(member))).metadata.devices[0].attributes
        assert getattr(attributes["a"], kind) == expected
    elif kind == "requests":
        requests = decode_stream(known(_three_then_one_then_four(kind, named, one))).metadata
        assert tuple(request.name for request in requests.requests) == expected
    elif kind == "devices":
        body = f'"requests":[{{{_three_then_one_then_four(kind, named, one)}}}]'
        devices = decode_stream(known(body)).metadata.devices
        assert tuple(item.name for item in devices) == expected
    else:
        three = f'"metadata":{{"{kind}":[{",".join(named)}]}}'
        body = (
            f'{three},"metadata":{{"{kind}":[{one}]}},"metadata":{{"{kind}":[null,null,null,null]}}'
        )
        meta = decode_stream(known(body)).metadata.metadata
        if kind == "ownerReferences":
            assert tuple(item.name for item in meta.owner_references) == expected
        else:
            assert tuple(item.manager for item in meta.managed_fields) == expected


def test_an_element_cut_off_is_decoded_into_again() -> None:
    body = (
        '"requests":[{"devices":[{"name":"a","pool":"p"},{"name":"b","pool":"q"},{"name":"c"}],'
        '"devices":[{"name":"x"}],"devices":[null,{"name":"y"},null,{"name":"z"}]}]'
    )
    devices = decode_stream(known(body)).metadata.devices
    assert [(item.name, item.pool) for item in devices] == [
        ("x", "p"),
        ("y", "q"),
        ("c", ""),
        ("z", ""),
    ]
