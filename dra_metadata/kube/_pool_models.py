"""What a ResourcePoolStatusRequest answers: device counts per resource pool of a driver.

Plain frozen dataclasses (nothing here knows about HTTP). Field names follow the API
(``resource.k8s.io/v1alpha3``) in snake_case. Fields a newer server sends that these models do
not know are kept, as the server sent them, in ``extra``: never an error, never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dra_metadata.kube._models import DeviceCondition, published_in_kube


@dataclass(frozen=True, slots=True)
class PartitionTypeStatus:
    """How many devices of one partition type a pool has and could still allocate.

    One entry of ``partitionSummary`` (Kubernetes 1.37; 1.36 sends none): the devices of a
    pool grouped by the value of a device attribute (`attribute`, e.g.
    ``gpu.example.com/profile``) whose value is the partition type (`type`, e.g. ``"1g.10gb"``).
    `allocatable` counts the devices of that type that could still be allocated given what the
    pool's shared counters have left.
    """

    attribute: str
    type: str
    total: int
    allocatable: int
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Fields this version does not know, as the server sent them (compared, not hashed)."""


@dataclass(frozen=True, slots=True)
class ShareableCapacity:
    """Aggregate amounts of one capacity of the shareable devices of a pool.

    Quantities as the API writes them (``"40Gi"``, ``"1500m"``): `total` over the pool's
    devices that allow multiple allocations, `consumed` by current allocations, `available`
    = total - consumed (never negative).
    """

    name: str
    total: str
    consumed: str
    available: str
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Fields this version does not know, as the server sent them (compared, not hashed)."""


@dataclass(frozen=True, slots=True)
class ShareableSummary:
    """``shareableSummary`` (Kubernetes 1.37; 1.36 sends none): a pool with devices that allow
    multiple allocations (``allowMultipleAllocations``).

    `fully_available_devices` have no capacity consumed, `partially_available_devices` some
    but not all; `capacity` has one entry per shareable capacity name.
    """

    fully_available_devices: int
    partially_available_devices: int
    capacity: Sequence[ShareableCapacity] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Fields this version does not know, as the server sent them (compared, not hashed)."""


@dataclass(frozen=True, slots=True)
class PoolStatus:
    """The device counts of one resource pool (one entry of ``status.pools``).

    A pool is (`driver`, `pool_name`); only the ResourceSlices of its newest `generation`
    count. `allocated_devices` counts allocation results: two shares of one device that allows
    multiple allocations count twice, so `available_devices` (total - allocated - unavailable,
    at least 0) can reach 0 before every device is taken. `node_name` is set when all of the
    pool's slices name one node (None for ``allNodes`` or node-selector pools). The counts are
    None when the server left them out, which it may do together with `validation_error`
    (a pool whose slices are not all published yet). `partition_summary` and
    `shareable_summary` are None where the server sends none (Kubernetes 1.36 never does).
    """

    driver: str
    pool_name: str
    generation: int
    node_name: str | None = None
    resource_slice_count: int | None = None
    total_devices: int | None = None
    allocated_devices: int | None = None
    available_devices: int | None = None
    unavailable_devices: int | None = None
    validation_error: str | None = None
    partition_summary: Sequence[PartitionTypeStatus] | None = None
    shareable_summary: ShareableSummary | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Fields this version does not know, as the server sent them (compared, not hashed)."""


@dataclass(frozen=True, slots=True)
class PoolStatusResult:
    """What kube-controller-manager answered to one ResourcePoolStatusRequest.

    `pools` are the pools that matched, sorted by driver then pool name, at most the request's
    limit; `pool_count` is how many matched before that limit, so `truncated` (fewer pools
    returned than matched) says a larger ``limit`` would show more. `request_name` is the
    request's name (deleted after reading unless ``keep=True``); `completed_at` the time of its
    ``Complete`` condition; `conditions` every condition as the server wrote it. The numbers
    are a snapshot of the controller's view at `completed_at`: read again for newer ones.
    """

    pools: tuple[PoolStatus, ...]
    pool_count: int
    truncated: bool
    request_name: str
    completed_at: datetime | None
    conditions: tuple[DeviceCondition, ...] = ()

    def to_document(self) -> dict[str, Any]:
        """The document ``dra-metadata pools -o json`` prints: plain dicts and lists for the
        standard library's json, every key present, names as the API spells them."""
        from dra_metadata.kube._pool_document import pool_status_result_document  # noqa: PLC0415

        return pool_status_result_document(self)


published_in_kube(
    PartitionTypeStatus, PoolStatus, PoolStatusResult, ShareableCapacity, ShareableSummary
)
