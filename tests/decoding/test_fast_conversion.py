"""Wire objects to models (dra_metadata._decoding._convert): results, errors, and the fast path.

Results and errors are checked through the public API. The realistic stream must also stay on
the fast path, which no result shows: those tests spy on the complete, slower checks of
_convert (``_str``, ``_list``, ``_object`` of a field with its path, the ObjectMeta table
``_from_table``, the per-attribute ``_check_one_by_one``) and on the working out of an
attribute layout (``_derive_layout``, ``_layout``), and start from no remembered layout
(``_LAYOUTS``). The inputs that need the complete check are decoded alongside, for Go's result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dra_metadata import (
    DeviceMetadata,
    MetadataDecodeError,
    NetworkDeviceData,
    decode_stream,
)
from dra_metadata._decoding import _convert as convert_module
from dra_metadata._decoding import _fields as fields_module

from helpers import stream, wire_object

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
SLOW_CHECKS = ("_str", "_list", "_object", "_from_table", "_check_one_by_one")
LAYOUT_WORK = ("_derive_layout", "_layout")


class Calls:
    """The calls of the spied functions of _convert, by name, since the last reset."""

    def __init__(self) -> None:
        self.args: dict[str, list[tuple[Any, ...]]] = {}
        self.reset()

    def reset(self) -> None:
        self.args = {name: [] for name in SLOW_CHECKS + LAYOUT_WORK}

    def slow(self) -> dict[str, list[tuple[Any, ...]]]:
        """The complete checks that ran, with their arguments (empty on the fast path)."""
        return {name: self.args[name] for name in SLOW_CHECKS if self.args[name]}

    def count(self, name: str) -> int:
        return len(self.args[name])


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    seen = Calls()
    # The field checkers live in _fields and are called from both modules: each module's
    # name is spied (a call counts once, in the module that makes it).
    for name in SLOW_CHECKS + LAYOUT_WORK:
        spy = _spy(getattr(convert_module, name), name, seen)
        for module in (convert_module, fields_module):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, spy)
    monkeypatch.setattr(convert_module, "_LAYOUTS", {})
    return seen


def _spy(original: Callable[..., Any], name: str, seen: Calls) -> Callable[..., Any]:
    def spy(*args: Any) -> Any:
        seen.args[name].append(args)
        return original(*args)

    return spy


def decode(*devices: dict[str, Any], **top_level: Any) -> DeviceMetadata:
    obj = wire_object(requests=[{"name": "r", "devices": list(devices)}], **top_level)
    return decode_stream(stream(obj)).metadata


def device(index: int, attributes: dict[str, Any] | None) -> dict[str, Any]:
    return {"driver": "gpu.example.com", "pool": "p", "name": f"n{index}", "attributes": attributes}


def decode_attributes(*attributes: dict[str, Any]) -> DeviceMetadata:
    return decode(*(device(index, each) for index, each in enumerate(attributes)))


# A realistic device: qualified and unqualified names, all eight value kinds, network data.


def realistic_attributes(index: int, lists: bool) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gpu.example.com/model": {"string": f"model-{index}"},
        "gpu.example.com/memory": {"int": 80 + index},
        "healthy": {"bool": index % 2 == 0},
        "driverVersion": {"version": f"1.{index}.0"},
        "resource.kubernetes.io/pciBusID": {"string": f"0000:{index:02x}:00.0"},
    }
    if lists:
        attributes |= {
            "ports": {"ints": [index, INT64_MAX, INT64_MIN]},
            "links": {"bools": [True, index % 2 == 1]},
            "modes": {"strings": ["a", f"m{index}"]},
            "apis": {"versions": ["1.0.0", f"2.{index}.0"]},
        }
    return attributes


def realistic_device(index: int, lists: bool) -> dict[str, Any]:
    network = {"interfaceName": f"eth{index}", "ips": [f"10.0.0.{index}/24"]}
    network["hardwareAddress"] = f"00:00:5e:00:53:{index:02x}"
    return {**device(index, realistic_attributes(index, lists)), "networkData": network}


def realistic(devices: int, lists: bool, first: int = 0) -> DeviceMetadata:
    return decode(*(realistic_device(first + index, lists) for index in range(devices)))


def assert_realistic(metadata: DeviceMetadata, devices: int, lists: bool, first: int = 0) -> None:
    assert metadata.name == "my-claim"
    assert metadata.generation == 1
    assert len(metadata.devices) == devices
    for index, found in enumerate(metadata.devices, start=first):
        expected = realistic_attributes(index, lists)
        assert list(found.attributes) == list(expected)
        assert {name: found.attribute(name) for name in expected} == {
            name: (tuple(value) if isinstance(value, list) else value)
            for name, member in expected.items()
            for value in member.values()
        }
        assert found.network_data == NetworkDeviceData(
            f"eth{index}", (f"10.0.0.{index}/24",), f"00:00:5e:00:53:{index:02x}"
        )
        assert getattr(found.attributes, "one_scalar_member_each", False) is not lists


class TestTheRealisticStreamStaysOnTheFastPath:
    """The realistic stream is type-checked in bulk, with a remembered layout."""

    @pytest.mark.parametrize("lists", [False, True], ids=["scalars", "lists"])
    @pytest.mark.parametrize("devices", [1, 2, 16])
    def test_a_layout_is_worked_out_once_then_remembered(
        self, calls: Calls, devices: int, lists: bool
    ) -> None:
        assert_realistic(realistic(devices, lists), devices, lists)
        assert calls.slow() == {}
        assert calls.count("_derive_layout") == 1
        calls.reset()
        metadata = realistic(devices, lists, first=devices)  # other values, the same layout
        assert_realistic(metadata, devices, lists, first=devices)
        assert calls.slow() == {}
        assert calls.count("_derive_layout") == calls.count("_layout") == 0

    @pytest.mark.parametrize("devices", [1, 2, 16])
    def test_devices_alike_are_laid_out_from_the_first(self, calls: Calls, devices: int) -> None:
        # The cost of working a layout out does not grow with the number of devices alike.
        assert_realistic(realistic(devices, True), devices, True)
        per_device = len(realistic_attributes(0, True))
        assert [(len(names), repeats) for names, repeats in calls.args["_layout"]] == [
            (per_device, devices)
        ]

    def test_several_layouts_are_remembered_at_once(self, calls: Calls) -> None:
        # A node with files of several drivers: each layout is remembered after its first name.
        other = {"other.example.com/kind": {"string": "nic"}, "speed": {"int": 100}}
        for _ in range(3):
            assert_realistic(realistic(2, True), 2, True)
            assert decode_attributes(other, other).devices[1].attribute("speed") == 100
        assert calls.slow() == {}
        assert calls.count("_derive_layout") == 2

    def test_the_int64_bounds_and_empty_lists(self, calls: Calls) -> None:
        attributes = {
            "max": {"int": INT64_MAX},
            "min": {"int": INT64_MIN},
            "ints": {"ints": [INT64_MAX, INT64_MIN, 0]},
            "no-ints": {"ints": []},
            "no-bools": {"bools": []},
            "no-strings": {"strings": []},
            "no-versions": {"versions": []},
        }
        for _ in range(2):
            found = decode_attributes(attributes, attributes).devices[1]
            assert found.attribute("max") == INT64_MAX
            assert found.attribute("min") == INT64_MIN
            assert found.attribute("ints") == (INT64_MAX, INT64_MIN, 0)
            assert [found.attributes[name].members for name in list(attributes)[3:]] == [()] * 4
        assert calls.slow() == {}
        assert calls.count("_derive_layout") == 1

    def test_the_largest_layout_remembered(self, calls: Calls) -> None:
        # 4096 attributes (128 devices of 32) are remembered; a larger object is not.
        largest = {f"a{index}": {"int": index} for index in range(32)}
        for _ in range(2):
            assert decode_attributes(*[largest] * 128).devices[127].attribute("a31") == 31
        assert calls.count("_derive_layout") == 1
        larger = {f"b{index}": {"int": index} for index in range(4097)}
        for _ in range(2):
            assert decode_attributes(larger).devices[0].attribute("b4096") == 4096
        assert calls.count("_derive_layout") == 3
        assert calls.slow() == {}

    def test_the_layouts_remembered_are_few_at_every_step(self, calls: Calls) -> None:
        for index in range(2 * convert_module._LAYOUTS_KEPT + 1):
            assert (
                decode_attributes({f"a{index}": {"int": index}}).devices[0].attribute(f"a{index}")
                == index
            )
            assert 1 <= len(convert_module._LAYOUTS) <= convert_module._LAYOUTS_KEPT
        assert calls.slow() == {}


def edited(edit: Callable[[dict[str, Any]], object]) -> bytes:
    obj = wire_object()
    obj["requests"][0]["devices"][0]["networkData"] = {
        "interfaceName": "eth0",
        "ips": ["10.0.0.1/24"],
        "hardwareAddress": "aa:bb",
    }
    edit(obj)
    return stream(obj)


def first_request(obj: dict[str, Any]) -> dict[str, Any]:
    request: dict[str, Any] = obj["requests"][0]
    return request


def first_device(obj: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = obj["requests"][0]["devices"][0]
    return found


def network(obj: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = first_device(obj)["networkData"]
    return found


def without(key: str, part: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[..., object]:
    return lambda obj: part(obj).pop(key)


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = obj["metadata"]
    return found


def names(metadata: DeviceMetadata) -> tuple[object, ...]:
    return (metadata.name, metadata.namespace, metadata.uid, metadata.generation)


def device_fields(metadata: DeviceMetadata) -> tuple[object, ...]:
    found = metadata.devices[0]
    return (found.driver, found.pool, found.name, dict(found.attributes))


def network_data(metadata: DeviceMetadata) -> NetworkDeviceData | None:
    return metadata.devices[0].network_data


DRIVERS_WRITE = [
    # what drivers write, every optional field left out in turn: what it decodes to
    ("as written", lambda _: None, names, ("my-claim", "default", "uid-1234", 1)),
    ("no name", without("name", meta), names, ("", "default", "uid-1234", 1)),
    ("no namespace", without("namespace", meta), names, ("my-claim", "", "uid-1234", 1)),
    ("no uid", without("uid", meta), names, ("my-claim", "default", "", 1)),
    ("no generation", without("generation", meta), names, ("my-claim", "default", "uid-1234", 0)),
    (
        "generation 0",
        lambda obj: meta(obj).update(generation=0),
        names,
        ("my-claim", "default", "uid-1234", 0),
    ),
    (
        "largest generation",
        lambda obj: meta(obj).update(generation=INT64_MAX),
        names,
        ("my-claim", "default", "uid-1234", INT64_MAX),
    ),
    ("empty metadata", lambda obj: meta(obj).clear(), names, ("", "", "", 0)),
    ("no requests", lambda obj: obj.pop("requests"), lambda m: m.requests, ()),
    ("no request name", without("name", first_request), lambda m: m.requests[0].name, ""),
    ("no devices", without("devices", first_request), lambda m: m.requests[0].devices, ()),
    (
        "no driver",
        without("driver", first_device),
        lambda m: device_fields(m)[:3],
        ("", "worker-0", "gpu-0"),
    ),
    (
        "no pool",
        without("pool", first_device),
        lambda m: device_fields(m)[:3],
        ("gpu.example.com", "", "gpu-0"),
    ),
    (
        "no device name",
        without("name", first_device),
        lambda m: device_fields(m)[:3],
        ("gpu.example.com", "worker-0", ""),
    ),
    ("no attributes", without("attributes", first_device), lambda m: device_fields(m)[3], {}),
    ("no network data", without("networkData", first_device), network_data, None),
    (
        "no interface name",
        without("interfaceName", network),
        network_data,
        NetworkDeviceData("", ("10.0.0.1/24",), "aa:bb"),
    ),
    ("no ips", without("ips", network), network_data, NetworkDeviceData("eth0", (), "aa:bb")),
    (
        "no ips either",
        lambda obj: network(obj).update(ips=[]),
        network_data,
        NetworkDeviceData("eth0", (), "aa:bb"),
    ),
    (
        "no hardware address",
        without("hardwareAddress", network),
        network_data,
        NetworkDeviceData("eth0", ("10.0.0.1/24",), ""),
    ),
    (
        "empty network data",
        lambda obj: network(obj).clear(),
        network_data,
        NetworkDeviceData("", (), ""),
    ),
]


@pytest.mark.parametrize(
    ("edit", "part", "expected"),
    [case[1:] for case in DRIVERS_WRITE],
    ids=[case[0] for case in DRIVERS_WRITE],
)
def test_fields_as_drivers_write_them_take_the_fast_path(
    calls: Calls,
    edit: Callable[[dict[str, Any]], object],
    part: Callable[[DeviceMetadata], object],
    expected: object,
) -> None:
    assert part(decode_stream(edited(edit)).metadata) == expected
    assert calls.slow() == {}


NEEDS_THE_COMPLETE_CHECK = [
    # an input the fast path leaves to the complete check, which the spy sees, and its result
    (
        "a negative generation",
        lambda obj: meta(obj).update(generation=-1),
        "_from_table",
        names,
        ("my-claim", "default", "uid-1234", -1),
    ),
    (
        "labels",
        lambda obj: meta(obj).update(labels={"a": "b"}),
        "_from_table",
        lambda m: dict(m.metadata.labels),
        {"a": "b"},
    ),
    (
        "a null name",
        lambda obj: meta(obj).update(name=None),
        "_from_table",
        names,
        ("", "default", "uid-1234", 1),
    ),
    ("null requests", lambda obj: obj.update(requests=None), None, lambda m: m.requests, ()),
    (
        "a null request name",
        lambda obj: first_request(obj).update(name=None),
        "_str",
        lambda m: m.requests[0].name,
        "",
    ),
    (
        "null devices",
        lambda obj: first_request(obj).update(devices=None),
        None,
        lambda m: m.requests[0].devices,
        (),
    ),
    (
        "a null driver",
        lambda obj: first_device(obj).update(driver=None),
        "_str",
        lambda m: device_fields(m)[:3],
        ("", "worker-0", "gpu-0"),
    ),
    (
        "null attributes",
        lambda obj: first_device(obj).update(attributes=None),
        None,
        lambda m: device_fields(m)[3],
        {},
    ),
    (
        "null ips",
        lambda obj: network(obj).update(ips=None),
        "_list",
        network_data,
        NetworkDeviceData("eth0", (), "aa:bb"),
    ),
    (
        "a null interface name",
        lambda obj: network(obj).update(interfaceName=None),
        "_str",
        network_data,
        NetworkDeviceData("", ("10.0.0.1/24",), "aa:bb"),
    ),
    (
        "a null hardware address",
        lambda obj: network(obj).update(hardwareAddress=None),
        "_str",
        network_data,
        NetworkDeviceData("eth0", ("10.0.0.1/24",), ""),
    ),
]


@pytest.mark.parametrize(
    ("edit", "check", "part", "expected"),
    [case[1:] for case in NEEDS_THE_COMPLETE_CHECK],
    ids=[case[0] for case in NEEDS_THE_COMPLETE_CHECK],
)
def test_fields_the_fast_path_leaves_get_go_s_result(
    calls: Calls,
    edit: Callable[[dict[str, Any]], object],
    check: str | None,
    part: Callable[[DeviceMetadata], object],
    expected: object,
) -> None:
    assert part(decode_stream(edited(edit)).metadata) == expected
    if check is not None:
        assert calls.count(check) > 0


def field_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    return info.value


@pytest.mark.parametrize(
    ("edit", "field", "problem"),
    [
        (
            lambda obj: meta(obj).update(generation=2**63),
            "metadata.generation",
            "expected an integer in the int64 range, got the number 9223372036854775808",
        ),
        (
            lambda obj: meta(obj).update(uid=7),
            "metadata.uid",
            "expected a string, got the number 7",
        ),
        (
            lambda obj: network(obj).update(ips=["10.0.0.1/24", 7]),
            "requests[0].devices[0].networkData.ips[1]",
            "expected a string, got the number 7",
        ),
        (
            lambda obj: network(obj).update(ips="10.0.0.1/24"),
            "requests[0].devices[0].networkData.ips",
            "expected an array, got a string ('10.0.0.1/24')",
        ),
        (
            lambda obj: network(obj).update(interfaceName=["eth0"]),
            "requests[0].devices[0].networkData.interfaceName",
            "expected a string, got an array",
        ),
        (
            lambda obj: network(obj).update(hardwareAddress=False),
            "requests[0].devices[0].networkData.hardwareAddress",
            "expected a string, got false",
        ),
        (
            lambda obj: first_device(obj).update(networkData=["eth0"]),
            "requests[0].devices[0].networkData",
            "expected an object, got an array",
        ),
    ],
)
def test_a_wrong_type_the_fast_path_refuses(
    edit: Callable[[dict[str, Any]], object], field: str, problem: str
) -> None:
    error = field_error(edited(edit))
    assert error.field == field
    assert str(error).endswith(f"field {field}: {problem}")


GOOD = {"a": {"int": 1}, "b": {"string": "s"}}


def request(last: dict[str, Any], devices: int, good: dict[str, Any] = GOOD) -> dict[str, Any]:
    """A request of ``devices`` devices: ``good`` attributes, then ``last``."""
    attributes = [good] * (devices - 1) + [last]
    return {"name": "r", "devices": [device(index, each) for index, each in enumerate(attributes)]}


def members(metadata: DeviceMetadata, index: int) -> dict[str, tuple[str, ...]]:
    return {name: each.members for name, each in metadata.devices[index].attributes.items()}


def one_scalar_member_each(metadata: DeviceMetadata) -> list[bool]:
    return [getattr(each.attributes, "one_scalar_member_each", False) for each in metadata.devices]


UNLIKE_THE_LAYOUT = [
    # attributes unlike the remembered layout of GOOD: the members of each and whether each
    # holds exactly one scalar member, or the field at fault
    (
        "another name of the same type",
        {"a": {"int": 1}, "b": {"version": "1.0.0"}},
        ({"a": ("int",), "b": ("version",)}, True),
    ),
    (
        "another name and type",
        {"a": {"bool": False}, "b": {"string": "s"}},
        ({"a": ("bool",), "b": ("string",)}, True),
    ),
    (
        "a list where a scalar was",
        {"a": {"ints": [1]}, "b": {"string": "s"}},
        ({"a": ("ints",), "b": ("string",)}, False),
    ),
    (
        "an extra member",
        {"a": {"int": 1, "bool": True}, "b": {"string": "s"}},
        ({"a": ("int", "bool"), "b": ("string",)}, False),
    ),
    (
        "a null member",
        {"a": {"int": None}, "b": {"string": "s"}},
        ({"a": (), "b": ("string",)}, False),
    ),
    (
        "a null member beside one",
        {"a": {"int": 1}, "b": {"string": "s", "int": None}},
        ({"a": ("int",), "b": ("string",)}, False),
    ),
    ("a null attribute", {"a": None, "b": {"string": "s"}}, ({"a": (), "b": ("string",)}, False)),
    ("an empty attribute", {"a": {}, "b": {"string": "s"}}, ({"a": (), "b": ("string",)}, False)),
    (
        "an unknown member",
        {"a": {"float": 1.5}, "b": {"string": "s"}},
        ({"a": (), "b": ("string",)}, False),
    ),
    (
        "an extra attribute",
        {**GOOD, "c": {"bool": True}},
        ({"a": ("int",), "b": ("string",), "c": ("bool",)}, True),
    ),
    ("a missing attribute", {"a": {"int": 1}}, ({"a": ("int",)}, True)),
    ("another type in the member", {"a": {"int": "1"}, "b": {"string": "s"}}, "a].int"),
    ("a list in a scalar member", {"a": {"int": [1]}, "b": {"string": "s"}}, "a].int"),
    ("a scalar in a list member", {"a": {"int": 1}, "b": {"strings": "s"}}, "b].strings"),
    ("an attribute that is a list", {"a": [5], "b": {"string": "s"}}, "a]"),
    ("an int beyond int64 in a list", {"a": {"int": 1}, "b": {"ints": [1, 2**63]}}, "b].ints[1]"),
]


@pytest.mark.parametrize("devices", [1, 3])
@pytest.mark.parametrize(
    ("attributes", "expected"),
    [case[1:] for case in UNLIKE_THE_LAYOUT],
    ids=[case[0] for case in UNLIKE_THE_LAYOUT],
)
def test_a_remembered_layout_never_gives_a_wrong_answer(
    calls: Calls, devices: int, attributes: dict[str, Any], expected: object
) -> None:
    for _ in range(2):  # the layout of GOOD is remembered
        assert one_scalar_member_each(decode_attributes(*[GOOD] * devices)) == [True] * devices
    assert calls.count("_derive_layout") == 1
    last = devices - 1
    data = stream(wire_object(requests=[request(attributes, devices)]))
    if isinstance(expected, str):
        assert field_error(data).field == f"requests[0].devices[{last}].attributes[{expected}"
        return
    found, one_scalar_each = expected  # type: ignore[misc]
    metadata = decode_stream(data).metadata
    assert [members(metadata, index) for index in range(last)] == [
        {"a": ("int",), "b": ("string",)}
    ] * last
    assert members(metadata, last) == found
    assert one_scalar_member_each(metadata) == [one_scalar_each] * devices


@pytest.mark.parametrize("remembered", [False, True])
@pytest.mark.parametrize("devices", [1, 3])
@pytest.mark.parametrize("element", [2**63, 2**64 - 1])
def test_an_ints_element_beyond_int64_is_an_error(
    calls: Calls, remembered: bool, devices: int, element: int
) -> None:
    good = {"model": {"string": "x"}, "ports": {"ints": [1, 2]}}
    if remembered:
        decode_attributes(*[good] * devices)
    faulty = {"model": {"string": "x"}, "ports": {"ints": [1, element]}}
    error = field_error(stream(wire_object(requests=[request(faulty, devices, good)])))
    field = f"requests[0].devices[{devices - 1}].attributes[ports].ints[1]"
    assert error.field == field
    assert str(error).endswith(
        f"field {field}: expected an integer in the int64 range, got the number {element}"
    )


def test_layout_derivation_does_work_in_proportion_to_the_attributes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The work of deriving a layout (the member names and types it lays out) grows with the
    number of attributes, not with attributes x devices: counted, not timed. Devices unlike
    each other must not try the first device's layout repeated over all of them (200 devices
    of which the first has 100 attributes would lay out 20,000)."""
    laid_out: list[int] = []
    layout = convert_module._layout

    def counted(names: list[str], repeats: int) -> Any:
        laid_out.append(len(names) * repeats)
        return layout(names, repeats)

    monkeypatch.setattr(convert_module, "_layout", counted)
    monkeypatch.setattr(convert_module, "_LAYOUTS", {})  # nothing remembered: derived anew
    first = {f"a{index:03d}": {"int": index} for index in range(100)}
    devices = [{"driver": "d", "pool": "p", "name": "n0", "attributes": first}] + [
        {"driver": "d", "pool": "p", "name": f"n{index}", "attributes": {"b": {"string": "s"}}}
        for index in range(1, 200)
    ]
    attributes = 100 + 199
    metadata = decode_stream(stream(wire_object(requests=[{"name": "r", "devices": devices}])))
    assert len(metadata.metadata.devices) == 200
    assert sum(laid_out) <= attributes, laid_out
    laid_out.clear()
    alike = [{**device, "attributes": first} for device in devices]  # one layout, repeated
    decode_stream(stream(wire_object(requests=[{"name": "r", "devices": alike}])))
    assert sum(laid_out) <= 200 * 100, laid_out


def test_the_complete_check_takes_a_list_of_strings_at_once(calls: Calls) -> None:
    # Off the fast path (a null interface name; finalizers), a list of strings is checked as a
    # whole, not string by string.
    def edit(obj: dict[str, Any]) -> None:
        network(obj).update(interfaceName=None, ips=["10.0.0.1/24", "fd00::1/64"])
        meta(obj)["finalizers"] = ["example.com/a", "example.com/b"]

    metadata = decode_stream(edited(edit)).metadata
    assert metadata.metadata.finalizers == ("example.com/a", "example.com/b")
    assert network_data(metadata) == NetworkDeviceData("", ("10.0.0.1/24", "fd00::1/64"), "aa:bb")
    checked = [path for _, path in calls.args["_str"]]
    assert checked  # the interface name, at least: the complete check ran
    assert [path for path in checked if path.endswith("]")] == []


class _WatchedListNames(dict[type, frozenset[str]]):
    """_convert._LIST_NAMES, counting how often a layout looks through it."""

    looked = 0

    def items(self) -> Any:
        type(self).looked += 1
        return super().items()


@pytest.mark.parametrize(
    ("names", "looks"),
    [
        (["int", "bool", "string", "version"], 0),  # what the usual attributes hold
        (["int", "strings"], 1),
        (["ints", "bools", "strings", "versions"], 1),
    ],
)
def test_a_layout_of_scalars_never_looks_for_list_members(
    monkeypatch: pytest.MonkeyPatch, names: list[str], looks: int
) -> None:
    watched = _WatchedListNames(convert_module._LIST_NAMES)
    monkeypatch.setattr(_WatchedListNames, "looked", 0)
    monkeypatch.setattr(convert_module, "_LIST_NAMES", watched)
    layout = convert_module._layout(names, 2)
    assert _WatchedListNames.looked == looks
    assert [kind for kind, _ in layout.lists_of] == [
        kind for kind in (int, bool, str) if any(name in watched[kind] for name in names)
    ]
