"""``device.attributes[name]`` keeps exact keys, and its KeyError says what the map has instead.

``device.attribute("index")`` also finds ``<driver>/index``; the map, a Mapping, does not,
but a miss names the key of the same name that it holds and points at ``attribute()``.
"""

from __future__ import annotations

import pytest

import dra_metadata
from dra_metadata import AttributeMap, AttributeNotFoundError, Device, DeviceAttribute

from helpers import stream, wire_object


def decoded_device(attributes: dict[str, object]) -> Device:
    device = {"driver": "gpu.example.com", "pool": "p", "name": "gpu-0", "attributes": attributes}
    data = stream(wire_object(requests=[{"name": "r", "devices": [device]}]))
    return dra_metadata.decode_stream(data).metadata.devices[0]


@pytest.fixture(params=["decoded", "built by hand"])
def device(request: pytest.FixtureRequest) -> Device:
    if request.param == "decoded":
        return decoded_device({"gpu.example.com/index": {"int": 0}, "uuid": {"string": "GPU-1"}})
    return Device(
        driver="gpu.example.com",
        name="gpu-0",
        attributes={"gpu.example.com/index": 0, "uuid": "GPU-1"},
    )


def test_a_qualified_key_is_named_when_the_short_one_is_asked_for(device: Device) -> None:
    assert device.attribute("index") == 0
    with pytest.raises(KeyError) as raised:
        device.attributes["index"]
    error = raised.value
    assert isinstance(error, AttributeNotFoundError)
    assert error.name == "index"
    assert error.suggestions == ("gpu.example.com/index",)
    message = str(error)
    assert "'gpu.example.com/index'" in message
    assert "device.attribute('index')" in message
    assert "exact" in message


def test_a_short_key_is_named_when_the_qualified_one_is_asked_for(device: Device) -> None:
    assert device.attribute("gpu.example.com/uuid") == "GPU-1"
    with pytest.raises(AttributeNotFoundError) as raised:
        device.attributes["gpu.example.com/uuid"]
    assert raised.value.suggestions == ("uuid",)
    assert "'uuid'" in str(raised.value)


def test_the_map_stays_an_exact_mapping(device: Device) -> None:
    attributes = device.attributes
    assert attributes["gpu.example.com/index"] == DeviceAttribute(int=0)
    assert "index" not in attributes
    assert attributes.get("index") is None
    assert attributes.get("index", DeviceAttribute(int=9)) == DeviceAttribute(int=9)
    assert attributes.get("gpu.example.com/index") == DeviceAttribute(int=0)
    assert sorted(attributes) == ["gpu.example.com/index", "uuid"]
    assert dict(attributes) == {
        "gpu.example.com/index": DeviceAttribute(int=0),
        "uuid": DeviceAttribute(string="GPU-1"),
    }


def test_a_name_it_has_nowhere_is_a_plain_key_error(device: Device) -> None:
    with pytest.raises(KeyError) as raised:
        device.attributes["model"]
    assert type(raised.value) is KeyError
    assert raised.value.args == ("model",)
    with pytest.raises(KeyError) as raised:
        device.attributes[3]  # type: ignore[index]
    assert type(raised.value) is KeyError


def test_every_key_of_that_name_is_listed() -> None:
    attributes = AttributeMap(
        {"a.example.com/model": "x", "b.example.com/model": "y", "modelName": "z"}
    )
    with pytest.raises(AttributeNotFoundError) as raised:
        attributes["model"]
    assert raised.value.suggestions == ("a.example.com/model", "b.example.com/model")
    assert "'a.example.com/model' and 'b.example.com/model'" in str(raised.value)
