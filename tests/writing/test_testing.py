"""dra_metadata.writer files and dra_metadata.testing trees, and the pytest plugin."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import (
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    ManagedFieldsEntry,
    MetadataEventKind,
    NetworkDeviceData,
    ObjectMeta,
    read_claim_metadata,
    read_metadata_file,
    read_template_metadata,
    watch_metadata_file,
)
from dra_metadata.testing import MetadataTree
from dra_metadata.writer import (
    encode_stream,
    host_metadata_file_path,
    update_metadata_file,
    write_metadata_file,
)

from helpers import V1ALPHA1, V1BETA1

pytest_plugins = ["pytester"]


def sample(generation: int = 1) -> DeviceMetadata:
    return DeviceMetadata(
        metadata=ObjectMeta(name="c", namespace="ns", uid="u", generation=generation),
        requests=[
            DeviceMetadataRequest(name="r", devices=[Device(driver="d", pool="p", name="n")])
        ],
    )


def with_devices(*devices: Device) -> DeviceMetadata:
    """sample() with these devices in its one request."""
    return replace(sample(), requests=[DeviceMetadataRequest(name="r", devices=devices)])


class TestWriter:
    def test_atomic_write(self, tmp_path: Path) -> None:
        path = tmp_path / "a" / "b" / "metadata.json"
        assert write_metadata_file(path, sample()) == path
        first = path.stat()
        write_metadata_file(path, sample(2))
        second = path.stat()
        assert first.st_ino != second.st_ino  # a new inode: renamed over the target
        assert stat.S_IMODE(second.st_mode) == 0o644
        assert sorted(os.listdir(path.parent)) == ["metadata.json"]  # no temporary left behind
        assert path.read_bytes() == encode_stream(sample(2))
        assert stat.S_IMODE(path.parent.stat().st_mode) & 0o755 == 0o755

    def test_in_place_write(self, tmp_path: Path) -> None:
        path = tmp_path / "metadata.json"
        write_metadata_file(path, sample(), mode="in-place", versions=[V1ALPHA1])
        inode = path.stat().st_ino
        write_metadata_file(path, sample(2), mode="in-place", versions=[V1ALPHA1])
        assert path.stat().st_ino == inode
        assert path.read_bytes() == encode_stream(sample(2), versions=[V1ALPHA1])

    def test_unknown_mode(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="mode"):
            write_metadata_file(tmp_path / "x", sample(), mode="sideways")  # type: ignore[arg-type]

    def test_update_replaces_devices_and_bumps_generation(self, tmp_path: Path) -> None:
        path = tmp_path / "metadata.json"
        write_metadata_file(path, sample(3))
        nic = Device(driver="d", pool="p", name="n", network_data=NetworkDeviceData("net1"))
        written = update_metadata_file(path, [nic])
        assert written.generation == 4
        decoded = read_metadata_file(path)
        assert decoded.generation == 4
        assert decoded.devices == (nic,)
        assert decoded.requests[0].name == "r"
        assert decoded.api_version == V1BETA1

    def test_update_with_a_function(self, tmp_path: Path) -> None:
        path = tmp_path / "metadata.json"
        write_metadata_file(path, sample())
        update_metadata_file(path, lambda current: replace(current, pod_claim_name="pod"))
        assert read_metadata_file(path).pod_claim_name == "pod"
        assert read_metadata_file(path).generation == 2
        with pytest.raises(TypeError, match="must return a DeviceMetadata"):
            update_metadata_file(path, lambda _: None)  # type: ignore[arg-type,return-value]

    def test_update_needs_one_request_to_replace_devices(self, tmp_path: Path) -> None:
        path = tmp_path / "metadata.json"
        two = replace(
            sample(), requests=[DeviceMetadataRequest(name="a"), DeviceMetadataRequest(name="b")]
        )
        write_metadata_file(path, two)
        with pytest.raises(ValueError, match="exactly one request"):
            update_metadata_file(path, [])

    @pytest.mark.parametrize(
        ("metadata", "field", "reason"),
        [
            (
                DeviceMetadata(metadata=ObjectMeta(name="gpu-\udc80")),
                "metadata.name",
                "surrogates not allowed",
            ),
            (
                DeviceMetadata(metadata=ObjectMeta(labels={"a\udc80": "x"})),
                "metadata.labels[a\\udc80]",
                "its key: str is not valid UTF-8",
            ),
            (
                DeviceMetadata(
                    metadata=ObjectMeta(
                        managed_fields=[ManagedFieldsEntry(fields_v1={"f:a": {"f:b": {1}}})]
                    )
                ),
                "metadata.managedFields[0].fieldsV1[f:a][f:b]",
                "not JSON serializable: set",
            ),
            (
                with_devices(
                    Device(driver="d", pool="p", name="n"),
                    Device(
                        driver="d",
                        pool="p",
                        name="m",
                        attributes={"k": DeviceAttribute(string="\udc80")},
                    ),
                ),
                "requests[0].devices[1].attributes[k].string",
                "surrogates not allowed",
            ),
            (
                with_devices(
                    Device(
                        driver="d",
                        pool="p",
                        name="n",
                        network_data=NetworkDeviceData(ips=("10.0.0.1/8", "\ud800")),
                    )
                ),
                "requests[0].devices[0].networkData.ips[1]",
                "surrogates not allowed",
            ),
        ],
    )
    def test_unencodable_values_are_named(
        self, tmp_path: Path, metadata: DeviceMetadata, field: str, reason: str
    ) -> None:
        with pytest.raises(dra_metadata.MetadataEncodeError) as raised:
            encode_stream(metadata)
        assert raised.value.field == field
        assert reason in raised.value.reason
        assert isinstance(raised.value, ValueError)
        str(raised.value).encode()  # printable: no lone surrogate in the message

        path = tmp_path / "claim" / "metadata.json"
        write_metadata_file(path, sample())
        before = path.read_bytes()
        with pytest.raises(dra_metadata.MetadataEncodeError) as raised:
            update_metadata_file(path, lambda _: metadata)
        assert raised.value.path == path
        assert str(raised.value).startswith(f"{path}: cannot encode {raised.value.field}")
        assert path.read_bytes() == before  # nothing lost
        assert os.listdir(path.parent) == ["metadata.json"]
        with pytest.raises(dra_metadata.MetadataEncodeError):
            write_metadata_file(tmp_path / "new" / "metadata.json", metadata)
        assert not (tmp_path / "new").exists()

    def test_host_path(self) -> None:
        assert host_metadata_file_path(
            "/var/lib/kubelet/plugins/gpu.example.com",
            "default",
            "my-claim",
            "gpu-request/high-memory",
        ) == Path(
            "/var/lib/kubelet/plugins/gpu.example.com/dra-device-metadata/default_my-claim/gpu-request/metadata.json"
        )
        with pytest.raises(dra_metadata.InvalidNameError):
            host_metadata_file_path("/p", "default", "../x", "r")

    @pytest.mark.parametrize(
        ("mode", "pinned", "kind"),
        [
            ("in-place", False, MetadataEventKind.UPDATED),
            ("atomic", False, MetadataEventKind.UPDATED),
            ("in-place", True, MetadataEventKind.UPDATED),  # a bind mount follows in-place writes
            ("atomic", True, MetadataEventKind.STALE),  # ...but not a rename
        ],
    )
    def test_write_modes_as_a_watcher_sees_them(
        self, tmp_path: Path, mode: str, pinned: bool, kind: MetadataEventKind
    ) -> None:
        path = tmp_path / "d-metadata.json"
        write_metadata_file(path, sample(), mode="in-place")
        descriptor = os.open(path, os.O_RDONLY)
        try:
            watched = Path(f"/proc/self/fd/{descriptor}") if pinned else path
            events = watch_metadata_file(watched, timeout=10)
            assert next(events).kind is MetadataEventKind.CREATED
            write_metadata_file(path, sample(2), mode=mode)  # type: ignore[arg-type]
            assert next(events).kind is kind
            events.close()
        finally:
            os.close(descriptor)


class TestMetadataTree:
    def test_claims_as_a_driver_writes_them(self, tmp_path: Path) -> None:
        tree = MetadataTree(tmp_path)
        path = tree.add_claim(
            "gpu-claim",
            "gpu",
            "gpu.example.com",
            ["gpu-0", Device(name="gpu-1", attributes={"uuid": DeviceAttribute(string="GPU-1")})],
        )
        assert path == dra_metadata.resource_claim_file_path(
            "gpu.example.com", "gpu-claim", "gpu", root=tmp_path
        )
        metadata = read_claim_metadata("gpu-claim", "gpu", root=tmp_path)
        assert (metadata.name, metadata.namespace, metadata.generation) == (
            "gpu-claim",
            "default",
            1,
        )
        assert [(d.driver, d.pool, d.name) for d in metadata.devices] == [
            ("gpu.example.com", "worker-0", "gpu-0"),
            ("gpu.example.com", "worker-0", "gpu-1"),
        ]
        assert metadata.devices[1].attribute("uuid") == "GPU-1"
        assert metadata.api_version == V1BETA1
        assert dra_metadata.validate(metadata) == ()

    def test_uids_are_reproducible(self, tmp_path: Path) -> None:
        one = MetadataTree(tmp_path / "1")
        two = MetadataTree(tmp_path / "2")
        one.add_claim("c", "r", "d", ["n"])
        two.add_claim("c", "r", "d", ["n"])
        assert one.read("c", "r", "d").uid == two.read("c", "r", "d").uid
        assert one.path("c", "r", "d").read_bytes() == two.path("c", "r", "d").read_bytes()

    def test_template_claims_with_subrequests(self, tmp_path: Path) -> None:
        tree = MetadataTree(tmp_path, versions=[V1ALPHA1], namespace="ml")
        tree.add_template_claim("accelerator", "gpu/high-memory", "gpu.example.com", ["gpu-3"])
        metadata = read_template_metadata("accelerator", "gpu", root=tmp_path)
        assert metadata.pod_claim_name == "accelerator"
        assert metadata.name.startswith("accelerator-")
        assert metadata.requests[0].name == "gpu/high-memory"
        assert metadata.api_version == V1ALPHA1

    def test_deferred_network_data(self, tmp_path: Path) -> None:
        tree = MetadataTree(tmp_path, mode="in-place")
        tree.add_claim("net", "nic", "nic.example.com", ["nic-0"])
        inode = tree.path("net", "nic", "nic.example.com").stat().st_ino
        data = NetworkDeviceData(interface_name="net1", ips=("10.0.0.5/24",))
        written = tree.update(
            "net", "nic", "nic.example.com", devices=[Device(name="nic-0", network_data=data)]
        )
        assert written.generation == 2
        assert tree.path("net", "nic", "nic.example.com").stat().st_ino == inode
        ready = dra_metadata.wait_for_network_data("net", "nic", root=tmp_path, timeout=1)
        assert ready.devices[0].network_data == data
        tree.update(
            "net", "nic", "nic.example.com", change=lambda m: replace(m, pod_claim_name="p")
        )
        assert tree.read("net", "nic", "nic.example.com").generation == 3
        with pytest.raises(ValueError, match="either devices or change"):
            tree.update("net", "nic", "nic.example.com")

    def test_remove(self, tmp_path: Path) -> None:
        tree = MetadataTree(tmp_path)
        tree.add_claim("c", "a", "d1", ["n"])
        tree.add_claim("c", "a", "d2", ["n"])
        tree.add_claim("c", "b", "d1", ["n"])
        tree.remove("c", "a", "d1")
        assert [s.driver for s in read_claim_metadata("c", "a", root=tmp_path).sources] == ["d2"]
        tree.remove("c", "a")
        with pytest.raises(dra_metadata.MetadataNotFoundError):
            read_claim_metadata("c", "a", root=tmp_path)
        tree.remove("c")
        assert not (tmp_path / "resourceclaims" / "c").exists()
        for gone in (("c",), ("c", "a"), ("c", "a", "d1")):
            with pytest.raises(dra_metadata.MetadataNotFoundError, match="nothing to remove"):
                tree.remove(*gone)
        tree.add_claim("c", "a", "d1", ["n"])
        with pytest.raises(ValueError, match="give request_name too"):
            tree.remove("c", driver="d1")  # never more than asked for
        assert tree.read("c", "a", "d1").name == "c"

    def test_arguments_of_the_wrong_type_are_refused(self, tmp_path: Path) -> None:
        tree = MetadataTree(tmp_path)
        with pytest.raises(TypeError, match="not a str: \\['gpu-0'\\]"):
            tree.add_claim("c", "r", "d", "gpu-0")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="each device must be a Device or a name, not int"):
            tree.add_claim("c", "r", "d", [5])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="versions must be a sequence"):
            MetadataTree(tmp_path, versions=V1BETA1)
        assert not (tmp_path / "resourceclaims").exists()

    def test_names_are_checked_as_the_readers_check_them(self, tmp_path: Path) -> None:
        tree = MetadataTree(tmp_path)
        tree.add_claim("c", "r", "d", ["n"])
        undecodable = "gpu-\udc80"  # what os.fsdecode makes of bytes that are not UTF-8
        calls = [
            lambda: tree.add_claim(undecodable, "r", "d", ["n"]),
            lambda: tree.add_claim("c", undecodable, "d", ["n"]),
            lambda: tree.add_claim("c", "r", undecodable, ["n"]),
            lambda: tree.add_claim("c", "r", "d", ["n"], namespace=undecodable),
            lambda: tree.add_template_claim(undecodable, "r", "d", ["n"]),
            lambda: tree.add_template_claim("p", "r", "d", ["n"], claim_name=undecodable),
            lambda: tree.update("c", "r", undecodable, devices=["n"]),
            lambda: tree.remove(undecodable),
            lambda: tree.path("c", "r", undecodable),
            lambda: tree.add_claim("../escape", "r", "d", ["n"]),
            lambda: MetadataTree(tmp_path, namespace="a/b"),
        ]
        for call in calls:
            with pytest.raises(dra_metadata.InvalidNameError):
                call()
        assert sorted(os.listdir(tmp_path / "resourceclaims")) == ["c"]
        assert not (tmp_path / "resourceclaimtemplates").exists()

    def test_repr(self, tmp_path: Path) -> None:
        tree = MetadataTree(tmp_path, mode="in-place", versions=[V1ALPHA1], namespace="ml")
        assert repr(tree) == (
            f"MetadataTree({str(tmp_path)!r}, mode='in-place', namespace='ml', "
            f"pool='worker-0', versions=['{V1ALPHA1}'])"
        )

    def test_devices_of_another_driver_are_refused(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="each driver writes its own file"):
            MetadataTree(tmp_path).add_claim("c", "r", "d1", [Device(driver="d2", name="n")])

    def test_fixture(self, dra_metadata_tree: MetadataTree) -> None:
        dra_metadata_tree.add_claim("gpu-claim", "gpu", "gpu.example.com", ["gpu-0"])
        assert dra_metadata.default_root() == dra_metadata_tree.root
        assert read_claim_metadata("gpu-claim", "gpu").devices[0].name == "gpu-0"


USER_CODE = '''
import dra_metadata


def visible_devices() -> str:
    """What a training script does: pick its GPUs by UUID."""
    metadata = dra_metadata.read_claim_metadata("gpu-claim", "gpu")
    return ",".join(str(device.attribute("uuid")) for device in metadata.devices)
'''

USER_TEST = """
from dra_metadata import Device, DeviceAttribute

import app


def test_visible_devices(dra_metadata_tree):
    dra_metadata_tree.add_claim(
        "gpu-claim",
        "gpu",
        "gpu.example.com",
        [Device(name=f"gpu-{i}", attributes={"uuid": DeviceAttribute(string=f"GPU-{i}")}) for i in range(2)],
    )
    assert app.visible_devices() == "GPU-0,GPU-1"


def test_missing_claim(dra_metadata_tree):
    import pytest
    import dra_metadata

    with pytest.raises(dra_metadata.MetadataNotFoundError):
        app.visible_devices()
"""


def test_a_user_project_uses_the_fixture(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(app=USER_CODE, test_app=USER_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")  # plugin via entry point
    result.assert_outcomes(passed=2)


def test_the_package_imports_without_pytest_or_hypothesis() -> None:
    code = (
        "import sys\n"
        "sys.modules['pytest'] = None\n"
        "sys.modules['hypothesis'] = None\n"
        "import dra_metadata, dra_metadata.testing, dra_metadata.writer\n"
        "try:\n"
        "    import dra_metadata.strategies\n"
        "except ImportError:\n"
        "    print('strategies need hypothesis')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "strategies need hypothesis\n"
