"""The writers refuse invalid data before anything changes, and encode_stream's profiles."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import Device, NetworkDeviceData


def _with_devices(
    metadata: dra_metadata.DeviceMetadata, devices: list[Device]
) -> dra_metadata.DeviceMetadata:
    request = dra_metadata.DeviceMetadataRequest(name="r", devices=tuple(devices))
    return dataclasses.replace(metadata, requests=(request,))


class TestWriters:
    @staticmethod
    def _duplicate_ips() -> dra_metadata.DeviceMetadata:
        network = NetworkDeviceData(interface_name="net1", ips=("10.0.0.5/24", "10.0.0.5/24"))
        device = Device(driver="d.example.com", pool="p", name="n", network_data=network)
        return dra_metadata.DeviceMetadata(
            metadata=dra_metadata.ObjectMeta(name="c", generation=1),
            requests=(dra_metadata.DeviceMetadataRequest(name="r", devices=(device,)),),
        )

    def test_write_refuses_before_anything_changes(self, tmp_path: Path) -> None:
        from dra_metadata.writer import write_metadata_file  # noqa: PLC0415

        target = tmp_path / "new" / "d.example.com-metadata.json"
        with pytest.raises(dra_metadata.MetadataValidationError, match="Duplicate value") as e:
            write_metadata_file(target, self._duplicate_ips(), validate=True)
        assert e.value.path == target
        assert not target.parent.exists()
        write_metadata_file(target, self._duplicate_ips())  # the default: as upstream
        assert target.exists()

    def test_update_leaves_the_file_as_it_was(self, tmp_path: Path) -> None:
        from dra_metadata.writer import update_metadata_file, write_metadata_file  # noqa: PLC0415

        target = tmp_path / "d.example.com-metadata.json"
        valid = self._duplicate_ips()
        device = valid.devices[0]
        write_metadata_file(target, _with_devices(valid, [Device(name=device.name)]))
        before = target.read_bytes()
        with pytest.raises(dra_metadata.MetadataValidationError):
            update_metadata_file(target, [device], validate="strict")
        assert target.read_bytes() == before

    def test_encode_stream_profiles(self) -> None:
        from dra_metadata.writer import encode_stream  # noqa: PLC0415

        long_name = _with_devices(
            self._duplicate_ips(),
            [Device(driver="d.example.com", pool="p", name="n", attributes={"s": "x" * 65})],
        )
        assert encode_stream(long_name, validate=True)  # the string limit is a strict rule
        with pytest.raises(dra_metadata.MetadataValidationError, match="Too long"):
            encode_stream(long_name, validate="strict")
        with pytest.raises(ValueError, match="validate must be"):
            encode_stream(long_name, validate="yes")  # type: ignore[arg-type]
