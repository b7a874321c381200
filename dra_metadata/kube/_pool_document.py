"""The JSON document of ``dra-metadata pools -o json`` (PoolStatusResult.to_document).

Plain dicts and lists that the standard library's json module writes as they are; every key
is always present (null when unset); names are the API's (camelCase). Fields the models do not
know (``extra``) are written back beside the known ones, as the server sent them.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from dra_metadata.kube._document import _condition, _time

if TYPE_CHECKING:  # the models import this module on first use: types only, no circle
    from dra_metadata.kube._pool_models import (
        PartitionTypeStatus,
        PoolStatus,
        PoolStatusResult,
        ShareableCapacity,
        ShareableSummary,
    )


def _with_extra(known: dict[str, Any], extra: Any) -> dict[str, Any]:
    return {**copy.deepcopy(dict(extra)), **known}


def _partition(entry: PartitionTypeStatus) -> dict[str, Any]:
    known = {
        "attribute": entry.attribute,
        "type": entry.type,
        "total": entry.total,
        "allocatable": entry.allocatable,
    }
    return _with_extra(known, entry.extra)


def _capacity(entry: ShareableCapacity) -> dict[str, Any]:
    known = {
        "name": entry.name,
        "total": entry.total,
        "consumed": entry.consumed,
        "available": entry.available,
    }
    return _with_extra(known, entry.extra)


def _shareable(summary: ShareableSummary | None) -> dict[str, Any] | None:
    if summary is None:
        return None
    known = {
        "fullyAvailableDevices": summary.fully_available_devices,
        "partiallyAvailableDevices": summary.partially_available_devices,
        "capacity": [_capacity(entry) for entry in summary.capacity],
    }
    return _with_extra(known, summary.extra)


def pool_status_document(pool: PoolStatus) -> dict[str, Any]:
    """One entry of ``pools`` in the document."""
    known = {
        "driver": pool.driver,
        "poolName": pool.pool_name,
        "generation": pool.generation,
        "nodeName": pool.node_name,
        "resourceSliceCount": pool.resource_slice_count,
        "totalDevices": pool.total_devices,
        "allocatedDevices": pool.allocated_devices,
        "availableDevices": pool.available_devices,
        "unavailableDevices": pool.unavailable_devices,
        "validationError": pool.validation_error,
        "partitionSummary": None
        if pool.partition_summary is None
        else [_partition(entry) for entry in pool.partition_summary],
        "shareableSummary": _shareable(pool.shareable_summary),
    }
    return _with_extra(known, pool.extra)


def pool_status_result_document(result: PoolStatusResult) -> dict[str, Any]:
    """The document of ``dra-metadata pools -o json`` (README)."""
    return {
        "requestName": result.request_name,
        "completedAt": _time(result.completed_at),
        "poolCount": result.pool_count,
        "truncated": result.truncated,
        "pools": [pool_status_document(pool) for pool in result.pools],
        "conditions": [_condition(condition) for condition in result.conditions],
    }
