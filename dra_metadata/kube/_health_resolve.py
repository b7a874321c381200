"""Which device a kubelet health entry names, from the pod's claims; nothing here does I/O.

The kubelet keys a DRA device's health by ``<driver>/<pool>/<device>``, or, when the driver
returned CDI device IDs for it, by the first of them (``vendor.com/class=name``). A CDI ID is
the driver's own name for the device: the API never publishes it. What links it to one
allocation result is the entry's name (``claim:<pod claim>[/<request>]``: the claim, and the
request when the container names one) and, where the driver follows the convention of the
upstream test driver (``claim-<claim uid>-<request>``), the request after the claim's UID.
A device is named only when exactly one allocation result fits; otherwise the entry says why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from dra_metadata._model._errors import shown_names
from dra_metadata.kube._models import AllocatedDevice, ClaimStatus, DeviceHealth

ClaimReferences = Mapping[str, tuple["str | None", str]]
"""Pod claim name -> (ResourceClaim name or None, why there is none): pod_claim_references."""


@dataclass(frozen=True, slots=True)
class _Pick:
    """One health entry's device, or why there is none."""

    device: AllocatedDevice | None
    reason: str = ""


def needed_claims(health: tuple[DeviceHealth, ...], references: ClaimReferences) -> list[str]:
    """The ResourceClaims to read: those of DRA entries the kubelet keyed by a CDI ID."""
    names: dict[str, None] = {}
    for entry in health:
        if entry.pod_claim_name is None or entry.driver is not None:
            continue
        name = references.get(entry.pod_claim_name, (None, ""))[0]
        if name is not None:
            names[name] = None
    return list(names)


def resolve(
    health: tuple[DeviceHealth, ...],
    references: ClaimReferences,
    claims: Mapping[str, ClaimStatus | str],
) -> tuple[DeviceHealth, ...]:
    """``health`` with `claim_name` set and each CDI-keyed device resolved, or `unresolved`.

    ``claims``: each claim read (needed_claims), or the sentence saying why it could not be.
    """
    picks: dict[int, _Pick] = {}
    for index, entry in enumerate(health):
        if entry.pod_claim_name is None or entry.driver is not None:
            continue
        claim_name, missing = references.get(
            entry.pod_claim_name,
            (None, f'the pod has no claim "{entry.pod_claim_name}" in spec.resourceClaims'),
        )
        if claim_name is None:
            picks[index] = _Pick(None, missing)
            continue
        claim = claims.get(claim_name, f'resourceclaim "{claim_name}" was not read')
        picks[index] = _pick(entry, claim) if isinstance(claim, ClaimStatus) else _Pick(None, claim)
    _refuse_shared_picks(health, picks)
    resolved = []
    for index, entry in enumerate(health):
        claim_name = None
        if entry.pod_claim_name is not None:
            claim_name = references.get(entry.pod_claim_name, (None, ""))[0]
        pick = picks.get(index)
        if pick is None:
            resolved.append(dataclasses.replace(entry, claim_name=claim_name))
        elif pick.device is None:
            resolved.append(
                dataclasses.replace(entry, claim_name=claim_name, unresolved=pick.reason)
            )
        else:
            resolved.append(
                dataclasses.replace(
                    entry,
                    claim_name=claim_name,
                    driver=pick.device.driver,
                    pool=pick.device.pool,
                    device=pick.device.name,
                    unresolved=None,
                )
            )
    return tuple(resolved)


def _candidates(entry: DeviceHealth, claim: ClaimStatus) -> list[AllocatedDevice]:
    """The claim's allocated devices the entry may name (its request's, with subrequests)."""
    if entry.request is None:
        return list(claim.devices)
    return [
        device
        for device in claim.devices
        if device.request == entry.request or device.request.startswith(f"{entry.request}/")
    ]


def _pick(entry: DeviceHealth, claim: ClaimStatus) -> _Pick:
    candidates = _candidates(entry, claim)
    which = f'resourceclaim "{claim.name}"'
    to = f' to request "{entry.request}"' if entry.request is not None else ""
    if not claim.allocated:
        return _Pick(None, f"{which} is not allocated")
    if not candidates:
        return _Pick(None, f"{which} allocates no device{to}")
    anchor = f"{claim.uid}-" if claim.uid else ""
    if anchor and anchor in entry.resource_id:
        named = entry.resource_id.rsplit(anchor, 1)[1]
        matched = [
            device
            for device in candidates
            if named
            in {device.request, device.request.replace("/", "-"), device.request.split("/")[0]}
        ]
        if len(matched) == 1:
            return _Pick(matched[0])
        if len(matched) > 1:
            return _Pick(None, _ambiguous(entry, which, f' to request "{named}"', matched))
    if len(candidates) == 1:
        return _Pick(candidates[0])
    return _Pick(None, _ambiguous(entry, which, to, candidates))


def _ambiguous(entry: DeviceHealth, which: str, to: str, devices: list[AllocatedDevice]) -> str:
    names = shown_names([device.name for device in devices])
    return (
        f"{which} allocates {len(devices)} devices{to} ({names}) and the kubelet's ID "
        f'"{entry.resource_id}" (a CDI device ID of the driver) does not say which one: '
        "PodResources on the node lists each device with its CDI IDs"
    )


def _refuse_shared_picks(health: tuple[DeviceHealth, ...], picks: dict[int, _Pick]) -> None:
    """Two resources of one entry cannot be one device: then neither is named."""
    seen: dict[tuple[str, str, AllocatedDevice], list[int]] = {}
    for index, pick in picks.items():
        if pick.device is not None:
            entry = health[index]
            seen.setdefault((entry.container, entry.resource_name, pick.device), []).append(index)
    for (container, resource_name, device), indexes in seen.items():
        if len(indexes) > 1:
            for index in indexes:
                picks[index] = _Pick(
                    None,
                    f"the kubelet reports {len(indexes)} resources under {resource_name} of "
                    f'container "{container}" that could each be device "{device.name}": it '
                    "cannot be told which is which",
                )
