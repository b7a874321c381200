"""API objects (decoded JSON) -> ClaimStatus, DeviceHealth; nothing here does I/O.

The server validates what it stores, so shapes are checked only as far as reading needs: a
value of an unexpected type raises KubeAPIError naming the object and the field instead of
surfacing as an AttributeError or a silently wrong answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from dra_metadata._model._errors import KubeAPIError, MetadataNotFoundError, shown_names
from dra_metadata._model._models import NetworkDeviceData
from dra_metadata.kube._models import (
    AllocatedDevice,
    ClaimStatus,
    DeviceCondition,
    DeviceHealth,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from typing import Any

    _DeviceKey = tuple[str, str, str, str | None]

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
HEALTH_VALUES = ("Healthy", "Unhealthy", "Unknown")
_CLAIM_PREFIX = "claim:"


class _Fields:
    """Typed access to one decoded object, with errors that say which object and field."""

    def __init__(self, what: str) -> None:
        self.what = what

    def fail(self, path: str, expected: str, value: object) -> KubeAPIError:
        return KubeAPIError(
            f"the API server returned {self.what} whose {path} is not {expected} "
            f"({type(value).__name__})"
        )

    def obj(self, value: object, path: str) -> Mapping[str, Any]:
        """A JSON object; null and absent read as an empty one."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(path, "an object", value)
        return value

    def array(self, value: object, path: str) -> list[Any]:
        """A JSON array; null and absent read as an empty one."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, "an array", value)
        return value

    def text(self, value: object, path: str, *, default: str = "") -> str:
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(path, "a string", value)
        return value

    def optional_text(self, value: object, path: str) -> str | None:
        return None if value is None else self.text(value, path)

    def time(self, value: object, path: str) -> datetime | None:
        text = self.optional_text(value, path)
        if not text:
            return None
        try:  # RFC 3339; fromisoformat takes no "Z" before Python 3.11
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise self.fail(path, "an RFC 3339 time", text) from None


def _describe(obj: Mapping[str, Any], kind: str) -> str:
    metadata = obj.get("metadata")
    if isinstance(metadata, Mapping):
        name, namespace = metadata.get("name"), metadata.get("namespace")
        return f'{kind} "{name}" in namespace "{namespace}"'
    return f"a {kind}"


def claim_status_from_object(obj: object) -> ClaimStatus:
    """A ResourceClaim (``resource.k8s.io/v1``, decoded JSON) -> ClaimStatus."""
    fields = _Fields("a ResourceClaim")
    claim = fields.obj(obj, "object")
    fields = _Fields(_describe(claim, "resourceclaim"))
    metadata = fields.obj(claim.get("metadata"), "metadata")
    annotations = fields.obj(metadata.get("annotations"), "metadata.annotations")
    status = fields.obj(claim.get("status"), "status")
    allocation = status.get("allocation")
    results = fields.array(
        fields.obj(fields.obj(allocation, "status.allocation").get("devices"), "devices").get(
            "results"
        ),
        "status.allocation.devices.results",
    )
    reported = _device_statuses(fields, status)
    devices = []
    for index, raw in enumerate(results):
        path = f"status.allocation.devices.results[{index}]"
        result = fields.obj(raw, path)
        key = _device_key(fields, result, path)
        entry = reported.get(key)
        devices.append(
            AllocatedDevice(
                request=fields.text(result.get("request"), f"{path}.request"),
                driver=key[0],
                pool=key[1],
                name=key[2],
                share_id=key[3],
                network_data=entry[0] if entry else None,
                conditions=entry[1] if entry else (),
                data=entry[2] if entry else None,
            )
        )
    return ClaimStatus(
        name=fields.text(metadata.get("name"), "metadata.name"),
        namespace=fields.text(metadata.get("namespace"), "metadata.namespace"),
        uid=fields.text(metadata.get("uid"), "metadata.uid"),
        resource_version=fields.text(metadata.get("resourceVersion"), "metadata.resourceVersion"),
        pod_claim_name=fields.optional_text(
            annotations.get(POD_CLAIM_NAME_ANNOTATION),
            f"metadata.annotations[{POD_CLAIM_NAME_ANNOTATION}]",
        ),
        devices=tuple(devices),
        allocated=allocation is not None,
        requests=_request_names(fields, claim),
    )


def _device_key(fields: _Fields, entry: Mapping[str, Any], path: str) -> _DeviceKey:
    """(driver, pool, device, shareID): how the server matches status.devices to results."""
    return (
        fields.text(entry.get("driver"), f"{path}.driver"),
        fields.text(entry.get("pool"), f"{path}.pool"),
        fields.text(entry.get("device"), f"{path}.device"),
        fields.optional_text(entry.get("shareID"), f"{path}.shareID"),
    )


def _request_names(fields: _Fields, claim: Mapping[str, Any]) -> tuple[str, ...]:
    spec = fields.obj(claim.get("spec"), "spec")
    requests = fields.array(
        fields.obj(spec.get("devices"), "spec.devices").get("requests"),
        "spec.devices.requests",
    )
    names: list[str] = []
    for index, raw in enumerate(requests):
        path = f"spec.devices.requests[{index}]"
        request = fields.obj(raw, path)
        name = fields.text(request.get("name"), f"{path}.name")
        names.append(name)
        for sub_index, sub in enumerate(
            fields.array(request.get("firstAvailable"), f"{path}.firstAvailable")
        ):
            sub_path = f"{path}.firstAvailable[{sub_index}]"
            sub_name = fields.text(fields.obj(sub, sub_path).get("name"), f"{sub_path}.name")
            names.append(f"{name}/{sub_name}")
    return tuple(names)


def _device_statuses(
    fields: _Fields, status: Mapping[str, Any]
) -> dict[
    _DeviceKey,
    tuple[NetworkDeviceData | None, tuple[DeviceCondition, ...], Mapping[str, Any] | None],
]:
    reported = {}
    for index, raw in enumerate(fields.array(status.get("devices"), "status.devices")):
        path = f"status.devices[{index}]"
        entry = fields.obj(raw, path)
        key = _device_key(fields, entry, path)
        network = entry.get("networkData")
        data = entry.get("data")
        reported[key] = (
            None if network is None else _network_data(fields, network, f"{path}.networkData"),
            tuple(
                _condition(fields, condition, f"{path}.conditions[{position}]")
                for position, condition in enumerate(
                    fields.array(entry.get("conditions"), f"{path}.conditions")
                )
            ),
            None if data is None else fields.obj(data, f"{path}.data"),
        )
    return reported


def _network_data(fields: _Fields, raw: object, path: str) -> NetworkDeviceData:
    network = fields.obj(raw, path)
    ips = fields.array(network.get("ips"), f"{path}.ips")
    return NetworkDeviceData(
        interface_name=fields.text(network.get("interfaceName"), f"{path}.interfaceName"),
        ips=tuple(fields.text(ip, f"{path}.ips[{index}]") for index, ip in enumerate(ips)),
        hardware_address=fields.text(network.get("hardwareAddress"), f"{path}.hardwareAddress"),
    )


def _condition(fields: _Fields, raw: object, path: str) -> DeviceCondition:
    condition = fields.obj(raw, path)
    generation = condition.get("observedGeneration")
    if generation is not None and (isinstance(generation, bool) or not isinstance(generation, int)):
        raise fields.fail(f"{path}.observedGeneration", "an integer", generation)
    return DeviceCondition(
        type=fields.text(condition.get("type"), f"{path}.type"),
        status=fields.text(condition.get("status"), f"{path}.status"),
        reason=fields.text(condition.get("reason"), f"{path}.reason"),
        message=fields.text(condition.get("message"), f"{path}.message"),
        last_transition_time=fields.time(
            condition.get("lastTransitionTime"), f"{path}.lastTransitionTime"
        ),
        observed_generation=generation,
    )


def generated_claim_name(pod: object, pod_claim_name: str) -> str:
    """The name of the claim the resourceclaim controller made for a pod's template claim.

    Read from ``status.resourceClaimStatuses``: the name ends in random characters, so it
    cannot be derived. Raises MetadataNotFoundError saying what the pod has instead.
    """
    fields = _Fields("a Pod")
    pod_object = fields.obj(pod, "object")
    fields = _Fields(_describe(pod_object, "pod"))
    where = fields.what
    spec = fields.obj(pod_object.get("spec"), "spec")
    claims = [
        fields.obj(raw, f"spec.resourceClaims[{index}]")
        for index, raw in enumerate(fields.array(spec.get("resourceClaims"), "spec.resourceClaims"))
    ]
    entry = next((claim for claim in claims if claim.get("name") == pod_claim_name), None)
    if entry is None:
        known = shown_names([str(claim.get("name")) for claim in claims]) or "none"
        raise MetadataNotFoundError(
            f'{where} has no claim "{pod_claim_name}" in spec.resourceClaims; it has: {known}',
            path=None,
        )
    direct = entry.get("resourceClaimName")
    if direct is not None:
        raise MetadataNotFoundError(
            f'claim "{pod_claim_name}" of {where} is not made from a template: it names the '
            f'ResourceClaim "{direct}" (resourceClaimName); read that claim by its name',
            path=None,
        )
    status = fields.obj(pod_object.get("status"), "status")
    for index, raw in enumerate(
        fields.array(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")
    ):
        path = f"status.resourceClaimStatuses[{index}]"
        claim_status = fields.obj(raw, path)
        if claim_status.get("name") != pod_claim_name:
            continue
        name = fields.optional_text(
            claim_status.get("resourceClaimName"), f"{path}.resourceClaimName"
        )
        if not name:
            raise MetadataNotFoundError(
                f'{where} needs no ResourceClaim for its claim "{pod_claim_name}" '
                "(status.resourceClaimStatuses names none)",
                path=None,
            )
        return name
    raise MetadataNotFoundError(
        f'{where} has no status.resourceClaimStatuses entry for its claim "{pod_claim_name}" '
        "yet: the ResourceClaim has not been made from the template",
        path=None,
    )


def split_resource_id(resource_id: str) -> tuple[str, str, str] | None:
    """``<driver>/<pool>/<device>`` split at the first and last '/' (a pool may hold '/').

    None when it is not of that form: the kubelet reports a CDI device ID
    (``vendor.com/class=name``, one '/') when the driver returned CDI IDs.
    """
    driver, _, rest = resource_id.partition("/")
    pool, separator, device = rest.rpartition("/")
    if not separator or not driver or not pool or not device:
        return None
    return driver, pool, device


def device_health_from_pod(
    pod: object, container_name: str | None = None
) -> tuple[DeviceHealth, ...]:
    """One DeviceHealth per resource of each container's ``allocatedResourcesStatus``.

    Init containers first, then containers, each in the pod's order. With ``container_name``,
    only that container's; MetadataNotFoundError (listing the containers) if it has none.
    """
    fields = _Fields("a Pod")
    pod_object = fields.obj(pod, "object")
    fields = _Fields(_describe(pod_object, "pod"))
    spec = fields.obj(pod_object.get("spec"), "spec")
    status = fields.obj(pod_object.get("status"), "status")
    if container_name is not None:
        declared = [
            fields.text(fields.obj(container, f"spec.{kind}[{index}]").get("name"), "name")
            for kind in ("initContainers", "containers")
            for index, container in enumerate(fields.array(spec.get(kind), f"spec.{kind}"))
        ]
        if container_name not in declared:
            raise MetadataNotFoundError(
                f'{fields.what} has no container "{container_name}"; '
                f"its containers: {shown_names(list(declared)) or 'none'}",
                path=None,
            )
    health: list[DeviceHealth] = []
    for kind in ("initContainerStatuses", "containerStatuses"):
        for index, raw in enumerate(fields.array(status.get(kind), f"status.{kind}")):
            path = f"status.{kind}[{index}]"
            container = fields.obj(raw, path)
            name = fields.text(container.get("name"), f"{path}.name")
            if container_name is not None and name != container_name:
                continue
            health.extend(_container_health(fields, container, name, path))
    return tuple(health)


def _container_health(
    fields: _Fields, container: Mapping[str, Any], name: str, path: str
) -> list[DeviceHealth]:
    health = []
    entries = fields.array(
        container.get("allocatedResourcesStatus"), f"{path}.allocatedResourcesStatus"
    )
    for index, raw in enumerate(entries):
        entry_path = f"{path}.allocatedResourcesStatus[{index}]"
        entry = fields.obj(raw, entry_path)
        resource_name = fields.text(entry.get("name"), f"{entry_path}.name")
        pod_claim_name: str | None = None
        request: str | None = None
        if resource_name.startswith(_CLAIM_PREFIX):
            pod_claim_name, _, request_part = resource_name[len(_CLAIM_PREFIX) :].partition("/")
            request = request_part or None
        for position, resource_raw in enumerate(
            fields.array(entry.get("resources"), f"{entry_path}.resources")
        ):
            resource_path = f"{entry_path}.resources[{position}]"
            resource = fields.obj(resource_raw, resource_path)
            resource_id = fields.text(resource.get("resourceID"), f"{resource_path}.resourceID")
            value = fields.text(resource.get("health"), f"{resource_path}.health")
            if value not in HEALTH_VALUES:
                raise KubeAPIError(
                    f"the API server returned {fields.what} whose {resource_path}.health is "
                    f"{value!r}, not one of {', '.join(HEALTH_VALUES)}"
                )
            split = split_resource_id(resource_id)
            health.append(
                DeviceHealth(
                    container=name,
                    pod_claim_name=pod_claim_name,
                    request=request,
                    driver=split[0] if split else None,
                    pool=split[1] if split else None,
                    device=split[2] if split else None,
                    health=value,  # type: ignore[arg-type] # one of HEALTH_VALUES
                    message=fields.optional_text(
                        resource.get("message"), f"{resource_path}.message"
                    ),
                    resource_name=resource_name,
                    resource_id=resource_id,
                )
            )
    return health


def pod_claim_references(pod: object) -> dict[str, tuple[str | None, str]]:
    """For each of the pod's claims: (the ResourceClaim's name, or None; why there is none).

    A claim named in ``spec.resourceClaims[].resourceClaimName`` is that claim; a template
    claim's name is in ``status.resourceClaimStatuses`` once the resourceclaim controller made
    it. The second item is empty when the name is known.
    """
    fields = _Fields("a Pod")
    pod_object = fields.obj(pod, "object")
    fields = _Fields(_describe(pod_object, "pod"))
    spec = fields.obj(pod_object.get("spec"), "spec")
    status = fields.obj(pod_object.get("status"), "status")
    generated: dict[str, str | None] = {}
    for index, raw in enumerate(
        fields.array(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")
    ):
        path = f"status.resourceClaimStatuses[{index}]"
        entry = fields.obj(raw, path)
        generated[fields.text(entry.get("name"), f"{path}.name")] = fields.optional_text(
            entry.get("resourceClaimName"), f"{path}.resourceClaimName"
        )
    references: dict[str, tuple[str | None, str]] = {}
    for index, raw in enumerate(fields.array(spec.get("resourceClaims"), "spec.resourceClaims")):
        path = f"spec.resourceClaims[{index}]"
        entry = fields.obj(raw, path)
        name = fields.text(entry.get("name"), f"{path}.name")
        direct = fields.optional_text(entry.get("resourceClaimName"), f"{path}.resourceClaimName")
        if direct:
            references[name] = (direct, "")
        elif name not in generated:
            references[name] = (
                None,
                (
                    f'{fields.what} has no ResourceClaim for its claim "{name}" '
                    "yet (status.resourceClaimStatuses names none)"
                ),
            )
        elif not generated[name]:
            references[name] = (
                None,
                f'{fields.what} needs no ResourceClaim for its claim "{name}"',
            )
        else:
            references[name] = (generated[name], "")
    return references
