"""Typed attribute reads: ``device.attribute(name, default, type=...)`` returns that type.

``type`` names the member the attribute must hold (int, bool, str for ``string``, Version for
``version``, and the tuple types of the list forms); another member is an AttributeValueError
naming the attribute and what it holds. Without ``type`` nothing changes.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

import dra_metadata
from dra_metadata import AttributeValueError, Device, DeviceAttribute, Version
from dra_metadata import strategies as dra_st

from helpers import stream, wire_object

REPO = Path(__file__).resolve().parents[2]

# Each member, a wire value of it, and the type= that reads it.
MEMBERS: dict[str, tuple[Any, Any]] = {
    "int": (7, int),
    "bool": (False, bool),
    "string": ("A100", str),
    "version": ("580.65.6", Version),
    "ints": ([0, 1], tuple[int, ...]),
    "bools": ([True], tuple[bool, ...]),
    "strings": (["a", "b"], tuple[str, ...]),
    "versions": (["1.0.0", "1.10.0-rc.1"], tuple[Version, ...]),
}
KIND_TEXT = {
    "int": "an int",
    "bool": "a bool",
    "string": "a string",
    "version": "a version",
    "ints": "a list of ints",
    "bools": "a list of bools",
    "strings": "a list of strings",
    "versions": "a list of versions",
}


def decoded_device(attributes: dict[str, object]) -> Device:
    """A device as reading a file gives it (lazily built attributes)."""
    device = {"driver": "gpu.example.com", "pool": "p", "name": "gpu-0", "attributes": attributes}
    data = stream(wire_object(requests=[{"name": "r", "devices": [device]}]))
    return dra_metadata.decode_stream(data).metadata.devices[0]


def one_of_each() -> Device:
    return decoded_device(
        {f"gpu.example.com/{member}": {member: value} for member, (value, _) in MEMBERS.items()}
    )


@pytest.mark.parametrize("member", MEMBERS)
def test_each_type_reads_its_member(member: str) -> None:
    value, wanted = MEMBERS[member]
    device = one_of_each()
    read = device.attribute(member, type=wanted)
    assert read == (tuple(value) if isinstance(value, list) else value)
    assert read == device.attribute(member)  # the value without type=, unchanged
    if isinstance(value, list):
        assert type(read) is tuple
        element = wanted.__args__[0]
        assert all(type(item) is element for item in read)
    else:
        assert type(read) is wanted
    assert device.attribute(f"gpu.example.com/{member}", type=wanted) == read


@pytest.mark.parametrize("member", MEMBERS)
@pytest.mark.parametrize("asked", MEMBERS)
def test_another_member_is_an_error_naming_the_attribute_and_what_it_holds(
    member: str, asked: str
) -> None:
    if member == asked:
        return
    device = one_of_each()
    with pytest.raises(AttributeValueError) as raised:
        device.attribute(member, 0, type=MEMBERS[asked][1])
    error = raised.value
    assert error.name == f"gpu.example.com/{member}"
    assert error.kind == member
    message = str(error)
    assert f"attribute gpu.example.com/{member} holds {KIND_TEXT[member]}" in message
    assert f"not {KIND_TEXT[asked]}" in message
    assert message.startswith("device gpu-0 (gpu.example.com): ")


def test_members_are_never_converted() -> None:
    device = decoded_device(
        {
            "count": {"string": "3"},
            "on": {"int": 1},
            "flag": {"bool": True},
            "driverVersion": {"version": "1.2.3"},
        }
    )
    for name, wanted in [("count", int), ("on", bool), ("flag", int), ("driverVersion", str)]:
        with pytest.raises(AttributeValueError):
            device.attribute(name, type=wanted)
    with pytest.raises(AttributeValueError, match="read it with type=Version"):
        device.attribute("driverVersion", type=str)


def test_a_default_for_what_is_missing_or_empty() -> None:
    device = decoded_device({"gpu.example.com/index": {"int": 3}, "empty": {}})
    idx: int = device.attribute("index", -1, type=int)
    assert idx == 3
    assert device.attribute("missing", -1, type=int) == -1
    assert device.attribute("missing", type=int) is None
    assert device.attribute("empty", "none", type=str) == "none"
    assert device.attribute("other.example.com/index", type=int) is None


def test_a_name_found_only_under_another_domain_raises_as_without_type() -> None:
    device = decoded_device({"resource.kubernetes.io/pciBusID": {"string": "0000:00:01.0"}})
    with pytest.raises(dra_metadata.AttributeNotFoundError) as raised:
        device.attribute("pciBusID", "", type=str)
    assert raised.value.suggestions == ("resource.kubernetes.io/pciBusID",)


def test_several_members_name_the_attribute() -> None:
    device = decoded_device({"gpu.example.com/index": {"int": 1, "string": "1"}})
    with pytest.raises(AttributeValueError, match=r"attribute gpu.example.com/index has several"):
        device.attribute("index", type=int)
    with pytest.raises(AttributeValueError, match="several values set"):
        device.attribute("index")  # as before


def test_a_version_that_is_not_semver() -> None:
    device = decoded_device({"v": {"version": "1.2"}, "vs": {"versions": ["1.0.0", "v2"]}})
    assert device.attribute("v") == "1.2"
    assert type(device.attribute("v")) is str  # no Version: it is not one
    with pytest.raises(AttributeValueError, match=r"holds the version '1.2', which is not a"):
        device.attribute("v", type=Version)
    assert device.attribute("vs") == ("1.0.0", "v2")
    assert [type(item) for item in device.attribute("vs")] == [Version, str]  # type: ignore[union-attr]
    with pytest.raises(AttributeValueError, match=r"element 1 \('v2'\) is not a semantic"):
        device.attribute("vs", type=tuple[Version, ...])


@pytest.mark.parametrize(
    ("wanted", "hint"),
    [
        (float, "not <class 'float'>"),
        (list[int], "tuple[int, ...], not list[int]"),
        (tuple[int], "not tuple[int]"),
        ("int", "not 'int'"),
        ([int], "not [<class 'int'>]"),
        (Device, "not <class 'dra_metadata.Device'>"),
    ],
)
def test_an_unknown_type_is_a_type_error(wanted: object, hint: str) -> None:
    device = one_of_each()
    with pytest.raises(TypeError, match="type must be one of int, bool, str, Version") as raised:
        device.attribute("int", type=wanted)  # type: ignore[call-overload]
    assert hint in str(raised.value)


@settings(max_examples=100, deadline=None)
@given(dra_st.device_attributes())
def test_typed_reads_agree_with_the_untyped_value(attribute: DeviceAttribute) -> None:
    device = Device(driver="d", name="n", attributes={"a": attribute})
    held = attribute.members
    for member, (_, wanted) in MEMBERS.items():
        if len(held) != 1:
            expected: Any = AttributeValueError if held else None
        elif held[0] != member:
            expected = AttributeValueError
        else:
            expected = "value"
        if expected is AttributeValueError:
            with pytest.raises(AttributeValueError) as raised:
                device.attribute("a", type=wanted)
            assert raised.value.name == "a"
            assert raised.value.kind == (held[0] if len(held) == 1 else None)
        elif expected is None:
            assert device.attribute("a", "default", type=wanted) == "default"
        else:
            assert device.attribute("a", type=wanted) == device.attribute("a")


def test_mypy_reveals_the_type_asked_for(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("needs mypy, of the dev extra (nox's test sessions install the test extra)")
    source = tmp_path / "reveal.py"
    source.write_text(
        textwrap.dedent(
            """
            from dra_metadata import Device, Version

            def check(device: Device) -> None:
                idx: int = device.attribute("index", -1, type=int)
                reveal_type(device.attribute("index", -1, type=int))
                reveal_type(device.attribute("index", type=int))
                reveal_type(device.attribute("ready", type=bool))
                reveal_type(device.attribute("model", "", type=str))
                reveal_type(device.attribute("driverVersion", type=Version))
                reveal_type(device.attribute("ids", (), type=tuple[int, ...]))
                reveal_type(device.attribute("versions", type=tuple[Version, ...]))
                reveal_type(device.attribute("index", -1))
                wrong: str = device.attribute("index", -1, type=int)
                device.attribute("index", type=float)
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(source)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        check=False,
    )
    # "<file>:<line>: note: Revealed type is ..." -> (line, message)
    found = [line.split(":", 2)[1:] for line in result.stdout.splitlines() if line.count(":") >= 2]
    revealed = [
        message.replace("dra_metadata._model._semver.", "").strip()
        for _, message in found
        if "Revealed type is" in message
    ]
    assert revealed == [
        'note: Revealed type is "int"',
        'note: Revealed type is "int | None"',
        'note: Revealed type is "bool | None"',
        'note: Revealed type is "str"',
        'note: Revealed type is "Version | None"',
        'note: Revealed type is "tuple[int, ...]"',
        'note: Revealed type is "tuple[Version, ...] | None"',
        'note: Revealed type is "int | str | tuple[int, ...] | tuple[str, ...]"',  # bool is an int
    ], result.stdout + result.stderr
    # Errors only where the types are wrong: assigning an int to a str, and type=float.
    error_lines = {int(line) for line, message in found if "error:" in message}
    assert error_lines == {14, 15}, result.stdout
