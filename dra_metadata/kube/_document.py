"""The JSON documents of ``dra-metadata status`` and ``dra-metadata health``.

Plain dicts and lists that the standard library's json module writes as they are; every key
is always present (null when unset), names are the API's (camelCase). ClaimStatus.to_document
and DeviceHealth.to_document call these.
"""

from __future__ import annotations

import copy
from datetime import datetime, timezone

from dra_metadata._model._export import network_document

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:  # the models import this module (to_document), never the reverse
    from typing import Any

    from dra_metadata.kube._models import (
        AllocatedDevice,
        ClaimStatus,
        DeviceCondition,
        DeviceHealth,
    )


def _time(value: datetime | None) -> str | None:
    """RFC 3339 in UTC, as the API writes times (``2026-11-30T13:29:34Z``)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _condition(condition: DeviceCondition) -> dict[str, Any]:
    return {
        "type": condition.type,
        "status": condition.status,
        "reason": condition.reason,
        "message": condition.message,
        "lastTransitionTime": _time(condition.last_transition_time),
        "observedGeneration": condition.observed_generation,
    }


def _device(device: AllocatedDevice) -> dict[str, Any]:
    return {
        "request": device.request,
        "driver": device.driver,
        "pool": device.pool,
        "name": device.name,
        "shareID": device.share_id,
        "networkData": network_document(device.network_data),
        "conditions": [_condition(condition) for condition in device.conditions],
        "data": None if device.data is None else copy.deepcopy(dict(device.data)),
    }


def claim_status_document(status: ClaimStatus) -> dict[str, Any]:
    """The document of ``dra-metadata status -o json`` (docs/reference/cli.md)."""
    return {
        "name": status.name,
        "namespace": status.namespace,
        "uid": status.uid,
        "resourceVersion": status.resource_version,
        "podClaimName": status.pod_claim_name,
        "allocated": status.allocated,
        "requests": list(status.requests),
        "devices": [_device(device) for device in status.devices],
    }


def device_health_document(health: DeviceHealth) -> dict[str, Any]:
    """One entry of the list ``dra-metadata health -o json`` prints (docs/reference/cli.md)."""
    return {
        "container": health.container,
        "podClaimName": health.pod_claim_name,
        "request": health.request,
        "driver": health.driver,
        "pool": health.pool,
        "device": health.device,
        "health": health.health,
        "message": health.message,
        "resourceName": health.resource_name,
        "resourceID": health.resource_id,
        "claimName": health.claim_name,
        "unresolved": health.unresolved,
    }
