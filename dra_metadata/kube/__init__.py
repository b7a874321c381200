"""Device status and health, and resource pool status, from the Kubernetes API.

Needs the optional dependencies: ``pip install 'dra-metadata[kube]'`` (lightkube). They are
imported on first use, and so is each part of this package: importing it costs nothing
beyond the errors (a one-shot read loads only what it uses).

>>> from dra_metadata import kube
>>> status = kube.read_claim_status("rdma-nics")  # doctest: +SKIP
>>> [device.network_data for device in status.devices]  # doctest: +SKIP
>>> kube.read_pool_status("gpu.example.com").pools  # doctest: +SKIP
>>> for snapshot in kube.watch_device_health(timeout=60):  # doctest: +SKIP
...     print([(device.device, device.health) for device in snapshot])
"""

from dra_metadata._model._errors import KubeAPIError
from dra_metadata.kube._identity import (
    NAMESPACE_ENVIRONMENT_VARIABLE,
    POD_NAME_ENVIRONMENT_VARIABLE,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from dra_metadata.kube._health_read import read_device_health
    from dra_metadata.kube._health_values import Health
    from dra_metadata.kube._health_watch import awatch_device_health, watch_device_health
    from dra_metadata.kube._models import (
        AllocatedDevice,
        ClaimStatus,
        DeviceCondition,
        DeviceHealth,
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
        read_template_claim_status,
    )
    from dra_metadata.kube._watch import awatch_claim_status, watch_claim_status

_LAZY: dict[str, str] = {
    "AllocatedDevice": "_models",
    "ClaimStatus": "_models",
    "DeviceCondition": "_models",
    "DeviceHealth": "_models",
    "Health": "_health_values",
    "PartitionTypeStatus": "_pool_models",
    "PoolStatus": "_pool_models",
    "PoolStatusResult": "_pool_models",
    "ShareableCapacity": "_pool_models",
    "ShareableSummary": "_pool_models",
    "UnresolvedDeviceWarning": "_models",
    "aread_pool_status": "_pools",
    "awatch_claim_status": "_watch",
    "awatch_device_health": "_health_watch",
    "read_claim_status": "_read",
    "read_device_health": "_health_read",
    "read_pool_status": "_pools",
    "read_template_claim_status": "_read",
    "watch_claim_status": "_watch",
    "watch_device_health": "_health_watch",
}
"""Each public name not imported above, and the module it is defined in (loaded on first use)."""

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


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:  # checkers see the imports above, so a misspelt name stays an error

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'dra_metadata.kube' has no attribute {name!r}")
        from importlib import import_module  # noqa: PLC0415

        value = getattr(import_module(f"dra_metadata.kube.{module}"), name)
        globals()[name] = value
        return value


del TYPE_CHECKING
