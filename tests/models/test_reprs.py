"""The models' reprs show what is set, and only that: no field left at None is printed."""

from __future__ import annotations

import dra_metadata
from dra_metadata import Device, DeviceAttribute, NetworkDeviceData

from helpers import SAMPLE


class TestReprs:
    def test_models_print_what_is_set(self) -> None:
        assert repr(DeviceAttribute(version="1.0.0")) == "DeviceAttribute(version='1.0.0')"
        assert repr(DeviceAttribute(int=0)) == "DeviceAttribute(int=0)"
        assert repr(DeviceAttribute(bool=False)) == "DeviceAttribute(bool=False)"
        assert repr(NetworkDeviceData(ips=("10.0.0.5/24",))) == (
            "NetworkDeviceData(ips=('10.0.0.5/24',))"
        )
        device = Device(driver="d", name="n", attributes={"v": DeviceAttribute(string="x")})
        shown = repr(device)
        assert shown == (
            "Device(driver='d', name='n', attributes=AttributeMap({'v': "
            "DeviceAttribute(string='x')}))"
        )
        assert "None" not in repr(dra_metadata.read_claim_metadata("fast-net", "vf", root=SAMPLE))
