"""A ResourcePoolStatusRequest (decoded JSON) -> PoolStatusResult; nothing here does I/O.

Shapes are checked as far as reading needs: a value of an unexpected type raises KubeAPIError
naming the request and the field. Fields the models do not know are kept in ``extra``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra_metadata.kube._mapping import _condition, _Fields
from dra_metadata.kube._models import DeviceCondition
from dra_metadata.kube._pool_models import (
    PartitionTypeStatus,
    PoolStatus,
    PoolStatusResult,
    ShareableCapacity,
    ShareableSummary,
)

_POOL_KEYS = frozenset(
    {
        "driver",
        "poolName",
        "generation",
        "nodeName",
        "resourceSliceCount",
        "totalDevices",
        "allocatedDevices",
        "availableDevices",
        "unavailableDevices",
        "validationError",
        "partitionSummary",
        "shareableSummary",
    }
)
_PARTITION_KEYS = frozenset({"attribute", "type", "total", "allocatable"})
_SHAREABLE_KEYS = frozenset({"fullyAvailableDevices", "partiallyAvailableDevices", "capacity"})
_CAPACITY_KEYS = frozenset({"name", "total", "consumed", "available"})
COMPLETE = "Complete"
FAILED = "Failed"


def _integer(fields: _Fields, value: object, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise fields.fail(path, "an integer", value)
    return value


def _required_integer(fields: _Fields, value: object, path: str) -> int:
    number = _integer(fields, value, path)
    return 0 if number is None else number


def _extra(entry: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key not in known}


def _quantity(fields: _Fields, value: object, path: str) -> str:
    """A resource.Quantity: the API writes a string; a bare number is read as its text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return fields.text(value, path)


def _partition(fields: _Fields, raw: object, path: str) -> PartitionTypeStatus:
    entry = fields.obj(raw, path)
    return PartitionTypeStatus(
        attribute=fields.text(entry.get("attribute"), f"{path}.attribute"),
        type=fields.text(entry.get("type"), f"{path}.type"),
        total=_required_integer(fields, entry.get("total"), f"{path}.total"),
        allocatable=_required_integer(fields, entry.get("allocatable"), f"{path}.allocatable"),
        extra=_extra(entry, _PARTITION_KEYS),
    )


def _shareable(fields: _Fields, raw: object, path: str) -> ShareableSummary | None:
    if raw is None:
        return None
    summary = fields.obj(raw, path)
    capacity = []
    for index, item in enumerate(fields.array(summary.get("capacity"), f"{path}.capacity")):
        item_path = f"{path}.capacity[{index}]"
        entry = fields.obj(item, item_path)
        capacity.append(
            ShareableCapacity(
                name=fields.text(entry.get("name"), f"{item_path}.name"),
                total=_quantity(fields, entry.get("total"), f"{item_path}.total"),
                consumed=_quantity(fields, entry.get("consumed"), f"{item_path}.consumed"),
                available=_quantity(fields, entry.get("available"), f"{item_path}.available"),
                extra=_extra(entry, _CAPACITY_KEYS),
            )
        )
    return ShareableSummary(
        fully_available_devices=_required_integer(
            fields, summary.get("fullyAvailableDevices"), f"{path}.fullyAvailableDevices"
        ),
        partially_available_devices=_required_integer(
            fields, summary.get("partiallyAvailableDevices"), f"{path}.partiallyAvailableDevices"
        ),
        capacity=tuple(capacity),
        extra=_extra(summary, _SHAREABLE_KEYS),
    )


def pool_status_from_entry(fields: _Fields, raw: object, path: str) -> PoolStatus:
    """One entry of ``status.pools``."""
    entry = fields.obj(raw, path)
    partitions = entry.get("partitionSummary")
    return PoolStatus(
        driver=fields.text(entry.get("driver"), f"{path}.driver"),
        pool_name=fields.text(entry.get("poolName"), f"{path}.poolName"),
        generation=_required_integer(fields, entry.get("generation"), f"{path}.generation"),
        node_name=fields.optional_text(entry.get("nodeName"), f"{path}.nodeName"),
        resource_slice_count=_integer(
            fields, entry.get("resourceSliceCount"), f"{path}.resourceSliceCount"
        ),
        total_devices=_integer(fields, entry.get("totalDevices"), f"{path}.totalDevices"),
        allocated_devices=_integer(
            fields, entry.get("allocatedDevices"), f"{path}.allocatedDevices"
        ),
        available_devices=_integer(
            fields, entry.get("availableDevices"), f"{path}.availableDevices"
        ),
        unavailable_devices=_integer(
            fields, entry.get("unavailableDevices"), f"{path}.unavailableDevices"
        ),
        validation_error=fields.optional_text(
            entry.get("validationError"), f"{path}.validationError"
        ),
        partition_summary=None
        if partitions is None
        else tuple(
            _partition(fields, item, f"{path}.partitionSummary[{index}]")
            for index, item in enumerate(fields.array(partitions, f"{path}.partitionSummary"))
        ),
        shareable_summary=_shareable(
            fields, entry.get("shareableSummary"), f"{path}.shareableSummary"
        ),
        extra=_extra(entry, _POOL_KEYS),
    )


def request_name(obj: Mapping[str, Any]) -> str:
    fields = _Fields("a ResourcePoolStatusRequest")
    metadata = fields.obj(obj.get("metadata"), "metadata")
    return fields.text(metadata.get("name"), "metadata.name")


def answered(obj: Mapping[str, Any]) -> bool:
    """Whether the controller has written the request's status (it writes it once)."""
    return obj.get("status") is not None


def conditions_of(obj: Mapping[str, Any]) -> tuple[DeviceCondition, ...]:
    name = request_name(obj)
    fields = _Fields(f'resourcepoolstatusrequest "{name}"')
    status = fields.obj(obj.get("status"), "status")
    return tuple(
        _condition(fields, raw, f"status.conditions[{index}]")
        for index, raw in enumerate(fields.array(status.get("conditions"), "status.conditions"))
    )


def pool_status_result_from_object(obj: object) -> PoolStatusResult:
    """A ResourcePoolStatusRequest with a status (``resource.k8s.io/v1alpha3``) ->
    PoolStatusResult. ``status.pools`` left out (nothing matched) reads as no pools."""
    fields = _Fields("a ResourcePoolStatusRequest")
    request = fields.obj(obj, "object")
    name = request_name(request)
    fields = _Fields(f'resourcepoolstatusrequest "{name}"')
    status = fields.obj(request.get("status"), "status")
    pools = tuple(
        pool_status_from_entry(fields, raw, f"status.pools[{index}]")
        for index, raw in enumerate(fields.array(status.get("pools"), "status.pools"))
    )
    pool_count = _required_integer(fields, status.get("poolCount"), "status.poolCount")
    conditions = conditions_of(request)
    complete = next(
        (c for c in conditions if c.type in {COMPLETE, FAILED} and c.status == "True"), None
    )
    return PoolStatusResult(
        pools=pools,
        pool_count=pool_count,
        truncated=len(pools) < pool_count,
        request_name=name,
        completed_at=None if complete is None else complete.last_transition_time,
        conditions=conditions,
    )
