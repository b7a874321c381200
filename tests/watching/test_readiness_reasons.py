"""When a wait is not ready, and the reasons it gives: no devices, missing fields, stale files.

Only the public API is used, so that a rewrite of the watcher keeps these tests valid. Real
files; a wait that must time out is given a short timeout, one that must not a long one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from dra_metadata import (
    Device,
    DeviceMetadata,
    DeviceMetadataRequest,
    NetworkDeviceData,
    ObjectMeta,
    StaleMetadataError,
    WaitTimeoutError,
    resource_claim_file_path,
    resource_claim_template_file_path,
    wait_for,
    wait_for_network_data,
    wait_until,
)
from dra_metadata.writer import write_metadata_file

SHORT = 0.05
LONG = 5.0


def nic(name: str, driver: str, interface_name: str | None = None) -> Device:
    network = None if interface_name is None else NetworkDeviceData(interface_name=interface_name)
    return Device(driver=driver, pool="node-a", name=name, network_data=network)


def publish(
    root: Path,
    driver: str,
    devices: list[Device],
    *,
    generation: int = 1,
    template: bool = False,
    requests: bool = True,
) -> Path:
    build = resource_claim_template_file_path if template else resource_claim_file_path
    path = build(driver, "c", "nic", root=root)
    metadata = DeviceMetadata(
        metadata=ObjectMeta(name="c", namespace="ns", uid="u-1", generation=generation),
        requests=[DeviceMetadataRequest(name="nic", devices=devices)] if requests else [],
    )
    write_metadata_file(path, metadata)
    return path


def timed_out(call: Callable[[], object]) -> WaitTimeoutError:
    with pytest.raises(WaitTimeoutError) as info:
        call()
    error = info.value
    assert isinstance(error, TimeoutError)
    return error


def assert_timeout_error(
    error: WaitTimeoutError, *, path: Path, timeout: float, reason: str
) -> None:
    assert error.path == path
    assert error.timeout == timeout
    assert error.reason == reason
    assert str(error) == f"{path}: not ready after {timeout:g} s: {reason}"


NOT_READY_AB = "a.example.com generation 1, b.example.com generation 1"


class TestNoDevices:
    @pytest.mark.parametrize("requests", [True, False], ids=["empty request", "no request"])
    def test_a_request_without_devices_is_not_ready(self, tmp_path: Path, requests: bool) -> None:
        path = publish(tmp_path, "a.example.com", [], generation=4, requests=requests)
        directory = path.parent
        reason = "generation 4, no devices"
        waits: list[Callable[[], object]] = [
            lambda: wait_for_network_data("c", "nic", root=tmp_path, timeout=SHORT),
            lambda: wait_for_network_data("c", "nic", root=tmp_path, timeout=SHORT, require=()),
            lambda: wait_for(lambda _: True, "c", "nic", root=tmp_path, timeout=SHORT),
        ]
        for wait in waits:
            error = timed_out(wait)
            assert_timeout_error(error, path=directory, timeout=SHORT, reason=reason)
            assert error.metadata is not None
            assert error.metadata.devices == ()

    def test_of_several_drivers(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [])
        publish(tmp_path, "b.example.com", [], generation=2)
        error = timed_out(
            lambda: wait_for(lambda _: True, "c", "nic", root=tmp_path, timeout=SHORT)
        )
        assert error.reason == "a.example.com generation 1, b.example.com generation 2, no devices"


class TestReasons:
    def test_devices_not_ready_are_all_named(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic(name, "a.example.com") for name in ("a0", "a1")])
        error = timed_out(lambda: wait_for(lambda _: False, "c", "nic", root=tmp_path, timeout=0))
        assert error.reason == "generation 1, device a0, a1 not ready"

    def test_every_missing_network_field_is_named(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com", "net1"), nic("a1", "x")])
        require = ("ips", "hardware_address")
        error = timed_out(
            lambda: wait_for_network_data("c", "nic", root=tmp_path, timeout=0, require=require)
        )
        assert error.reason == (
            "generation 1, device a0 has no networkData.ips and no networkData.hardwareAddress"
        )

    def test_an_empty_reason_is_not_ready(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        error = timed_out(lambda: wait_until(lambda _: "", "c", "nic", root=tmp_path, timeout=0))
        assert error.reason == "not ready"

    def test_the_condition_and_the_files_problems_are_joined(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        empty = resource_claim_file_path("b.example.com", "c", "nic", root=tmp_path)
        empty.write_bytes(b"")  # in the middle of a write
        error = timed_out(
            lambda: wait_until(lambda _: "not yet", "c", "nic", root=tmp_path, timeout=SHORT)
        )
        condition, separator, problem = error.reason.partition("; ")
        assert (condition, separator) == ("not yet", "; ")
        assert str(empty) in problem

    def test_stale_files_are_named(self, tmp_path: Path) -> None:
        # The bind mounts of a container, as far as the link count goes: paths that keep
        # showing files the driver has replaced (unlinked) on the host.
        mounted = []
        descriptors = []
        try:
            for driver in ("a.example.com", "b.example.com"):
                host = publish(tmp_path / "host", driver, [nic(f"{driver[0]}0", driver)])
                descriptors.append(os.open(host, os.O_RDONLY))
                path = resource_claim_file_path(driver, "c", "nic", root=tmp_path)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.symlink_to(f"/proc/self/fd/{descriptors[-1]}")
                mounted.append(path)
                host.unlink()
            with pytest.raises(StaleMetadataError) as info:
                wait_for_network_data("c", "nic", root=tmp_path, timeout=LONG)
        finally:
            for descriptor in descriptors:
                os.close(descriptor)
        error = info.value
        assert error.path == mounted[0]
        message = str(error)
        assert message.startswith(
            f"{mounted[0]}: the driver replaced {mounted[0]}, {mounted[1]} on the host "
        )
        assert f"({NOT_READY_AB}, device a0 has no networkData)" in message
        assert message.endswith("restart the container to see the new one")
        assert error.metadata is not None
        assert [device.name for device in error.metadata.devices] == ["a0", "b0"]


def test_a_wait_ready_in_a_stale_view_raises_with_it_marked(tmp_path: Path) -> None:
    # a.example.com's file was replaced on the host (this view keeps the old inode, as a bind
    # mount does); b.example.com's is current. Ready all the same: raised, the metadata on the
    # error with a's source marked.
    host = publish(tmp_path / "host", "a.example.com", [nic("a0", "a.example.com", "n")])
    descriptor = os.open(host, os.O_RDONLY)
    try:
        host.unlink()
        pinned = resource_claim_file_path("a.example.com", "c", "nic", root=tmp_path)
        pinned.parent.mkdir(parents=True)
        pinned.symlink_to(f"/proc/self/fd/{descriptor}")
        current = publish(tmp_path, "b.example.com", [nic("b0", "b.example.com", "m")])
        for wait in (
            lambda: wait_for_network_data("c", "nic", root=tmp_path, timeout=LONG),
            lambda: wait_for(lambda _: True, "c", "nic", root=tmp_path, timeout=LONG),
        ):
            with pytest.raises(StaleMetadataError) as info:
                wait()
            metadata = info.value.metadata
            assert metadata is not None
            assert info.value.reason is None
            assert [(source.path, source.stale) for source in metadata.sources] == [
                (pinned, True),
                (current, False),
            ]
            assert [device.name for device in metadata.devices] == ["a0", "b0"]
    finally:
        os.close(descriptor)
