"""dra_metadata.kube without a server: the mapping of real API objects, who "this pod" is,
errors, and that the optional dependency is imported only when used.

The objects in tests/data/kube/ are responses of a real kube-apiserver (see its SOURCE.md).
"""

from __future__ import annotations

import datetime as dt
import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

from dra_metadata import (
    Device,
    InvalidNameError,
    KubeAPIError,
    MetadataNotFoundError,
    NetworkDeviceData,
)
from dra_metadata.kube import ClaimStatus, DeviceCondition, DeviceHealth, read_claim_status
from dra_metadata.kube._errors import claim_target, pod_target, status_error
from dra_metadata.kube._identity import Resolved, resolve_namespace, resolve_pod_name
from dra_metadata.kube._mapping import (
    claim_status_from_object,
    device_health_from_pod,
    generated_claim_name,
    split_resource_id,
)
from dra_metadata.kube._stream import _Cursor, _on_event, _Restart
from dra_metadata.kube._wait import device_condition, network_data_condition

from helpers import REPO, TESTS, run_python

KUBE = TESTS / "data" / "kube"
SHARED_KUBE = REPO.parent / "shared" / "fixtures" / "kube"


def fixture(name: str) -> Any:
    return orjson.loads((KUBE / name).read_bytes())


@pytest.mark.skipif(not SHARED_KUBE.is_dir(), reason="shared/fixtures/kube is not beside the repo")
def test_fixtures_are_the_shared_ones() -> None:
    for path in SHARED_KUBE.iterdir():
        assert (KUBE / path.name).read_bytes() == path.read_bytes(), path.name


def test_allocated_claim_before_the_driver_wrote_anything() -> None:
    status = claim_status_from_object(fixture("resourceclaim-dranet-allocated.json"))
    assert (status.name, status.namespace) == ("rdma-nics", "ml-team")
    assert status.uid == "fea81bfc-9e57-492e-ba2a-aa0c12a0bb42"
    assert status.allocated
    assert status.requests == ("nics",)
    assert status.pod_claim_name is None
    assert status.device_names() == ("gpu0rdma0", "gpu1rdma0")
    for device in status.devices:
        assert (device.request, device.driver, device.pool) == ("nics", "dra.net", "gpu-node-7")
        assert device.network_data is None
        assert device.conditions == ()
        assert device.data is None
        assert device.share_id is None


def test_dranet_status_is_matched_to_the_allocation_not_to_its_list_order() -> None:
    status = claim_status_from_object(fixture("resourceclaim-dranet-network-data.json"))
    # The driver listed gpu1rdma0 first; devices follow the allocation results.
    assert status.device_names() == ("gpu0rdma0", "gpu1rdma0")
    first, second = status.devices
    assert first.network_data == NetworkDeviceData(
        interface_name="rdma0",
        ips=("10.128.0.17/24", "fd20:2b::11/64"),
        hardware_address="0a:58:0a:80:00:11",
    )
    assert second.network_data is not None
    assert second.network_data.interface_name == "rdma1"
    assert first.data == {
        "mtu": 8896,
        "numaNode": 0,
        "pciAddress": "0000:8c:00.0",
        "rdmaDevice": "mlx5_0",
    }
    assert first.conditions == (
        DeviceCondition(
            type="Ready",
            status="True",
            reason="NetworkDeviceReady",
            message="",
            last_transition_time=dt.datetime(2026, 11, 30, 13, 29, 34, tzinfo=dt.timezone.utc),
        ),
        DeviceCondition(
            type="NetworkReady",
            status="True",
            reason="NetworkReady",
            message="",
            last_transition_time=dt.datetime(2026, 11, 30, 13, 29, 34, tzinfo=dt.timezone.utc),
        ),
    )
    ready = first.condition("Ready")
    assert ready is not None
    assert ready.status == "True"
    assert first.condition("Healthy") is None


def test_to_metadata_gives_the_model_of_the_rest_of_the_library() -> None:
    status = claim_status_from_object(fixture("resourceclaim-dranet-network-data.json"))
    metadata = status.to_metadata()
    assert (metadata.name, metadata.namespace, metadata.uid) == (
        status.name,
        status.namespace,
        status.uid,
    )
    assert metadata.metadata.resource_version == status.resource_version
    assert metadata.generation == 0  # a ResourceClaim has none
    assert metadata.sources == ()
    assert [request.name for request in metadata.requests] == ["nics"]
    assert metadata.devices[0] == Device(
        driver="dra.net",
        pool="gpu-node-7",
        name="gpu0rdma0",
        network_data=status.devices[0].network_data,
    )
    assert metadata.devices[0].attributes == {}
    assert status.to_metadata("nics") == metadata
    assert status.to_metadata(driver="gpu.example.com").requests == ()


def test_subrequests_as_the_allocation_names_them() -> None:
    status = claim_status_from_object(fixture("resourceclaim-gpu-subrequest.json"))
    assert status.requests == ("gpu", "gpu/high-memory", "gpu/standard")
    assert [device.request for device in status.devices] == ["gpu/high-memory"]
    # A top-level name covers its subrequests, as the request directory of a file does.
    assert [request.name for request in status.to_metadata("gpu").requests] == ["gpu/high-memory"]
    assert status.to_metadata("gpu/high-memory").devices[0].name == "gpu-1"
    assert status.to_metadata("gpu/standard").requests == ()
    with pytest.raises(MetadataNotFoundError) as caught:
        status.to_metadata("gpu/nope")
    assert str(caught.value) == (
        'resourceclaim "inference-gpu" in namespace "ml-team" has no request "gpu/nope"; '
        "its requests: gpu, gpu/high-memory, gpu/standard"
    )
    assert caught.value.path is None


def test_claim_made_from_a_template_knows_its_pod_claim_name() -> None:
    status = claim_status_from_object(fixture("resourceclaim-from-template.json"))
    assert status.name == "trainer-0-accelerator-2rnqr"
    assert status.pod_claim_name == "accelerator"
    assert status.to_metadata().pod_claim_name == "accelerator"


def test_two_shares_of_one_device_are_told_apart_by_share_id() -> None:
    status = claim_status_from_object(fixture("resourceclaim-shared-device.json"))
    primary, secondary = status.devices
    assert (primary.name, secondary.name) == ("eth3", "eth3")
    assert primary.share_id == "0f5a3d7e-4c1b-4e8a-9d2f-6b7c8a9e0d11"
    assert primary.network_data is not None
    assert primary.network_data.interface_name == "net1"
    assert secondary.network_data is not None
    assert secondary.network_data.interface_name == "net2"
    assert secondary.conditions == ()  # the server returned "conditions": null
    assert [request.name for request in status.to_metadata().requests] == ["primary", "secondary"]


def test_statuses_differing_only_in_resource_version_are_equal() -> None:
    status = claim_status_from_object(fixture("resourceclaim-dranet-network-data.json"))
    other = fixture("resourceclaim-dranet-network-data.json")
    other["metadata"]["resourceVersion"] = "999"
    assert claim_status_from_object(other) == status
    other["status"]["devices"][0]["networkData"]["interfaceName"] = "changed"
    assert claim_status_from_object(other) != status


def test_generated_claim_name_comes_from_the_pod_status() -> None:
    pod = fixture("pod-resource-claim-statuses.json")
    assert generated_claim_name(pod, "accelerator") == "trainer-0-accelerator-2rnqr"
    with pytest.raises(MetadataNotFoundError, match='names the ResourceClaim "rdma-nics"'):
        generated_claim_name(pod, "nics")
    with pytest.raises(MetadataNotFoundError) as caught:
        generated_claim_name(pod, "gpu")
    assert str(caught.value) == (
        'pod "trainer-0" in namespace "ml-team" has no claim "gpu" in spec.resourceClaims; '
        "it has: accelerator, nics"
    )
    pod["status"]["resourceClaimStatuses"] = []
    with pytest.raises(MetadataNotFoundError, match="has not been made from the template"):
        generated_claim_name(pod, "accelerator")
    pod["status"]["resourceClaimStatuses"] = [{"name": "accelerator"}]
    with pytest.raises(MetadataNotFoundError, match="needs no ResourceClaim"):
        generated_claim_name(pod, "accelerator")


def test_device_health_of_each_container() -> None:
    pod = fixture("pod-allocated-resources-status.json")
    health = device_health_from_pod(pod)
    assert health == (
        DeviceHealth(
            container="trainer",
            pod_claim_name="accelerator",
            request="gpu",
            driver="gpu.example.com",
            pool="gpu-node-7",
            device="gpu-3",
            health="Unhealthy",
            message="XID 79: GPU has fallen off the bus",
            resource_name="claim:accelerator/gpu",
            resource_id="gpu.example.com/gpu-node-7/gpu-3",
        ),
        DeviceHealth(
            container="trainer",
            pod_claim_name="nics",
            request=None,
            driver="dra.net",
            pool="gpu-node-7",
            device="gpu0rdma0",
            health="Healthy",
            resource_name="claim:nics",
            resource_id="dra.net/gpu-node-7/gpu0rdma0",
        ),
        DeviceHealth(
            container="trainer",
            pod_claim_name="nics",
            request=None,
            driver="dra.net",
            pool="gpu-node-7",
            device="gpu1rdma0",
            health="Unknown",
            resource_name="claim:nics",
            resource_id="dra.net/gpu-node-7/gpu1rdma0",
        ),
        DeviceHealth(
            container="monitor",
            pod_claim_name="accelerator",
            request=None,
            driver="gpu.example.com",
            pool="gpu-node-7",
            device="gpu-3",
            health="Unhealthy",
            message="XID 79: GPU has fallen off the bus",
            resource_name="claim:accelerator",
            resource_id="gpu.example.com/gpu-node-7/gpu-3",
        ),
    )
    assert device_health_from_pod(pod, "monitor") == health[3:]
    with pytest.raises(MetadataNotFoundError, match="its containers: trainer, monitor"):
        device_health_from_pod(pod, "sidecar")
    # No health reported yet: nothing, not an error.
    assert device_health_from_pod(fixture("pod-resource-claim-statuses.json")) == ()


def test_device_plugin_entries_have_no_pod_claim() -> None:
    pod = fixture("pod-allocated-resources-status.json")
    pod["status"]["containerStatuses"][1]["allocatedResourcesStatus"] = [
        {"name": "nvidia.com/gpu", "resources": [{"resourceID": "GPU-5a3e", "health": "Healthy"}]}
    ]
    (entry,) = device_health_from_pod(pod, "monitor")
    assert (entry.pod_claim_name, entry.request, entry.driver, entry.device) == (
        None,
        None,
        None,
        None,
    )
    assert (entry.resource_name, entry.resource_id) == ("nvidia.com/gpu", "GPU-5a3e")


@pytest.mark.parametrize(
    ("resource_id", "split"),
    [
        ("dra.net/gpu-node-7/gpu0rdma0", ("dra.net", "gpu-node-7", "gpu0rdma0")),
        # A pool name may hold '/': split at the first and the last.
        ("gpu.example.com/rack-1/node-7/gpu-0", ("gpu.example.com", "rack-1/node-7", "gpu-0")),
        # The kubelet reports the first CDI device ID when the driver returned CDI IDs.
        ("gpu.example.com/gpu=gpu-0", None),
        ("no-slash", None),
        ("a//c", None),
    ],
)
def test_resource_id_split(resource_id: str, split: tuple[str, str, str] | None) -> None:
    assert split_resource_id(resource_id) == split


def test_malformed_objects_are_named_errors() -> None:
    claim = fixture("resourceclaim-dranet-network-data.json")
    claim["status"]["devices"][1]["networkData"]["ips"] = "10.0.0.1/24"
    with pytest.raises(KubeAPIError) as caught:
        claim_status_from_object(claim)
    assert str(caught.value) == (
        'the API server returned resourceclaim "rdma-nics" in namespace "ml-team" whose '
        "status.devices[1].networkData.ips is not an array (str)"
    )
    pod = fixture("pod-allocated-resources-status.json")
    pod["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]["resources"][0][
        "health"
    ] = "Broken"
    with pytest.raises(KubeAPIError, match=r"resources\[0\]\.health is 'Broken'"):
        device_health_from_pod(pod)


def test_network_data_condition_speaks_of_the_claim_status() -> None:
    allocated = claim_status_from_object(fixture("resourceclaim-dranet-allocated.json"))
    published = claim_status_from_object(fixture("resourceclaim-dranet-network-data.json"))
    condition = network_data_condition(("interface_name",))
    assert condition(allocated.to_metadata()) == (
        "claim status has no networkData for device gpu0rdma0"
    )
    assert condition(published.to_metadata()) is None
    assert condition(published.to_metadata(driver="other.example.com")) == (
        "claim status has no allocated devices"
    )
    shared = claim_status_from_object(fixture("resourceclaim-shared-device.json"))
    assert network_data_condition(("ips", "hardware_address"))(shared.to_metadata()) is None
    claim = fixture("resourceclaim-dranet-network-data.json")
    claim["status"]["devices"][1]["networkData"] = {"interfaceName": "rdma0"}
    partial = claim_status_from_object(claim).to_metadata()
    assert network_data_condition(("interface_name", "ips", "hardware_address"))(partial) == (
        "claim status has no networkData.ips and no networkData.hardwareAddress "
        "for device gpu0rdma0"
    )
    with pytest.raises(ValueError, match="unknown network data field"):
        network_data_condition(("mtu",))
    ready = device_condition(lambda device: device.name != "gpu1rdma0")
    assert ready(published.to_metadata()) == "claim status: device gpu1rdma0 not ready"


def test_watch_events_as_the_server_sent_them() -> None:
    seen: list[ClaimStatus] = []
    target = claim_target("rdma-nics", Resolved("ml-team", "argument"))
    cursor = _Cursor("0")
    lines = (KUBE / "watch-resourceclaim-rdma-nics.jsonl").read_text().splitlines()
    versions = []
    for line in lines:
        _on_event(target, line, cursor, lambda obj: seen.append(claim_status_from_object(obj)))
        versions.append(cursor.resource_version)
    types = [orjson.loads(line)["type"] for line in lines]
    assert types[:3] == ["ADDED", "BOOKMARK", "MODIFIED"]
    assert len(seen) == 2  # bookmarks carry no object to report...
    assert seen[0].devices[0].network_data is None
    assert seen[1].devices[0].network_data is not None
    # ...but move the cursor, so that a resumed watch starts after them.
    assert versions[-1] == orjson.loads(lines[-1])["object"]["metadata"]["resourceVersion"]
    gone = (KUBE / "watch-410-gone-after-restart.jsonl").read_text().strip()
    with pytest.raises(_Restart):
        _on_event(target, gone, cursor, seen.append)


def test_status_answers_become_errors_a_user_can_act_on() -> None:
    namespace = Resolved("other-team", "$POD_NAMESPACE")
    target = claim_target("rdma-nics", namespace)
    forbidden = status_error(target, "get", 403, (KUBE / "status-403-forbidden.json").read_bytes())
    assert isinstance(forbidden, KubeAPIError)
    assert forbidden.status == 403
    assert (forbidden.verb, forbidden.resource, forbidden.namespace, forbidden.name) == (
        "get",
        "resourceclaims",
        "other-team",
        "rdma-nics",
    )
    message = str(forbidden)
    assert message.startswith(
        'the Kubernetes API server refused to get resourceclaim "rdma-nics" in namespace '
        '"other-team" (namespace from $POD_NAMESPACE) (HTTP 403 Forbidden: '
        'resourceclaims.resource.k8s.io "rdma-nics" is forbidden: User '
    )
    assert 'allows "get" on "resourceclaims" (apiGroup resource.k8s.io)' in message
    assert "examples/kubernetes/api-reader-rbac.yaml" in message
    assert (REPO / "examples" / "kubernetes" / "api-reader-rbac.yaml").is_file()

    missing = status_error(target, "get", 404, (KUBE / "status-404-not-found.json").read_bytes())
    assert isinstance(missing, MetadataNotFoundError)
    assert isinstance(missing, FileNotFoundError)
    assert str(missing).startswith(
        'resourceclaim "rdma-nics" in namespace "other-team" not found '
        "(namespace from $POD_NAMESPACE)"
    )

    pod = pod_target(Resolved("trainer-0", "$POD_NAME"), namespace)
    unauthorized = status_error(
        pod, "get", 401, (KUBE / "status-401-unauthorized.json").read_bytes()
    )
    assert isinstance(unauthorized, KubeAPIError)
    assert unauthorized.status == 401
    assert "(HTTP 401 Unauthorized: Unauthorized): the token is unknown, expired" in str(
        unauthorized
    )

    invalid = status_error(target, "watch", 422, b"<html>not a Status</html>")
    assert isinstance(invalid, KubeAPIError)
    assert str(invalid).endswith("HTTP 422: <html>not a Status</html>")


def test_namespace_of_this_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    account = tmp_path / "serviceaccount"
    assert resolve_namespace(None, config_namespace="team-a", service_account_dir=account) == (
        Resolved("team-a", "the kubeconfig context")
    )
    account.mkdir()
    (account / "namespace").write_text("team-b")
    assert resolve_namespace(None, config_namespace="team-a", service_account_dir=account) == (
        Resolved("team-b", str(account / "namespace"))
    )
    monkeypatch.setenv("POD_NAMESPACE", "team-c")
    assert resolve_namespace(None, config_namespace="team-a", service_account_dir=account) == (
        Resolved("team-c", "$POD_NAMESPACE")
    )
    assert resolve_namespace("team-d", config_namespace="team-a") == Resolved("team-d", "argument")
    with pytest.raises(InvalidNameError, match="invalid namespace 'Team_D'"):
        resolve_namespace("Team_D", config_namespace=None)
    monkeypatch.delenv("POD_NAMESPACE")
    with pytest.raises(KubeAPIError, match="no namespace: pass namespace=, set"):
        resolve_namespace(None, config_namespace=None, service_account_dir=tmp_path / "none")


def test_name_of_this_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POD_NAME", raising=False)
    by_host = resolve_pod_name(None)
    assert by_host.value == socket.gethostname()
    assert by_host.origin.startswith("the host name")
    monkeypatch.setenv("POD_NAME", "trainer-0")
    assert resolve_pod_name(None) == Resolved("trainer-0", "$POD_NAME")
    assert resolve_pod_name("trainer-1") == Resolved("trainer-1", "argument")
    with pytest.raises(InvalidNameError):
        resolve_pod_name("")


@pytest.mark.parametrize("name", ["", "Upper", "a/b", "..", "x" * 254, "-dash"])
def test_claim_names_that_the_api_would_refuse_are_refused_first(name: str) -> None:
    with pytest.raises(InvalidNameError, match="invalid claim_name"):
        read_claim_status(name)


def test_reading_files_imports_no_kubernetes_client() -> None:
    result = run_python(
        "import sys, dra_metadata\n"
        "dra_metadata.read_claim_metadata('fast-net', 'vf', root='examples/tree')\n"
        "import dra_metadata.kube\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in {'lightkube', 'httpx2', 'httpx'}]\n"
        "print(loaded)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_without_the_extra_the_error_says_how_to_install_it() -> None:
    result = run_python(
        "import sys\n"
        "sys.modules['lightkube'] = None  # as if not installed\n"
        "from dra_metadata import kube\n"
        "try:\n"
        "    kube.read_claim_status('rdma-nics', namespace='ml-team')\n"
        "except kube.KubeAPIError as error:\n"
        "    print(error)\n"
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'dra-metadata[kube]'" in result.stdout


def test_without_the_extra_a_plain_read_says_how_to_install_it_too(tmp_path: Path) -> None:
    """A kubeconfig a plain read could serve without lightkube: it is not served all the same
    (a plain read is only ever a faster usual way, which needs the extra)."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        '{"clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", '
        '"certificate-authority-data": "eA=="}}], "users": [{"name": "u", "user": {"token": '
        '"t"}}], "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}], '
        '"current-context": "x"}'
    )
    result = run_python(
        "import sys\n"
        "sys.modules['lightkube'] = None  # as if not installed\n"
        "from dra_metadata import kube\n"
        "try:\n"
        "    kube.read_device_health(namespace='ml-team', pod_name='trainer')\n"
        "except kube.KubeAPIError as error:\n"
        "    print(error)\n",
        KUBECONFIG=str(kubeconfig),
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'dra-metadata[kube]'" in result.stdout


def test_no_configuration_is_said_so(tmp_path: Path) -> None:
    result = run_python(
        "from dra_metadata import kube\n"
        "try:\n"
        "    kube.read_claim_status('rdma-nics', namespace='ml-team')\n"
        "except kube.KubeAPIError as error:\n"
        "    print(error.status, error)\n",
        KUBECONFIG=str(tmp_path / "no-such-kubeconfig"),
        HOME=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("None no Kubernetes API configuration: not in a pod with a")
    assert "no-such-kubeconfig not found" in result.stdout


def test_a_refused_connection_is_said_so(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        orjson.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        ).decode()
    )
    result = run_python(
        "from dra_metadata import kube\n"
        "try:\n"
        "    kube.read_claim_status('rdma-nics')\n"
        "except kube.KubeAPIError as error:\n"
        "    print(error.status, error.verb, error.resource, error)\n",
        KUBECONFIG=str(kubeconfig),
        HOME=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f"None get resourceclaims the Kubernetes API server at https://127.0.0.1:{port} refused "
        'the connection to get resourceclaim "rdma-nics" in namespace "default": nothing '
        "listens there (in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT; outside: "
        "the kubeconfig's server)"
    )


def test_kube_all_is_sorted_and_complete() -> None:
    from dra_metadata import kube  # noqa: PLC0415

    def kind(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert kube.__all__ == sorted(kube.__all__, key=kind)
    public = {name for name in dir(kube) if not name.startswith(("_", "@"))}  # @: pytest
    assert public == set(kube.__all__)
    for name in kube.__all__:  # each loaded on first use, from the module _LAZY names
        assert getattr(kube, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'read_everything'"):
        kube.read_everything  # noqa: B018
    assert kube.ClaimStatus.__module__ == "dra_metadata.kube"
    assert kube.KubeAPIError is __import__("dra_metadata").KubeAPIError


def test_the_dranet_example_runs_as_the_example_service_account() -> None:
    import yaml  # noqa: PLC0415 - comes with lightkube

    directory = REPO / "examples" / "kubernetes"
    rbac = {
        d["kind"]: d for d in yaml.safe_load_all((directory / "api-reader-rbac.yaml").read_text())
    }
    pod = next(
        d
        for d in yaml.safe_load_all((directory / "dranet-pod.yaml").read_text())
        if d["kind"] == "Pod"
    )
    assert pod["spec"]["serviceAccountName"] == rbac["ServiceAccount"]["metadata"]["name"]
    assert rbac["RoleBinding"]["roleRef"]["name"] == rbac["Role"]["metadata"]["name"]
    assert rbac["Role"]["rules"] == [
        {
            "apiGroups": ["resource.k8s.io"],
            "resources": ["resourceclaims"],
            "verbs": ["get", "watch"],
        },
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch"]},
    ]
    (init,) = pod["spec"]["initContainers"]
    command = init["command"]
    assert command[:4] == ["dra-metadata", "wait", "--source", "api"]
    assert command[command.index("--for") + 1] == "network-data"
    claim_name, request = command[4:6]
    assert [c["resourceClaimName"] for c in pod["spec"]["resourceClaims"]] == [claim_name]
    claim = next(
        d
        for d in yaml.safe_load_all((directory / "dranet-pod.yaml").read_text())
        if d["kind"] == "ResourceClaim"
    )
    assert claim["metadata"]["name"] == claim_name
    assert [r["name"] for r in claim["spec"]["devices"]["requests"]] == [request]
