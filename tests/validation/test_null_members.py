"""Validation of attributes whose members are null: null is unset, the rest is still checked."""

from __future__ import annotations

from typing import Any

import pytest

from dra_metadata import (
    decode_stream,
)

from helpers import compact, wire_object


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
