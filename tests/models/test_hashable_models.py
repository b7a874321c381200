"""Every public model is hashable: equal objects hash equal, and they work in sets and as keys.

The models are frozen dataclasses; their dict members (attribute maps, labels, annotations,
a generations map) hash as sets of their items, and raw JSON (fieldsV1, the kube models'
``data`` and ``extra``) takes part in equality but not in the hash.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dra_metadata
from dra_metadata import (
    AttributeMap,
    Device,
    DeviceAttribute,
    DeviceMetadata,
    ManagedFieldsEntry,
    ObjectMeta,
    Version,
)
from dra_metadata import strategies as dra_st
from dra_metadata.testing import MetadataTree
from dra_metadata.writer import encode_stream

from helpers import run_python


def models_of(metadata: DeviceMetadata) -> list[object]:
    """``metadata`` and every model inside it."""
    found: list[object] = [metadata, metadata.metadata]
    found += [*metadata.metadata.owner_references, *metadata.metadata.managed_fields]
    for request in metadata.requests:
        found.append(request)
        for device in request.devices:
            attributes = device.attributes
            found += [device, attributes, *(attributes[key] for key in sorted(attributes))]
            if device.network_data is not None:
                found.append(device.network_data)
    return found


def assert_hash_equal(one: object, other: object) -> None:
    assert one == other
    assert hash(one) == hash(other)
    assert len({one, other}) == 1
    assert {one: "value"}[other] == "value"


@settings(max_examples=60, deadline=None)
@given(dra_st.device_metadata(full_object_meta=True))
def test_equal_copies_hash_equal(metadata: DeviceMetadata) -> None:
    # An equal object built independently: decoded from the bytes the writer makes of it.
    decoded = dra_metadata.decode_stream(encode_stream(metadata)).metadata
    decoded = dataclasses.replace(decoded, api_version=metadata.api_version)
    for one, other in zip(models_of(metadata), models_of(decoded), strict=True):
        assert_hash_equal(one, other)
    assert_hash_equal(metadata, copy.deepcopy(metadata))
    assert_hash_equal(metadata, pickle.loads(pickle.dumps(metadata)))  # noqa: S301 - our own bytes


@settings(max_examples=60, deadline=None)
@given(dra_st.device_metadata(), dra_st.device_metadata())
def test_hash_follows_equality(one: DeviceMetadata, other: DeviceMetadata) -> None:
    if one == other:
        assert hash(one) == hash(other)
    assert len({one, other}) == (1 if one == other else 2)


@settings(max_examples=60, deadline=None)
@given(dra_st.devices())
def test_decoded_attribute_maps_hash_as_the_maps_built_by_hand(device: Device) -> None:
    built = AttributeMap(dict(device.attributes.items()))
    decoded = dra_metadata.decode_stream(
        encode_stream(DeviceMetadata(requests=[dra_metadata.DeviceMetadataRequest("r", [device])]))
    ).metadata.devices[0]
    assert_hash_equal(decoded.attributes, built)
    assert_hash_equal(decoded, device)


def test_a_device_as_the_issue_shows_it(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path)
    gpu = Device(
        name="gpu-0",
        attributes={"gpu.example.com/index": 0, "driverVersion": Version("580.65.6")},
    )
    tree.add_claim("training-gpus", "gpu", "gpu.example.com", [gpu])
    metadata = dra_metadata.read_claim_metadata("training-gpus", "gpu", root=tmp_path)
    device = metadata.devices[0]
    assert isinstance(hash(device), int)
    assert {device} == {metadata.devices[0]}
    assert {metadata: 1}[dra_metadata.read_claim_metadata("training-gpus", "gpu", root=tmp_path)]
    assert isinstance(hash(metadata.metadata), int)


def test_labels_and_annotations_hash_as_sets_of_items() -> None:
    one = ObjectMeta(name="c", labels={"a": "1", "b": "2"}, annotations={"x": "y"})
    other = ObjectMeta(name="c", labels={"b": "2", "a": "1"}, annotations={"x": "y"})
    assert_hash_equal(one, other)
    assert one != ObjectMeta(name="c", labels={"a": "1"}, annotations={"x": "y"})


def test_kept_json_is_compared_but_not_hashed() -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    entry = ManagedFieldsEntry(manager="m", time=moment, fields_v1={"f:metadata": {"f:a": {}}})
    same = ManagedFieldsEntry(manager="m", time=moment, fields_v1={"f:metadata": {"f:a": {}}})
    other = ManagedFieldsEntry(manager="m", time=moment, fields_v1={"f:metadata": {}})
    assert_hash_equal(entry, same)
    assert entry != other  # equality still sees fieldsV1
    assert len({entry, other}) == 2
    assert_hash_equal(ObjectMeta(managed_fields=[entry]), ObjectMeta(managed_fields=[same]))


def test_versions_hash_as_their_text() -> None:
    # A version attribute built from a Version equals (and hashes as) the one decoded from text.
    assert_hash_equal(DeviceAttribute(version=Version("1.2.3")), DeviceAttribute(version="1.2.3"))
    assert_hash_equal(Version("1.2.3"), "1.2.3")


def samples(tmp_path: Path) -> dict[type, object]:
    """One instance of each public model of dra_metadata, from real files where they come
    from files."""
    tree = MetadataTree(tmp_path)
    tree.add_claim("nic", "vf", "sriov.example.com", ["vf-0"])
    metadata = dra_metadata.read_claim_metadata("nic", "vf", root=tmp_path)
    device = metadata.devices[0]
    (claim,) = dra_metadata.list_claims(root=tmp_path)
    (mounted,) = dra_metadata.list_devices(root=tmp_path)
    decoded = dra_metadata.decode_stream(
        encode_stream(dataclasses.replace(metadata, pod_claim_name="Not A Name")), validate=True
    )
    event = next(dra_metadata.watch_claim_metadata("nic", "vf", root=tmp_path))
    return {
        DeviceMetadata: metadata,
        dra_metadata.DeviceMetadataRequest: metadata.requests[0],
        Device: device,
        DeviceAttribute: DeviceAttribute(versions=["1.0.0"]),
        AttributeMap: device.attributes,
        dra_metadata.NetworkDeviceData: dra_metadata.NetworkDeviceData("net1", ["10.0.0.1/24"]),
        dra_metadata.MetadataSource: metadata.sources[0],
        ObjectMeta: ObjectMeta(labels={"a": "b"}, annotations={"c": "d"}),
        dra_metadata.OwnerReference: dra_metadata.OwnerReference(kind="Pod", controller=True),
        ManagedFieldsEntry: ManagedFieldsEntry(manager="m", fields_v1={"f:a": [1, {"b": None}]}),
        dra_metadata.DecodeResult: decoded,
        dra_metadata.FieldError: decoded.errors[0],
        dra_metadata.MountedClaim: claim,
        dra_metadata.MountedDevice: mounted,
        dra_metadata.MetadataEvent: event,
        Version: Version("1.0.0-rc.1+b"),
    }


def is_model(value: object) -> bool:
    return isinstance(value, type) and (
        dataclasses.is_dataclass(value) or value in {AttributeMap, Version}
    )


def test_every_public_model_of_the_package_is_hashable(tmp_path: Path) -> None:
    built = samples(tmp_path)
    public = {getattr(dra_metadata, name) for name in dra_metadata.__all__}
    assert {kind for kind in public if is_model(kind)} == set(built)  # none left out
    for kind, sample in built.items():
        assert type(sample) is kind
        assert_hash_equal(sample, copy.deepcopy(sample))


def kube_samples() -> dict[type, object]:
    from dra_metadata import kube  # noqa: PLC0415

    condition = kube.DeviceCondition(
        "Ready", "True", last_transition_time=datetime(2026, 1, 1, tzinfo=timezone.utc)
    )
    device = kube.AllocatedDevice(
        "nic",
        "sriov.example.com",
        "worker-0",
        "vf-0",
        network_data=dra_metadata.NetworkDeviceData("net1"),
        conditions=(condition,),
        data={"vendor": {"nested": [1, 2]}},
    )
    partition = kube.PartitionTypeStatus("gpu.example.com/profile", "1g", 4, 2, {"new": [1]})
    capacity = kube.ShareableCapacity("memory", "40Gi", "10Gi", "30Gi", {"new": {}})
    shareable = kube.ShareableSummary(1, 2, (capacity,), {"new": [{}]})
    pool = kube.PoolStatus(
        "gpu.example.com",
        "worker-0",
        1,
        partition_summary=(partition,),
        shareable_summary=shareable,
        extra={"new": {"x": [1]}},
    )
    return {
        kube.DeviceCondition: condition,
        kube.AllocatedDevice: device,
        kube.ClaimStatus: kube.ClaimStatus("c", "ns", "uid", "1", devices=(device,)),
        kube.DeviceHealth: kube.DeviceHealth("main", "c", None, None, None, None, "Healthy"),
        kube.PartitionTypeStatus: partition,
        kube.ShareableCapacity: capacity,
        kube.ShareableSummary: shareable,
        kube.PoolStatus: pool,
        kube.PoolStatusResult: kube.PoolStatusResult((pool,), 1, False, "r", None, (condition,)),
    }


def test_every_public_model_of_kube_is_hashable() -> None:
    from dra_metadata import kube  # noqa: PLC0415

    built = kube_samples()
    public = {getattr(kube, name) for name in kube.__all__}
    assert {kind for kind in public if is_model(kind)} == set(built)
    for kind, sample in built.items():
        assert type(sample) is kind
        assert_hash_equal(sample, copy.deepcopy(sample))
    # Raw JSON is compared, not hashed: statuses that differ only there are two set members.
    device: Any = built[kube.AllocatedDevice]
    changed = dataclasses.replace(device, data={"vendor": {}})
    assert changed != device
    assert hash(changed) == hash(device)
    assert len({changed, device}) == 2


def test_hashing_the_file_models_imports_no_api_client() -> None:
    result = run_python(
        "import sys\n"
        "import dra_metadata\n"
        "metadata = dra_metadata.DeviceMetadata(\n"
        "    metadata=dra_metadata.ObjectMeta(labels={'a': 'b'}),\n"
        "    requests=[dra_metadata.DeviceMetadataRequest('r', [dra_metadata.Device(\n"
        "        attributes={'v': dra_metadata.Version('1.0.0')})])],\n"
        ")\n"
        "hash(metadata)\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in\n"
        "    {'lightkube', 'httpx2', 'pydantic'} or name.startswith('dra_metadata.kube')))\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "unhashable",
    [{"key": "value"}, ["a"]],
    ids=["dict", "list"],
)
def test_kept_json_of_any_shape_leaves_the_entry_hashable(unhashable: object) -> None:
    entry = ManagedFieldsEntry(fields_v1=unhashable)
    assert hash(entry) == hash(ManagedFieldsEntry(fields_v1=copy.deepcopy(unhashable)))


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=4))
def test_label_order_does_not_change_the_hash(labels: dict[str, str]) -> None:
    reordered = dict(reversed(list(labels.items())))
    assert_hash_equal(ObjectMeta(labels=labels), ObjectMeta(labels=reordered))
