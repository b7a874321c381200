"""Pool status without a server: the mapping of real ResourcePoolStatusRequests, the argument
checks against the server's own rules, the messages, and the watch's reading of events.

The objects in tests/data/pool-status/ are responses of a real kube-apiserver and
kube-controller-manager v1.36.2 (see its SOURCE.md).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, cast

import orjson
import pytest

from dra_metadata import InvalidNameError, KubeAPIError
from dra_metadata.kube import (
    PartitionTypeStatus,
    PoolStatus,
    PoolStatusResult,
    ShareableCapacity,
    ShareableSummary,
    read_pool_status,
)
from dra_metadata.kube._pool_errors import (
    _SUBDOMAIN,
    check_driver,
    check_limit,
    check_pool,
    check_timeout,
    not_served,
    refusal,
)
from dra_metadata.kube._pool_mapping import answered, pool_status_result_from_object
from dra_metadata.kube._pools import _Query, _Watch

from helpers import REPO, TESTS, run_python

POOLS = TESTS / "data" / "pool-status"
SHARED_POOLS = REPO.parent / "shared" / "fixtures" / "pool-status"


def fixture(name: str) -> Any:
    return orjson.loads((POOLS / name).read_bytes())


def result_of(name: str) -> PoolStatusResult:
    return pool_status_result_from_object(fixture(name))


@pytest.mark.skipif(
    not SHARED_POOLS.is_dir(), reason="shared/fixtures/pool-status is not beside the repo"
)
def test_fixtures_are_the_shared_ones() -> None:
    for path in SHARED_POOLS.iterdir():
        assert (POOLS / path.name).read_bytes() == path.read_bytes(), path.name


def test_every_pool_of_a_driver() -> None:
    result = result_of("rpsr-complete-driver-all-pools.json")
    assert (result.request_name, result.pool_count, result.truncated) == (
        "before-controller",
        6,
        False,
    )
    assert [
        (p.pool_name, p.node_name, p.total_devices, p.allocated_devices, p.available_devices)
        for p in result.pools
    ] == [
        ("cluster-pool", None, 2, 0, 2),
        ("node-a", "node-a", 4, 3, 1),
        ("node-b", "node-b", 2, 1, 1),
        ("node-c", "node-c", 2, 2, 0),
        ("node-d", "node-d", 5, 0, 5),
        ("rolling", "node-e", 3, 0, 3),
    ]
    node_d = result.pools[4]
    assert node_d == PoolStatus(
        driver="gpu.example.com",
        pool_name="node-d",
        generation=1,
        node_name="node-d",
        resource_slice_count=2,
        total_devices=5,
        allocated_devices=0,
        available_devices=5,
        unavailable_devices=0,
    )
    assert result.pools[5].generation == 2
    assert result.completed_at == dt.datetime(2026, 12, 1, 13, 26, 9, tzinfo=dt.timezone.utc)
    (condition,) = result.conditions
    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "Complete",
        "True",
        "CalculationComplete",
        "Calculated status for 6 pools",
    )


def test_truncated_filtered_empty_and_shared() -> None:
    truncated = result_of("rpsr-complete-truncated-limit-2.json")
    assert (len(truncated.pools), truncated.pool_count, truncated.truncated) == (2, 6, True)
    (node_a,) = result_of("rpsr-complete-pool-filter.json").pools
    assert node_a.pool_name == "node-a"
    for name in (
        "rpsr-complete-driver-without-slices.json",
        "rpsr-complete-no-matching-pools.json",
        "rpsr-complete-unknown-pool.json",
    ):
        empty = result_of(name)  # status.pools left out, not []
        assert (empty.pools, empty.pool_count, empty.truncated) == ((), 0, False), name
    (shared,) = result_of("rpsr-complete-shared-device-pool.json").pools
    # two shares of one device count twice: both devices "allocated", none available
    assert (shared.total_devices, shared.allocated_devices, shared.available_devices) == (2, 2, 0)
    limited = result_of("rpsr-complete-limit-excludes-incomplete-pool.json")
    assert (len(limited.pools), limited.pool_count, limited.truncated) == (1, 2, True)


def test_status_written_by_a_client_and_pending_requests() -> None:
    by_hand = fixture("rpsr-status-written-by-client.json")
    assert answered(by_hand)
    result = pool_status_result_from_object(by_hand)
    assert (result.pools, result.pool_count, result.conditions, result.completed_at) == (
        (),
        0,
        (),
        None,
    )
    for name in (
        "rpsr-created-pending.json",
        "rpsr-pending-incomplete-pool.json",
        "rpsr-create-with-status-dropped.json",
    ):
        assert not answered(fixture(name)), name


def documented_137_pool() -> dict[str, Any]:
    """A pool entry with the fields the Kubernetes documentation describes for 1.37, and one
    that no version describes yet."""
    return {
        "driver": "gpu.example.com",
        "poolName": "node-a",
        "generation": 3,
        "resourceSliceCount": 1,
        "totalDevices": 7,
        "allocatedDevices": 2,
        "availableDevices": 5,
        "unavailableDevices": 0,
        "nodeName": "node-a",
        "partitionSummary": [
            {"attribute": "gpu.example.com/profile", "type": "Full", "total": 1, "allocatable": 0},
            {
                "attribute": "gpu.example.com/profile",
                "type": "Half",
                "total": 2,
                "allocatable": 1,
                "reserved": 1,
            },
        ],
        "shareableSummary": {
            "fullyAvailableDevices": 1,
            "partiallyAvailableDevices": 1,
            "capacity": [
                {"name": "memory", "total": "160Gi", "consumed": "40Gi", "available": "120Gi"}
            ],
        },
        "futureField": {"kept": True},
    }


def test_the_fields_of_1_37_are_typed_and_unknown_ones_kept() -> None:
    request = fixture("rpsr-complete-pool-filter.json")
    request["status"]["pools"] = [documented_137_pool()]
    (pool,) = pool_status_result_from_object(request).pools
    assert pool.partition_summary == (
        PartitionTypeStatus("gpu.example.com/profile", "Full", 1, 0),
        PartitionTypeStatus("gpu.example.com/profile", "Half", 2, 1, extra={"reserved": 1}),
    )
    assert pool.shareable_summary == ShareableSummary(
        fully_available_devices=1,
        partially_available_devices=1,
        capacity=(ShareableCapacity("memory", "160Gi", "40Gi", "120Gi"),),
    )
    assert pool.extra == {"futureField": {"kept": True}}
    document = pool_status_result_from_object(request).to_document()
    (written,) = document["pools"]
    assert written["validationError"] is None  # the one field this pool does not set
    assert {key: value for key, value in written.items() if value is not None} == (
        documented_137_pool()
    )


def test_the_document_of_the_command() -> None:
    document = result_of("rpsr-complete-truncated-limit-2.json").to_document()
    assert orjson.loads(orjson.dumps(document)) == document
    assert {key: document[key] for key in ("requestName", "poolCount", "truncated")} == {
        "requestName": "first-two",
        "poolCount": 6,
        "truncated": True,
    }
    assert document["completedAt"] == "2026-12-01T13:26:42Z"
    assert document["pools"][1] == {
        "driver": "gpu.example.com",
        "poolName": "node-a",
        "generation": 1,
        "nodeName": "node-a",
        "resourceSliceCount": 1,
        "totalDevices": 4,
        "allocatedDevices": 3,
        "availableDevices": 1,
        "unavailableDevices": 0,
        "validationError": None,
        "partitionSummary": None,
        "shareableSummary": None,
    }
    assert document["conditions"][0]["reason"] == "CalculationComplete"


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("generation", "1", "an integer"),
        ("totalDevices", True, "an integer"),
        ("nodeName", 7, "a string"),
        ("partitionSummary", {"type": "Full"}, "an array"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_request_and_field(
    path: str, value: object, expected: str
) -> None:
    request = fixture("rpsr-complete-pool-filter.json")
    request["status"]["pools"][0][path] = value
    with pytest.raises(KubeAPIError) as caught:
        pool_status_result_from_object(request)
    assert str(caught.value).startswith(
        f'the API server returned resourcepoolstatusrequest "node-a-only" whose '
        f"status.pools[0].{path} is not {expected}"
    )


# The argument checks follow the server's validation (the 422 answers in the fixtures) ------


def server_regex(name: str) -> str:
    message = fixture(name)["details"]["causes"][0]["message"]
    found = re.search(r"regex used for validation is '([^']+)'", message)
    assert found is not None
    return found.group(1)


def test_the_name_rule_is_the_servers() -> None:
    assert _SUBDOMAIN.pattern == server_regex("status-422-poolname-invalid.json")
    assert _SUBDOMAIN.pattern == server_regex("status-422-driver-invalid.json")


@pytest.mark.parametrize(
    ("arguments", "refused_by_the_server", "argument"),
    [
        ({"driver": "GPU_example!"}, "status-422-driver-invalid.json", "driver"),
        ({"driver": "gpu.example.com", "pool": ""}, "status-422-poolname-empty.json", "pool"),
        (
            {"driver": "gpu.example.com", "pool": "Node 1//x"},
            "status-422-poolname-invalid.json",
            "pool",
        ),
        ({"driver": "gpu.example.com", "limit": 0}, "status-422-limit-zero.json", "limit"),
        ({"driver": "gpu.example.com", "limit": 1001}, "status-422-limit-too-large.json", "limit"),
    ],
)
def test_what_the_server_refuses_is_refused_before_sending(
    arguments: dict[str, Any], refused_by_the_server: str, argument: str
) -> None:
    assert fixture(refused_by_the_server)["code"] == 422
    field = {"driver": "spec.driver", "pool": "spec.poolName", "limit": "spec.limit"}[argument]
    assert fixture(refused_by_the_server)["details"]["causes"][0]["field"] == field
    with pytest.raises(ValueError, match=f"^(invalid )?{argument} ") as caught:
        _Query.checked(
            arguments["driver"], arguments.get("pool"), arguments.get("limit"), 30.0, False
        )
    if argument != "limit":
        assert isinstance(caught.value, InvalidNameError)
        assert caught.value.argument == argument


def test_lengths_and_what_the_server_accepts() -> None:
    with pytest.raises(InvalidNameError, match="must be no more than 253 bytes"):
        check_driver("a" * 254)
    with pytest.raises(InvalidNameError, match="must be no more than 253 bytes"):
        check_pool("a" * 254)
    assert check_driver("a" * 253) == "a" * 253
    assert check_driver("GPU.Example.COM") == "GPU.Example.COM"  # accepted, as the server does
    assert check_pool("rack-1/node-x") == "rack-1/node-x"
    for bad in ("Node-1", "a..b", "-a", "a/", "/a"):
        with pytest.raises(InvalidNameError):
            check_pool(bad)
    assert (check_pool(None), check_limit(None), check_limit(1000), check_timeout(None)) == (
        None,
        None,
        1000,
        None,
    )
    for timeout in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="timeout must be more than 0 seconds"):
            check_timeout(timeout)
    with pytest.raises(TypeError, match="limit must be an int"):
        check_limit(True)
    with pytest.raises(TypeError, match="keep must be True or False"):
        _Query.checked("gpu.example.com", None, None, 30.0, "yes")


def test_arguments_are_checked_before_any_configuration_is_read() -> None:
    result = run_python(
        "from dra_metadata.kube import read_pool_status\n"
        "try:\n    read_pool_status('gpu.example.com', pool='A')\n"
        "except ValueError as error:\n    print(type(error).__name__, error)\n",
        KUBECONFIG="/nonexistent",
    )
    assert result.stdout.startswith("InvalidNameError invalid pool 'A': segment 0 ('A')")
    with pytest.raises(InvalidNameError):
        read_pool_status(cast("str", 7))


# Messages ------------------------------------------------------------------------------


def test_refusals_name_the_verb_the_resource_and_the_example() -> None:
    body = (POOLS / "status-403-create-without-rbac.json").read_bytes()
    error = refusal("create", 403, body, "", "https://k8s:6443")
    assert (error.status, error.verb, error.resource, error.name) == (
        403,
        "create",
        "resourcepoolstatusrequests",
        None,
    )
    assert str(error) == (
        "the Kubernetes API server refused to create resourcepoolstatusrequests (HTTP 403 "
        'Forbidden: resourcepoolstatusrequests.resource.k8s.io is forbidden: User "alice" '
        'cannot create resource "resourcepoolstatusrequests" in API group "resource.k8s.io" at '
        'the cluster scope). Give the user or ServiceAccount a ClusterRole that allows "create" '
        "(reading pool status needs create, get, watch, delete) on "
        '"resourcepoolstatusrequests" (apiGroup resource.k8s.io) and a ClusterRoleBinding to '
        "it: see the example ClusterRole in examples/kubernetes/pool-status-rbac.yaml in the "
        "dra-metadata sources"
    )
    assert (REPO / "examples" / "kubernetes" / "pool-status-rbac.yaml").is_file()


def test_not_served_says_which_flag_and_version() -> None:
    said = "HTTP 404 NotFound: the server could not find the requested resource"
    assert fixture("status-404-runtime-config-off.json")["message"] in said
    new = str(not_served("https://k8s:6443", said, "v1.36.2"))
    assert "resourcepoolstatusrequests in resource.k8s.io/v1alpha3" in new
    assert "--runtime-config=resource.k8s.io/v1alpha3=true" in new
    assert "Kubernetes 1.36 or later" in new
    assert new.endswith("this server is v1.36.2: add the flag")
    assert str(not_served("https://k8s:6443", said, "v1.35.4")).endswith(
        "this server is v1.35.4: upgrade it first"
    )
    assert str(not_served("https://k8s:6443", said, None)).endswith(
        "its version could not be read (GET /version)"
    )


def test_watch_events_of_one_request() -> None:
    watch = _Watch(api=cast("Any", None), http=cast("Any", None), name="node-a-only", version="1")
    added, modified, deleted = (POOLS / "watch-rpsr-node-a-only.jsonl").read_text().splitlines()
    assert watch._event(added) is None
    assert watch.version == "298"
    answer = watch._event(modified)
    assert answer is not None
    assert watch.version == "299"
    assert [pool.pool_name for pool in pool_status_result_from_object(answer).pools] == ["node-a"]
    with pytest.raises(KubeAPIError, match='"node-a-only" was deleted before kube-controller'):
        watch._event(deleted)
    other = _Watch(api=cast("Any", None), http=cast("Any", None), name="someone-else", version="1")
    assert other._event(modified) is None  # a watch without a name filter would see others
