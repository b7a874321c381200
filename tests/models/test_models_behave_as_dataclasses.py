"""The models write their own ``__init__`` and get their other methods without compiling any (the
package's import time); each behaves exactly as the ``@dataclass(frozen=True, slots=True)`` of the
same fields would.

For every model, the reference is that dataclass, made here from the model's own fields: a field
added without its argument in ``__init__``, a default that differs, an argument out of order, a
comparison, hash, repr, pickle or frozen check that strays from the dataclass's, all fail here.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dra_metadata
from dra_metadata import kube
from dra_metadata import strategies as dra_st
from dra_metadata._decoding._result import build_result
from dra_metadata._model._attributes import build_attribute
from dra_metadata._model._frozen import FACTORY, frozen_model
from dra_metadata._model._metadata import build_metadata, build_request
from dra_metadata._model._models import build_device, build_network_data
from dra_metadata._model._object_meta import (
    build_managed_fields_entry,
    build_object_meta,
    build_owner_reference,
)
from dra_metadata.writer import encode_stream

MODELS: tuple[type, ...] = (
    dra_metadata.DeviceAttribute,
    dra_metadata.NetworkDeviceData,
    dra_metadata.Device,
    dra_metadata.DeviceMetadataRequest,
    dra_metadata.OwnerReference,
    dra_metadata.ManagedFieldsEntry,
    dra_metadata.ObjectMeta,
    dra_metadata.DeviceMetadata,
    dra_metadata.MetadataSource,
    dra_metadata.DecodeResult,
    dra_metadata.FieldError,
    dra_metadata.MountedClaim,  # what list_claims and list_devices return, made the same way
    dra_metadata.MountedDevice,
    dra_metadata.MetadataEvent,  # what a watch yields
    kube.DeviceCondition,  # the API side's, made the same way
    kube.AllocatedDevice,
    kube.ClaimStatus,
    kube.DeviceHealth,
)
# Those whose first fields have no default.
MADE_WITH_ARGUMENTS = (
    dra_metadata.MetadataSource,
    dra_metadata.DecodeResult,
    dra_metadata.FieldError,
    dra_metadata.MountedClaim,
    dra_metadata.MountedDevice,
    dra_metadata.MetadataEvent,
    kube.DeviceCondition,
    kube.AllocatedDevice,
    kube.ClaimStatus,
    kube.DeviceHealth,
)
# The decoder's unchecked constructors, which each model writes out next to its class.
BUILDERS: dict[type, Any] = {
    dra_metadata.DeviceAttribute: build_attribute,
    dra_metadata.NetworkDeviceData: build_network_data,
    dra_metadata.Device: build_device,
    dra_metadata.DeviceMetadataRequest: build_request,
    dra_metadata.OwnerReference: build_owner_reference,
    dra_metadata.ManagedFieldsEntry: build_managed_fields_entry,
    dra_metadata.ObjectMeta: build_object_meta,
    dra_metadata.DeviceMetadata: build_metadata,
    dra_metadata.DecodeResult: build_result,
}
# Methods that differ from the dataclass's on purpose: the reference takes them too. Every other
# method, written out (the hot models' __eq__ and __hash__) or made, must be the dataclass's.
DELIBERATE = {
    dra_metadata.ManagedFieldsEntry: ("__eq__", "__hash__"),  # raw JSON: no recursion, no hash
    dra_metadata.ObjectMeta: ("__hash__",),  # labels and annotations hashed as sets of items
    dra_metadata.MetadataEvent: ("__hash__",),  # generations hashed as a set of items
}
# Arguments whose annotation is wider than the field's on purpose.
WIDER_ARGUMENTS = {
    (dra_metadata.Device, "attributes"),  # plain values too, made into DeviceAttributes
}


def reference_of(model: type) -> type:
    """The ``@dataclass(frozen=True, slots=True)`` of ``model``'s fields, its checks included."""
    specifications = [
        (
            item.name,
            item.type,
            dataclasses.field(
                default=item.default,
                default_factory=item.default_factory,
                init=item.init,
                repr=item.repr,
                hash=item.hash,
                compare=item.compare,
                metadata=item.metadata,
                kw_only=item.kw_only,
            ),
        )
        for item in dataclasses.fields(model)
    ]
    # The checks, a repr of the class's own, and the methods in DELIBERATE.
    own = ["__post_init__", *DELIBERATE.get(model, ())]
    if not model.__dataclass_params__.repr:
        own.append("__repr__")
    namespace: dict[str, Any] = {
        name: model.__dict__[name] for name in own if name in model.__dict__
    }
    reference: type = dataclasses.make_dataclass(
        model.__name__,
        specifications,
        namespace=namespace,
        frozen=True,
        slots=True,
        repr=model.__dataclass_params__.repr,
    )
    reference.__qualname__ = model.__qualname__
    return reference


REFERENCES = {model: reference_of(model) for model in MODELS}


def values_of(instance: Any) -> dict[str, Any]:
    return {item.name: getattr(instance, item.name) for item in dataclasses.fields(instance)}


def twin(instance: Any) -> Any:
    """The reference's instance with the same field values."""
    return REFERENCES[type(instance)](**values_of(instance))


def models_in(metadata: dra_metadata.DeviceMetadata) -> list[Any]:
    """``metadata`` and every model instance inside it, of every model class."""
    found: list[Any] = [metadata, metadata.metadata]
    found += [*metadata.metadata.owner_references, *metadata.metadata.managed_fields]
    for request in metadata.requests:
        found.append(request)
        for device in request.devices:
            found += [device, *device.attributes.values()]
            if device.network_data is not None:
                found.append(device.network_data)
    # Not built through __init__, which a test here checks: as the decoder builds its objects.
    source = built_without_init(
        dra_metadata.MetadataSource,
        path=Path("/x"),
        driver="gpu.example.com",
        metadata=metadata,
        skipped_versions=("v9",),
        stale=True,
    )
    finding = built_without_init(
        dra_metadata.FieldError,
        path="metadata.name",
        type="invalid",
        value="x",
        detail="a detail",
        file=Path("/x"),
    )
    result = build_result(metadata, "metadata.resource.k8s.io/v1beta1", ("v9",), (finding,))
    found += [source, result, finding]
    claim = dra_metadata.MountedClaim(
        "claim",
        metadata.name,
        "gpu",
        ("gpu.example.com",),
        (Path("/x/gpu.example.com-metadata.json"),),
        Path("/x"),
    )
    found.append(claim)
    found += [
        dra_metadata.MountedDevice(claim, "gpu", device, source) for device in metadata.devices
    ]
    generations = {"gpu.example.com": metadata.generation}
    found.append(
        dra_metadata.MetadataEvent(
            dra_metadata.MetadataEventKind.UPDATED, metadata, generations, (Path("/x"),), "gpu"
        )
    )
    return found + api_models_of(metadata)


def api_models_of(metadata: dra_metadata.DeviceMetadata) -> list[Any]:
    """What the API side would say of the claim ``metadata`` describes."""
    ready = kube.DeviceCondition(
        "Ready", "True", "NetworkDeviceReady", "up", datetime(2026, 1, 2, tzinfo=timezone.utc), 3
    )
    allocated = [
        kube.AllocatedDevice(
            request.name,
            device.driver,
            device.pool,
            device.name,
            None,
            device.network_data,
            (ready,),
            {"vendor": [metadata.generation]},
        )
        for request in metadata.requests
        for device in request.devices
    ]
    status = kube.ClaimStatus(
        metadata.name,
        metadata.namespace,
        metadata.uid,
        metadata.metadata.resource_version,
        metadata.pod_claim_name,
        tuple(allocated),
        bool(allocated),
        tuple(request.name for request in metadata.requests),
    )
    health = [
        kube.DeviceHealth(
            "trainer",
            metadata.pod_claim_name,
            device.request,
            device.driver,
            device.pool,
            device.name,
            "Unhealthy" if index % 2 else "Healthy",
            f"XID {index}",
            f"claim:{metadata.name}",
            f"{device.driver}/{device.pool}/{device.name}",
            metadata.name,
            None,
        )
        for index, device in enumerate(allocated)
    ]
    return [ready, *allocated, status, *health]


def built_without_init(model: type, **values: object) -> Any:
    instance = object.__new__(model)
    for name, value in values.items():
        object.__setattr__(instance, name, value)
    return instance


@pytest.mark.parametrize("model", list(BUILDERS), ids=lambda model: model.__name__)
def test_each_unchecked_constructor_takes_every_field_in_order(model: type) -> None:
    names = [item.name for item in dataclasses.fields(model)]
    assert list(inspect.signature(BUILDERS[model]).parameters) == names
    values = [object() for _ in names]  # unchecked: any value is stored as it is
    built = BUILDERS[model](*values)
    assert type(built) is model
    assert all(getattr(built, name) is value for name, value in zip(names, values, strict=True))
    assert not hasattr(built, "__dict__")


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_init_takes_the_arguments_the_dataclass_takes(model: type) -> None:
    ours = inspect.signature(model).parameters
    theirs = inspect.signature(REFERENCES[model]).parameters
    assert list(ours) == list(theirs)
    for name, parameter in ours.items():
        expected = theirs[name]
        assert parameter.kind is expected.kind
        if expected.default is not inspect.Parameter.empty and repr(expected.default) == (
            "<factory>"
        ):
            assert parameter.default is FACTORY, name
        else:
            assert parameter.default == expected.default, name
            assert type(parameter.default) is type(expected.default), name
        if (model, name) not in WIDER_ARGUMENTS:
            assert parameter.annotation == expected.annotation, name


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_the_class_is_the_dataclass_it_says(model: type) -> None:
    reference = REFERENCES[model]
    assert model.__slots__ == reference.__slots__
    assert model.__match_args__ == reference.__match_args__
    parameters = model.__dataclass_params__
    assert (parameters.init, parameters.eq, parameters.frozen) == (True, True, True)
    assert parameters.repr == reference.__dataclass_params__.repr
    assert [_described(item) for item in dataclasses.fields(model)] == [
        _described(item) for item in dataclasses.fields(reference)
    ]


def _described(item: dataclasses.Field[Any]) -> tuple[object, ...]:
    return (
        item.name,
        item.type,
        item.default,
        item.default_factory,
        item.init,
        item.repr,
        item.hash,
        item.compare,
        dict(item.metadata),
        item.kw_only,
    )


@pytest.mark.parametrize(
    "model",
    [model for model in MODELS if model not in MADE_WITH_ARGUMENTS],
    ids=lambda model: model.__name__,
)
def test_defaults_are_the_dataclass_defaults(model: type) -> None:
    made, expected = model(), REFERENCES[model]()
    assert twin(made) == expected
    assert repr(made) == repr(expected)
    assert not hasattr(made, "__dict__")


@settings(max_examples=40, deadline=None)
@given(dra_st.device_metadata(full_object_meta=True), dra_st.device_metadata())
def test_instances_behave_as_the_dataclass_instances(
    one: dra_metadata.DeviceMetadata, other: dra_metadata.DeviceMetadata
) -> None:
    decoded = dra_metadata.decode_stream(encode_stream(one)).metadata
    decoded = dataclasses.replace(decoded, api_version=one.api_version)
    pairs = [
        *zip(models_in(one), models_in(decoded), strict=True),
        *zip(models_in(one), models_in(other), strict=False),  # as many as the shorter
    ]
    for left, right in pairs:
        if type(left) is not type(right):
            continue
        assert (left == right) == (twin(left) == twin(right))
        assert (left != right) == (twin(left) != twin(right))
        assert (left == object()) is False
        if left == right:
            assert hash(left) == hash(right)
    for instance in models_in(decoded):
        assert values_of(type(instance)(**values_of(instance))) == values_of(instance)
    for instance in models_in(one):
        reference = twin(instance)
        assert repr(instance) == repr(reference)
        assert hash(instance) == hash(reference)
        assert pickle.loads(pickle.dumps(instance)) == instance  # noqa: S301 - our own bytes
        assert copy.copy(instance) == instance
        assert copy.deepcopy(instance) == instance
        assert dataclasses.astuple(instance) == dataclasses.astuple(reference)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_fields_cannot_be_assigned_or_deleted(model: type) -> None:
    instance = next(item for item in models_in(_full_metadata()) if type(item) is model)
    reference = twin(instance)
    for name in (item.name for item in dataclasses.fields(model)):
        for target in (instance, reference):
            with pytest.raises(dataclasses.FrozenInstanceError) as assigned:
                setattr(target, name, None)
            with pytest.raises(dataclasses.FrozenInstanceError) as deleted:
                delattr(target, name)
        assert str(assigned.value) == f"cannot assign to field {name!r}"
        assert str(deleted.value) == f"cannot delete field {name!r}"
    with pytest.raises(dataclasses.FrozenInstanceError):
        instance.not_a_field = 1
    assert dataclasses.replace(instance) == instance


def _full_metadata() -> dra_metadata.DeviceMetadata:
    device = dra_metadata.Device(
        driver="gpu.example.com",
        name="gpu-0",
        attributes={"index": 0},
        network_data=dra_metadata.NetworkDeviceData("net1", ("10.0.0.1/24",)),
    )
    meta = dra_metadata.ObjectMeta(
        name="claim",
        labels={"a": "b"},
        owner_references=(dra_metadata.OwnerReference(kind="Pod", name="p"),),
        managed_fields=(dra_metadata.ManagedFieldsEntry(manager="m", fields_v1={"f:x": {}}),),
    )
    request = dra_metadata.DeviceMetadataRequest("gpu", (device,))
    return dra_metadata.DeviceMetadata("metadata.resource.k8s.io/v1beta1", meta, None, (request,))


def test_a_frozen_dataclass_can_extend_a_model() -> None:
    @dataclasses.dataclass(frozen=True)
    class Labelled(dra_metadata.Device):
        label: str = ""

    labelled = Labelled(driver="gpu.example.com", label="x")
    assert (labelled.driver, labelled.label) == ("gpu.example.com", "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        labelled.label = "y"  # type: ignore[misc]


@pytest.mark.parametrize(
    "body",
    [
        {},  # no __init__ of its own
        {"__init__": lambda *_: None, "__setattr__": lambda *_: None},
        {"__init__": lambda *_: None, "__delattr__": lambda *_: None},
    ],
    ids=["no __init__", "own __setattr__", "own __delattr__"],
)
def test_a_class_that_cannot_be_frozen_is_refused(body: dict[str, Any]) -> None:
    cls = type("Model", (), {"__annotations__": {"name": "str"}, "name": "", **body})
    with pytest.raises(TypeError):
        frozen_model(cls)


@given(st.sampled_from(MODELS))
def test_every_method_reports_its_class(model: type) -> None:
    for name in ("__eq__", "__hash__", "__setattr__", "__delattr__", "__getstate__"):
        method = getattr(model, name)
        if getattr(method, "__module__", None) == "dra_metadata._model._frozen":
            assert method.__qualname__ == f"{model.__qualname__}.{name}"
