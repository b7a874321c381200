"""The models: typed attribute access, derived names, immutability, hand-built objects."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import FrozenInstanceError, replace

import pytest
from pydantic import TypeAdapter

from dra_metadata import (
    AttributeMap,
    AttributeNotFoundError,
    AttributeValueError,
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    MetadataSource,
    NetworkDeviceData,
    ObjectMeta,
    decode_stream,
)

from helpers import UPSTREAM, stream, wire_object


def decoded_device(attributes: dict[str, object]) -> Device:
    device = {"driver": "gpu.example.com", "pool": "p", "name": "n", "attributes": attributes}
    metadata = decode_stream(stream(wire_object(requests=[{"name": "r", "devices": [device]}])))
    return metadata.metadata.devices[0]


class TestAttributes:
    def test_value_of_each_member(self) -> None:
        device = decoded_device(
            {
                "i": {"int": 0},
                "b": {"bool": False},
                "s": {"string": ""},
                "v": {"version": "1.2.3"},
                "is": {"ints": [1, 2]},
                "bs": {"bools": [True]},
                "ss": {"strings": ["a"]},
                "vs": {"versions": ["1.0.0"]},
            }
        )
        assert device.attribute("i") == 0
        assert device.attribute("b") is False
        assert device.attribute("s") == ""
        assert device.attribute("v") == "1.2.3"
        assert device.attribute("is") == (1, 2)
        assert device.attribute("bs") == (True,)
        assert device.attribute("ss") == ("a",)
        assert device.attribute("vs") == ("1.0.0",)

    def test_unqualified_and_qualified_names_find_the_same_attribute(self) -> None:
        device = decoded_device(
            {"model": {"string": "A100"}, "gpu.example.com/uuid": {"string": "GPU-1"}}
        )
        assert device.attribute("model") == device.attribute("gpu.example.com/model") == "A100"
        assert device.attribute("uuid") == device.attribute("gpu.example.com/uuid") == "GPU-1"
        assert device.attribute("other.example.com/model") is None
        assert device.attribute("missing", "fallback") == "fallback"
        assert device.get_attribute("gpu.example.com/model") is device.attributes["model"]

    def test_exact_key_wins(self) -> None:
        device = decoded_device(
            {"model": {"string": "short"}, "gpu.example.com/model": {"string": "qualified"}}
        )
        assert device.attribute("model") == "short"
        assert device.attribute("gpu.example.com/model") == "qualified"

    def test_a_short_name_under_another_domain_suggests_it(self) -> None:
        device = decoded_device(
            {
                "resource.kubernetes.io/pciBusID": {"string": "0000:1b:00.0"},
                "a.example.com/numa": {"int": 0},
                "b.example.com/numa": {"int": 1},
            }
        )
        for lookup in (device.attribute, device.get_attribute):
            with pytest.raises(AttributeNotFoundError) as info:
                lookup("pciBusID")
            assert str(info.value) == (
                "device n (gpu.example.com) has no attribute pciBusID (an unqualified name finds "
                "pciBusID and gpu.example.com/pciBusID); did you mean "
                "resource.kubernetes.io/pciBusID?"
            )
            assert info.value.name == "pciBusID"
            assert info.value.suggestions == ("resource.kubernetes.io/pciBusID",)
            assert isinstance(info.value, KeyError)
        with pytest.raises(
            AttributeNotFoundError, match="a.example.com/numa or b.example.com/numa"
        ):
            device.attribute("numa", 5)  # a default does not hide a name spelled wrong
        # Qualified names are taken as spelled; names found nowhere are simply absent.
        assert device.attribute("resource.kubernetes.io/pciBusID") == "0000:1b:00.0"
        assert device.get_attribute("gpu.example.com/pciBusID") is None
        assert device.attribute("uuid", "none") == "none"

    def test_the_drivers_own_domain_is_no_other_domain(self) -> None:
        hand_built = Device(
            driver="gpu.example.com",
            attributes={"gpu.example.com/uuid": DeviceAttribute(string="GPU-1")},
        )
        assert hand_built.attribute("uuid") == "GPU-1"

    def test_value_with_several_members_raises(self) -> None:
        device = decoded_device({"bad": {"int": 1, "string": "x"}, "empty": {}})
        with pytest.raises(AttributeValueError, match="int, string"):
            device.attribute("bad")
        assert device.attributes["empty"].value is None
        assert device.attribute("empty", "default") == "default"

    def test_attribute_map_is_a_read_only_mapping(self) -> None:
        device = decoded_device({"b": {"int": 1}, "a": {"int": 2}})
        assert list(device.attributes) == ["b", "a"]  # file order
        assert len(device.attributes) == 2
        assert "a" in device.attributes
        assert device.attributes == {"b": DeviceAttribute(int=1), "a": DeviceAttribute(int=2)}
        with pytest.raises(TypeError):
            device.attributes["c"] = DeviceAttribute(int=3)  # type: ignore[index]
        # Hashable (a frozen model's member), equal to the same map built by hand.
        built = Device(attributes={"b": DeviceAttribute(int=1), "a": DeviceAttribute(int=2)})
        assert hash(device.attributes) == hash(built.attributes)

    def test_lazy_attributes_compare_equal_to_built_ones(self) -> None:
        decoded = decoded_device({"model": {"string": "A100"}})
        built = Device(
            driver="gpu.example.com",
            pool="p",
            name="n",
            attributes={"model": DeviceAttribute(string="A100")},
        )
        assert decoded == built
        assert repr(decoded.attributes) == repr(built.attributes)


class TestModels:
    def test_request_names(self) -> None:
        assert DeviceMetadataRequest(name="gpu/high-memory").base_name == "gpu"
        assert DeviceMetadataRequest(name="gpu/high-memory").subrequest_name == "high-memory"
        assert DeviceMetadataRequest(name="gpu").subrequest_name is None

    def test_devices_and_request_lookup(self) -> None:
        first = Device(driver="a", pool="p", name="a0")
        second = Device(driver="b", pool="p", name="b0")
        metadata = DeviceMetadata(
            requests=[
                DeviceMetadataRequest(name="x", devices=[first]),
                DeviceMetadataRequest(name="y", devices=[second]),
            ]
        )
        assert metadata.devices == (first, second)
        assert metadata.request("y") == DeviceMetadataRequest(name="y", devices=(second,))
        assert metadata.request("z") is None

    def test_models_are_immutable(self) -> None:
        metadata = decode_stream(stream(wire_object())).metadata
        with pytest.raises(FrozenInstanceError):
            metadata.pod_claim_name = "x"  # type: ignore[misc]
        with pytest.raises(FrozenInstanceError):
            metadata.devices[0].name = "x"  # type: ignore[misc]
        assert isinstance(metadata.requests, tuple)

    @pytest.mark.parametrize(
        ("build", "message"),
        [
            (lambda: DeviceAttribute(int="1"), "DeviceAttribute.int must be an int"),
            (lambda: DeviceAttribute(int=2**63), "int64"),
            (lambda: DeviceAttribute(int=True), "DeviceAttribute.int"),
            (lambda: DeviceAttribute(strings="abc"), "DeviceAttribute.strings must be a sequence"),
            (lambda: NetworkDeviceData(ips="10.0.0.1/24"), "NetworkDeviceData.ips"),
            (lambda: Device(attributes={"a": 1.5}), r"Device.attributes\['a'\]"),
            (lambda: Device(attributes={1: "a"}), "Device.attributes keys"),
            (lambda: Device(attributes=[1]), "Device.attributes"),
            (lambda: Device(network_data={}), "Device.network_data"),
            (lambda: DeviceMetadataRequest(devices=[{}]), "DeviceMetadataRequest.devices"),
            (lambda: ObjectMeta(labels={"a": 1}), "ObjectMeta.labels"),
            (lambda: ObjectMeta(generation=1.0), "ObjectMeta.generation"),
            (lambda: DeviceMetadata(requests=None), "DeviceMetadata.requests"),
        ],
    )
    def test_hand_built_objects_are_checked(self, build: object, message: str) -> None:
        with pytest.raises(TypeError, match=message):
            build()  # type: ignore[operator]

    def test_hand_built_containers_are_normalized(self) -> None:
        device = Device(attributes={"a": DeviceAttribute(ints=[1, 2])})
        assert isinstance(device.attributes, AttributeMap)
        assert device.attributes["a"].ints == (1, 2)
        request = DeviceMetadataRequest(name="r", devices=[device])
        assert request.devices == (device,)
        labels = {"a": "b"}
        meta = ObjectMeta(labels=labels)
        labels["c"] = "d"
        assert dict(meta.labels) == {"a": "b"}

    def test_replace_keeps_checks(self) -> None:
        device = Device(driver="d")
        assert replace(device, name="n").name == "n"
        with pytest.raises(TypeError):
            replace(device, name=5)

    def test_sources_take_no_part_in_equality(self) -> None:
        metadata = decode_stream(stream(wire_object())).metadata
        source = MetadataSource(path=None, driver=None, metadata=metadata)
        assert replace(metadata, sources=(source,)) == metadata


class TestPydanticIntegration:
    """pydantic is not imported by the package, but understands the models."""

    def test_wire_names_and_field_names_validate(self) -> None:
        adapter = TypeAdapter(NetworkDeviceData)
        data = adapter.validate_python({"interfaceName": "eth0", "hardwareAddress": "x"})
        assert data == NetworkDeviceData(interface_name="eth0", hardware_address="x")
        meta = TypeAdapter(ObjectMeta).validate_python({"generateName": "g", "generate_name": "g"})
        assert meta.generate_name == "g"

    def test_dump_and_validate_round_trip(self) -> None:
        metadata = decode_stream(stream(wire_object())).metadata
        adapter = TypeAdapter(DeviceMetadata)
        dumped = adapter.dump_python(metadata, by_alias=True, exclude_defaults=True)
        device = dumped["requests"][0]["devices"][0]
        assert device["attributes"] == {"model": {"string": "LATEST-GPU-MODEL"}}
        assert adapter.validate_python(adapter.dump_python(metadata)) == metadata

    def test_pydantic_is_not_imported_by_the_package(self) -> None:
        code = (
            "import sys, dra_metadata\n"
            "dra_metadata.decode_stream(open(sys.argv[1], 'rb').read())\n"
            "print('pydantic' in sys.modules)"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, str(UPSTREAM / "HEAD" / "metadata.json")],
            capture_output=True,
            text=True,
            check=True,
        )
        assert result.stdout.strip() == "False"


class TestPlainAttributeValues:
    def test_unambiguous_values_become_their_member(self) -> None:
        device = Device(
            attributes={
                "uuid": "GPU-1",
                "index": 0,
                "big": 2**63 - 1,
                "healthy": False,
                "names": ["a", "b"],
                "ids": (1, 2),
                "flags": [True, False],
                "version": DeviceAttribute(version="1.2.3"),
            }
        )
        assert device.attributes == {
            "uuid": DeviceAttribute(string="GPU-1"),
            "index": DeviceAttribute(int=0),
            "big": DeviceAttribute(int=2**63 - 1),
            "healthy": DeviceAttribute(bool=False),
            "names": DeviceAttribute(strings=("a", "b")),
            "ids": DeviceAttribute(ints=(1, 2)),
            "flags": DeviceAttribute(bools=(True, False)),
            "version": DeviceAttribute(version="1.2.3"),
        }
        assert device.attribute("ids") == (1, 2)
        assert AttributeMap({"a": "x"}) == {"a": DeviceAttribute(string="x")}
        assert replace(device, attributes={"b": 1}).attributes == {"b": DeviceAttribute(int=1)}

    def test_written_as_if_spelled_out(self) -> None:
        from dra_metadata.writer import encode_stream  # noqa: PLC0415

        def stream_of(attributes: dict[str, object]) -> bytes:
            device = Device(driver="d", pool="p", name="n", attributes=attributes)
            return encode_stream(
                DeviceMetadata(requests=[DeviceMetadataRequest(name="r", devices=[device])])
            )

        assert stream_of({"a": "x", "b": [1]}) == stream_of(
            {"a": DeviceAttribute(string="x"), "b": DeviceAttribute(ints=[1])}
        )

    def test_subclasses_of_int_become_plain_ints(self) -> None:
        import enum  # noqa: PLC0415

        class Index(enum.IntEnum):
            FIRST = 1

        attribute = Device(attributes={"i": Index.FIRST, "l": [Index.FIRST]}).attributes
        assert type(attribute["i"].int) is int
        assert type(attribute["l"].ints[0]) is int

    @pytest.mark.parametrize(
        "value",
        [1.5, None, [], (), [1, True], [1, "a"], [1.5], {"a": 1}, {"a"}, b"x", [[1]]],
    )
    def test_ambiguous_values_are_refused_with_how_to_write_a_version(self, value: object) -> None:
        with pytest.raises(TypeError) as raised:
            Device(attributes={"k": value})  # type: ignore[dict-item]
        message = str(raised.value)
        assert message.startswith("Device.attributes['k'] must be a DeviceAttribute")
        assert "DeviceAttribute(version='1.2.3')" in message
        assert message.endswith(f"not {value!r}")

    def test_out_of_range_ints_name_the_attribute(self) -> None:
        with pytest.raises(TypeError, match=r"Device.attributes\['k'\]: .*int64"):
            Device(attributes={"k": 2**63})
        with pytest.raises(TypeError, match=r"AttributeMap\['k'\]: .*int64"):
            AttributeMap({"k": [-(2**63) - 1]})


class TestMore:
    def test_attribute_map_rejects_other_values(self) -> None:
        with pytest.raises(TypeError, match=r"AttributeMap\['a'\] must be a DeviceAttribute"):
            AttributeMap({"a": 1.5})  # type: ignore[dict-item]
        with pytest.raises(TypeError, match="AttributeMap keys must be attribute names"):
            AttributeMap({1: DeviceAttribute(int=1)})  # type: ignore[dict-item]

    def test_subclassed_attributes_are_kept_and_written(self) -> None:
        from dataclasses import dataclass  # noqa: PLC0415

        from dra_metadata.writer import encode_stream  # noqa: PLC0415

        @dataclass(frozen=True, slots=True)
        class Measured(DeviceAttribute):
            pass

        attribute = Measured(int=3)
        device = Device(driver="d", pool="p", name="n", attributes={"a": attribute})
        assert device.attributes["a"] is attribute
        data = encode_stream(
            DeviceMetadata(requests=[DeviceMetadataRequest(name="r", devices=[device])])
        )
        assert decode_stream(data).metadata.devices[0].attributes["a"] == DeviceAttribute(int=3)

    def test_public_module(self) -> None:
        for model in (Device, DeviceAttribute, DeviceMetadata, AttributeMap, ObjectMeta):
            assert model.__module__ == "dra_metadata"


def test_wire_tables_follow_the_models() -> None:
    """The decoder's field tables list every field, in field order, under its wire name."""
    from dataclasses import fields  # noqa: PLC0415

    from dra_metadata._decoding._convert import WIRE_FIELD_TABLES  # noqa: PLC0415
    from dra_metadata._model._models import camel  # noqa: PLC0415

    for model, table in WIRE_FIELD_TABLES.items():
        assert [name for _, name, _ in table] == [field.name for field in fields(model)]
        assert [wire for wire, _, _ in table] == [camel(name) for _, name, _ in table]
