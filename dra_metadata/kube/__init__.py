"""Device status and health from the Kubernetes API, for drivers that write no metadata file.

Needs the optional dependencies: ``pip install 'dra-metadata[kube]'`` (lightkube). They are
imported on first use: importing this package costs no more than the models.

>>> from dra_metadata import kube
>>> status = kube.read_claim_status("rdma-nics")  # doctest: +SKIP
>>> [device.network_data for device in status.devices]  # doctest: +SKIP
"""

from dra_metadata._model._errors import KubeAPIError
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
)
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
    "awatch_claim_status",
    "read_claim_status",
    "read_device_health",
    "read_template_claim_status",
    "watch_claim_status",
]

for _public in (AllocatedDevice, ClaimStatus, DeviceCondition, DeviceHealth):
    _public.__module__ = "dra_metadata.kube"
del _public
