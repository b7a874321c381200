"""Which device a kubelet health entry names, on a real node's pod and claims (no server).

tests/data/node-health holds the pod as the kubelet reported it (resources keyed by the test
driver's CDI device IDs) and its two claims; the other cases change those objects the way a
cluster could: more devices per request, requests the ID does not name, no access.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dra_metadata.kube import ClaimStatus, DeviceHealth
from dra_metadata.kube._health import PodHealthView
from dra_metadata.kube._health_resolve import needed_claims, resolve
from dra_metadata.kube._mapping import claim_status_from_object, pod_claim_references

from kube_harness import node_fixture

DIRECT_UID = "332f917e-b918-4e23-aead-db07965936c8"


def _claims(*objects: dict[str, Any]) -> dict[str, ClaimStatus | str]:
    return {obj["metadata"]["name"]: claim_status_from_object(obj) for obj in objects}


def _real_claims() -> dict[str, ClaimStatus | str]:
    return _claims(
        node_fixture("resourceclaim-direct.json"), node_fixture("resourceclaim-template.json")
    )


def _named(pod: dict[str, Any], claims: dict[str, ClaimStatus | str]) -> tuple[DeviceHealth, ...]:
    view = PodHealthView.of(pod, None)
    return resolve(view.health, view.reference_map(), claims)


@pytest.mark.parametrize(
    ("fixture", "health"), [("pod-healthy.json", "Healthy"), ("pod-unhealthy.json", "Unhealthy")]
)
def test_the_real_nodes_health_names_both_devices(fixture: str, health: str) -> None:
    pod = node_fixture(fixture)
    view = PodHealthView.of(pod, None)
    assert [entry.device for entry in view.health] == [None, None]  # the kubelet's CDI IDs
    assert needed_claims(view.health, view.reference_map()) == [
        "claim-direct",
        "dra-meta-fromtmpl-wxrv9",
    ]
    direct, template = _named(pod, _real_claims())
    assert direct == DeviceHealth(
        container="c",
        pod_claim_name="direct",
        request=None,
        driver="test-driver.cdi.k8s.io",
        pool="e2e-node",
        device="device-00",
        health=health,  # type: ignore[arg-type]
        message="set by --initial-device-health",
        resource_name="claim:direct",
        resource_id=f"test-driver.cdi.k8s.io/test=claim-{DIRECT_UID}-req-a",
        claim_name="claim-direct",
    )
    assert (template.claim_name, template.device, template.unresolved) == (
        "dra-meta-fromtmpl-wxrv9",
        "device-01",
        None,
    )
    assert direct.to_document()["claimName"] == "claim-direct"
    assert direct.to_document()["unresolved"] is None


def test_the_pods_claims_by_pod_claim_name() -> None:
    pod = node_fixture("pod-healthy.json")
    assert pod_claim_references(pod) == {
        "direct": ("claim-direct", ""),
        "fromtmpl": ("dra-meta-fromtmpl-wxrv9", ""),
    }
    del pod["status"]["resourceClaimStatuses"]
    why = (
        'pod "dra-meta" in namespace "default" has no ResourceClaim for its claim "fromtmpl" '
        "yet (status.resourceClaimStatuses names none)"
    )
    assert pod_claim_references(pod)["fromtmpl"] == (None, why)
    (direct, template) = _named(pod, _real_claims())
    assert direct.device == "device-00"
    assert template.device is None
    assert template.unresolved is not None
    assert template.unresolved.endswith(
        'has no ResourceClaim for its claim "fromtmpl" yet '
        "(status.resourceClaimStatuses names none)"
    )


def _two_devices(request: str = "req-a", second_request: str = "req-a") -> dict[str, Any]:
    claim: dict[str, Any] = copy.deepcopy(node_fixture("resourceclaim-direct.json"))
    results = claim["status"]["allocation"]["devices"]["results"]
    results.append({**results[0], "request": second_request, "device": "device-02"})
    results[0]["request"] = request
    return claim


def test_the_request_after_the_claims_uid_tells_two_devices_apart() -> None:
    pod = node_fixture("pod-unhealthy.json")
    claims = _real_claims() | _claims(_two_devices("req-a", "req-b"))
    assert [entry.device for entry in _named(pod, claims)] == ["device-00", "device-01"]
    claims = _real_claims() | _claims(_two_devices("req-b", "req-a"))
    assert [entry.device for entry in _named(pod, claims)] == ["device-02", "device-01"]


def test_two_devices_of_the_request_the_id_names_are_not_told_apart() -> None:
    pod = node_fixture("pod-unhealthy.json")
    direct, template = _named(pod, _real_claims() | _claims(_two_devices()))
    assert (direct.driver, direct.pool, direct.device) == (None, None, None)
    assert direct.claim_name == "claim-direct"
    assert direct.unresolved == (
        'resourceclaim "claim-direct" allocates 2 devices to request "req-a" (device-00, '
        f'device-02) and the kubelet\'s ID "test-driver.cdi.k8s.io/test=claim-{DIRECT_UID}-req-a" '
        "(a CDI device ID of the driver) does not say which one: PodResources on the node lists "
        "each device with its CDI IDs"
    )
    assert template.device == "device-01"


def test_an_id_without_the_claims_uid_names_the_only_device_of_its_request() -> None:
    pod = copy.deepcopy(node_fixture("pod-unhealthy.json"))
    container = pod["spec"]["containers"][0]
    container["resources"]["claims"][0]["request"] = "req-a"
    entry = pod["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]
    entry["name"] = "claim:direct/req-a"
    entry["resources"][0]["resourceID"] = "vendor.example/gpu=GPU-6a1f"
    claims = _real_claims() | _claims(_two_devices("req-a", "req-b"))
    direct = _named(pod, claims)[0]
    assert (direct.request, direct.device) == ("req-a", "device-00")
    # Without the request in the entry's name both devices could be the one.
    entry["name"] = "claim:direct"
    direct = _named(pod, claims)[0]
    assert direct.device is None
    assert direct.unresolved is not None
    assert direct.unresolved.startswith(
        'resourceclaim "claim-direct" allocates 2 devices (device-00, device-02) and the '
        'kubelet\'s ID "vendor.example/gpu=GPU-6a1f"'
    )


def test_two_resources_for_one_device_name_neither() -> None:
    pod = copy.deepcopy(node_fixture("pod-unhealthy.json"))
    resources = pod["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]["resources"]
    resources.append({**resources[0], "resourceID": "test-driver.cdi.k8s.io/test=other"})
    first, second, _ = _named(pod, _real_claims())
    assert (first.device, second.device) == (None, None)
    assert first.unresolved == second.unresolved
    assert first.unresolved == (
        'the kubelet reports 2 resources under claim:direct of container "c" that could each be '
        'device "device-00": it cannot be told which is which'
    )


def test_a_claim_that_is_missing_not_allocated_or_not_readable() -> None:
    pod = node_fixture("pod-unhealthy.json")
    unallocated = copy.deepcopy(node_fixture("resourceclaim-direct.json"))
    del unallocated["status"]["allocation"]
    direct, template = _named(
        pod,
        _claims(unallocated)
        | {"dra-meta-fromtmpl-wxrv9": "the ResourceClaims cannot be read: that needs ..."},
    )
    assert direct.unresolved == 'resourceclaim "claim-direct" is not allocated'
    assert template.unresolved == "the ResourceClaims cannot be read: that needs ..."
    assert [entry.health for entry in (direct, template)] == ["Unhealthy", "Unhealthy"]


def test_driver_pool_device_ids_need_no_claim() -> None:
    pod = copy.deepcopy(node_fixture("pod-unhealthy.json"))
    entry = pod["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]
    entry["resources"][0]["resourceID"] = "test-driver.cdi.k8s.io/rack-1/e2e-node/device-00"
    view = PodHealthView.of(pod, None)
    assert needed_claims(view.health, view.reference_map()) == ["dra-meta-fromtmpl-wxrv9"]
    direct = resolve(view.health, view.reference_map(), {})[0]
    assert (direct.pool, direct.device, direct.claim_name, direct.unresolved) == (
        "rack-1/e2e-node",
        "device-00",
        "claim-direct",
        None,
    )


def test_a_status_update_that_changes_nothing_about_health_is_the_same_view() -> None:
    healthy = node_fixture("pod-healthy.json")
    touched = copy.deepcopy(healthy)
    touched["metadata"]["resourceVersion"] = "9999"
    touched["status"]["conditions"][0]["lastTransitionTime"] = "2026-12-02T00:00:00Z"
    assert PodHealthView.of(touched, None) == PodHealthView.of(healthy, None)
    assert PodHealthView.of(node_fixture("pod-unhealthy.json"), None) != PodHealthView.of(
        healthy, None
    )
