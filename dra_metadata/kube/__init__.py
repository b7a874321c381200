"""Device status and health, and resource pool status, from the Kubernetes API.

Needs the optional dependencies: ``pip install 'dra-metadata[kube]'`` (lightkube). They are
imported on first use: importing this package costs no more than the models.

>>> from dra_metadata import kube
>>> status = kube.read_claim_status("rdma-nics")  # doctest: +SKIP
>>> [device.network_data for device in status.devices]  # doctest: +SKIP
>>> kube.read_pool_status("gpu.example.com").pools  # doctest: +SKIP
>>> for snapshot in kube.watch_device_health(timeout=60):  # doctest: +SKIP
...     print([(device.device, device.health) for device in snapshot])
"""

from dra_metadata._model._errors import KubeAPIError
from dra_metadata.kube._health_watch import awatch_device_health, watch_device_health
from dra_metadata.kube._identity import (
    NAMESPACE_ENVIRONMENT_VARIABLE,
    POD_NAME_ENVIRONMENT_VARIABLE,
)
from dra_metadata.kube._models import (
    AllocatedDevice,
    ClaimStatus,
    DeviceCondition,
    DeviceHealth,
    Health,
    UnresolvedDeviceWarning,
)
from dra_metadata.kube._pool_models import (
    PartitionTypeStatus,
    PoolStatus,
    PoolStatusResult,
    ShareableCapacity,
    ShareableSummary,
)
from dra_metadata.kube._pools import aread_pool_status, read_pool_status
from dra_metadata.kube._read import (
    read_claim_status,
    read_device_health,
    read_template_claim_status,
)
from dra_metadata.kube._watch import awatch_claim_status, watch_claim_status

__all__ = [
    "NAMESPACE_ENVIRONMENT_VARIABLE",
    "POD_NAME_ENVIRONMENT_VARIABLE",
    "AllocatedDevice",
    "ClaimStatus",
    "DeviceCondition",
    "DeviceHealth",
    "Health",
    "KubeAPIError",
    "PartitionTypeStatus",
    "PoolStatus",
    "PoolStatusResult",
    "ShareableCapacity",
    "ShareableSummary",
    "UnresolvedDeviceWarning",
    "aread_pool_status",
    "awatch_claim_status",
    "awatch_device_health",
    "read_claim_status",
    "read_device_health",
    "read_pool_status",
    "read_template_claim_status",
    "watch_claim_status",
    "watch_device_health",
]

for _public in (
    AllocatedDevice,
    ClaimStatus,
    DeviceCondition,
    DeviceHealth,
    PartitionTypeStatus,
    PoolStatus,
    PoolStatusResult,
    ShareableCapacity,
    ShareableSummary,
    UnresolvedDeviceWarning,
):
    _public.__module__ = "dra_metadata.kube"
del _public
