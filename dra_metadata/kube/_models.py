"""What the Kubernetes API says about a claim's devices and a pod's device health.

Frozen, slotted dataclasses (made by ``frozen_model``, which compiles nothing at import, as the
file side's models: a health probe imports them every few seconds): nothing here knows about
HTTP or lightkube. `ClaimStatus.to_metadata` is the bridge to the model the rest of the library
works with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field

from dra_metadata._model._errors import MetadataNotFoundError, shown_names
from dra_metadata._model._frozen import frozen_model
from dra_metadata._model._metadata import DeviceMetadata, DeviceMetadataRequest, ObjectMeta
from dra_metadata._model._models import Device, NetworkDeviceData

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from dra_metadata.kube._health_values import Health

_store = object.__setattr__


class UnresolvedDeviceWarning(UserWarning):
    """Device health was read, but which devices it names could not be (no access to a claim).

    Issued once per read or watch by read_device_health, watch_device_health and
    awatch_device_health when a ResourceClaim the pod's health entries point to cannot be read:
    the message names the claim and what to grant (``get`` on ``resourceclaims``). The health
    itself is returned all the same, its `DeviceHealth.unresolved` saying the same thing.
    ``warnings.simplefilter("ignore", UnresolvedDeviceWarning)`` silences it.
    """


@frozen_model
class DeviceCondition:
    """One entry of ``status.devices[].conditions`` (a Kubernetes ``metav1.Condition``).

    Drivers report a device's state this way (DraNet: ``Ready``, reason ``NetworkDeviceReady``);
    ``AllocatedDevice.condition(type)`` finds one by its type.
    """

    type: str
    """The condition's type, e.g. ``Ready``."""
    status: str
    """``"True"``, ``"False"`` or ``"Unknown"``."""
    reason: str = ""
    message: str = ""
    last_transition_time: datetime | None = None
    observed_generation: int | None = None

    def __init__(
        self,
        type: str,  # noqa: A002 - the field's name
        status: str,
        reason: str = "",
        message: str = "",
        last_transition_time: datetime | None = None,
        observed_generation: int | None = None,
    ) -> None:
        _store(self, "type", type)
        _store(self, "status", status)
        _store(self, "reason", reason)
        _store(self, "message", message)
        _store(self, "last_transition_time", last_transition_time)
        _store(self, "observed_generation", observed_generation)


@frozen_model
class AllocatedDevice:
    """One allocated device of a claim and what its driver reported about it.

    `request` is the allocation's request name, with its subrequest (``gpu/high-memory``)
    when the request was a prioritized list. `network_data`, `conditions` and `data` come from
    the driver's ``status.devices`` entry for this device (matched by driver, pool, device and
    share ID); they are None / empty until the driver writes one.
    """

    request: str
    driver: str
    pool: str
    name: str
    share_id: str | None = None
    network_data: NetworkDeviceData | None = None
    conditions: Sequence[DeviceCondition] = ()
    data: Mapping[str, Any] | None = field(default=None, hash=False)
    """The driver's arbitrary JSON object (``status.devices[].data``), or None. It takes part
    in comparisons but not in the hash (a dict has none)."""

    def __init__(
        self,
        request: str,
        driver: str,
        pool: str,
        name: str,
        share_id: str | None = None,
        network_data: NetworkDeviceData | None = None,
        conditions: Sequence[DeviceCondition] = (),
        data: Mapping[str, Any] | None = None,
    ) -> None:
        _store(self, "request", request)
        _store(self, "driver", driver)
        _store(self, "pool", pool)
        _store(self, "name", name)
        _store(self, "share_id", share_id)
        _store(self, "network_data", network_data)
        _store(self, "conditions", conditions)
        _store(self, "data", data)

    def condition(self, condition_type: str) -> DeviceCondition | None:
        """The condition of that type (e.g. ``"Ready"``), or None."""
        for condition in self.conditions:
            if condition.type == condition_type:
                return condition
        return None


@frozen_model
class ClaimStatus:
    """A ResourceClaim's allocation and device status, as the API server returned it.

    `devices` follows the allocation results (one per allocated device, in their order); it is
    empty while the claim is not allocated. `requests` lists every request name a device may
    carry: the claim's requests and, for prioritized lists, ``<request>/<subrequest>``.
    `pod_claim_name` is set for a claim made from a template (the pod's name for the claim).
    Two statuses compare equal when only `resource_version` differs.
    """

    name: str
    namespace: str
    uid: str
    resource_version: str = field(compare=False)
    pod_claim_name: str | None = None
    devices: Sequence[AllocatedDevice] = ()
    allocated: bool = False
    requests: Sequence[str] = ()

    def __init__(
        self,
        name: str,
        namespace: str,
        uid: str,
        resource_version: str,
        pod_claim_name: str | None = None,
        devices: Sequence[AllocatedDevice] = (),
        allocated: bool = False,
        requests: Sequence[str] = (),
    ) -> None:
        _store(self, "name", name)
        _store(self, "namespace", namespace)
        _store(self, "uid", uid)
        _store(self, "resource_version", resource_version)
        _store(self, "pod_claim_name", pod_claim_name)
        _store(self, "devices", devices)
        _store(self, "allocated", allocated)
        _store(self, "requests", requests)

    def device_names(self) -> tuple[str, ...]:
        """The names of the allocated devices, in allocation order."""
        return tuple(device.name for device in self.devices)

    def to_metadata(
        self, request_name: str | None = None, *, driver: str | None = None
    ) -> DeviceMetadata:
        """This status as the DeviceMetadata that reading a metadata file gives.

        One DeviceMetadataRequest per allocated request name, devices in allocation order with
        their network data (attributes are not published through the API: they stay empty).
        ``request_name`` keeps one request: a top-level name also keeps its subrequests, as
        the request directory of the file protocol does. ``driver`` keeps that driver's devices.
        Raises MetadataNotFoundError for a request name the claim does not have.
        """
        if request_name is not None:
            self._check_request(request_name)
        grouped: dict[str, list[Device]] = {}
        for device in self.devices:
            if request_name is not None and request_name not in {
                device.request,
                device.request.partition("/")[0],
            }:
                continue
            if driver is not None and device.driver != driver:
                continue
            grouped.setdefault(device.request, []).append(
                Device(
                    driver=device.driver,
                    pool=device.pool,
                    name=device.name,
                    network_data=device.network_data,
                )
            )
        return DeviceMetadata(
            metadata=ObjectMeta(
                name=self.name,
                namespace=self.namespace,
                uid=self.uid,
                resource_version=self.resource_version,
            ),
            pod_claim_name=self.pod_claim_name,
            requests=tuple(
                DeviceMetadataRequest(name=name, devices=devices)
                for name, devices in grouped.items()
            ),
        )

    def to_document(self) -> dict[str, Any]:
        """The document ``dra-metadata status -o json`` prints: plain dicts and lists for the
        standard library's json, every key present, names as the API spells them."""
        from dra_metadata.kube._document import claim_status_document  # noqa: PLC0415

        return claim_status_document(self)

    def _check_request(self, request_name: str) -> None:
        if request_name in self.requests:
            return
        known = shown_names(list(self.requests)) or "none"
        raise MetadataNotFoundError(
            f'resourceclaim "{self.name}" in namespace "{self.namespace}" has no request '
            f'"{request_name}"; its requests: {known}',
            path=None,
        )


@frozen_model
class DeviceHealth:
    """The health of one device allocated to a container, as the kubelet reports it.

    From ``status.containerStatuses[].allocatedResourcesStatus`` (and init containers) of the
    Pod. `pod_claim_name` and `request` come from the entry's name (``claim:<pod claim>`` or
    ``claim:<pod claim>/<request>``): `request` is the top-level request the container asked
    for, never a subrequest, and None when the container uses the whole claim. Entries of
    device plugins (`resource_name` such as ``nvidia.com/gpu``) have no pod claim name.

    Which device it is: `driver`, `pool` and `device` are split from `resource_id` when the
    kubelet wrote ``<driver>/<pool>/<device>`` (a pool name may hold ``/``). When it wrote the
    driver's **CDI device ID** instead (``test-driver.cdi.k8s.io/test=claim-<uid>-<request>``,
    as the kubelet does for every driver that returns CDI IDs), they are resolved through the
    pod's claims: `claim_name` is the ResourceClaim (``spec.resourceClaims`` or, for a
    template claim, ``status.resourceClaimStatuses``), and the device is the allocation result
    of that claim (and request) that the ID names: the only one there is, or the one whose
    request the ID ends with after the claim's UID. Where that is not unambiguous, or the claim
    cannot be read (reading it needs ``get`` on ``resourceclaims``), `driver`, `pool` and
    `device` stay None and `unresolved` says why, in a sentence. `unresolved` is None when the
    device is known and for device plugins' entries.

    Example:
        >>> from dra_metadata.kube import DeviceHealth
        >>> health = DeviceHealth("c", "direct", None, "gpu.example.com", "node-7", "gpu-3",
        ...                       "Unhealthy", "XID 79")
        >>> health.health, health.unresolved
        ('Unhealthy', None)
    """

    container: str
    pod_claim_name: str | None
    request: str | None
    driver: str | None
    pool: str | None
    device: str | None
    health: Health
    message: str | None = None
    resource_name: str = ""
    resource_id: str = ""
    claim_name: str | None = None
    """The ResourceClaim's name (None for device plugins, and while a template claim has none)."""
    unresolved: str | None = None
    """Why `driver`, `pool` and `device` are None for a DRA device; None when they are known."""

    def __init__(  # noqa: PLR0913, PLR0917 - one argument per field, as the dataclass's
        self,
        container: str,
        pod_claim_name: str | None,
        request: str | None,
        driver: str | None,
        pool: str | None,
        device: str | None,
        health: Health,
        message: str | None = None,
        resource_name: str = "",
        resource_id: str = "",
        claim_name: str | None = None,
        unresolved: str | None = None,
    ) -> None:
        _store(self, "container", container)
        _store(self, "pod_claim_name", pod_claim_name)
        _store(self, "request", request)
        _store(self, "driver", driver)
        _store(self, "pool", pool)
        _store(self, "device", device)
        _store(self, "health", health)
        _store(self, "message", message)
        _store(self, "resource_name", resource_name)
        _store(self, "resource_id", resource_id)
        _store(self, "claim_name", claim_name)
        _store(self, "unresolved", unresolved)

    def to_document(self) -> dict[str, Any]:
        """This entry as ``dra-metadata health -o json`` prints it (plain dicts for json)."""
        from dra_metadata.kube._document import device_health_document  # noqa: PLC0415

        return device_health_document(self)


def published_in_kube(*classes: type) -> None:
    """Each class as ``dra_metadata.kube``'s, where users import it from (and pickle finds it)."""
    for public in classes:
        public.__module__ = "dra_metadata.kube"


published_in_kube(
    AllocatedDevice, ClaimStatus, DeviceCondition, DeviceHealth, UnresolvedDeviceWarning
)
