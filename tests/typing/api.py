"""Type-checked uses of the public API (mypy --strict runs over this file; pytest does not)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from typing_extensions import assert_type  # typing's is 3.11+ (pydantic brings this one)

import dra_metadata
from dra_metadata import (
    AttributeValue,
    DecodeResult,
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    MetadataSource,
    Version,
)
from dra_metadata.writer import encode_stream, update_metadata_file, write_metadata_file


def read(root: Path) -> list[str]:
    metadata: DeviceMetadata = dra_metadata.read_claim_metadata("my-claim", "gpu", root=root)
    template: DeviceMetadata = dra_metadata.read_template_metadata(
        "my-gpu", "gpu/high-memory", driver="gpu.example.com", root=str(root), max_size=1 << 20
    )
    single: DeviceMetadata = dra_metadata.read_metadata_file(root / "x-metadata.json")
    sources: Sequence[MetadataSource] = metadata.sources
    generations: list[int] = [source.generation for source in sources]
    stale: bool = any(source.stale for source in sources)
    uuids: list[str] = []
    for device in (*metadata.devices, *template.devices, *single.devices):
        value: AttributeValue | None = device.attribute("uuid")
        if isinstance(value, str):
            uuids.append(value)
        fallback: AttributeValue | int | None = device.attribute("index", -1)
        # A non-None default narrows the result: no None left to handle.
        narrowed: AttributeValue | str = device.attribute("uuid", "none")
        index: AttributeValue | int = device.attribute("index", default=-1)
        maybe: AttributeValue | None = device.attribute("uuid", None)
        del narrowed, index, maybe
        try:
            device.attribute("pciBusID")
        except dra_metadata.AttributeNotFoundError as error:
            suggestions: tuple[str, ...] = error.suggestions
            del suggestions
        del fallback
    del generations, stale
    return uuids


def typed_reads(device: Device) -> int:
    # type= reads one member and is typed as its type: no union left to narrow.
    idx: int = device.attribute("index", -1, type=int)
    assert_type(device.attribute("index", type=int), int | None)
    assert_type(device.attribute("index", -1, type=int), int)
    assert_type(device.attribute("ready", type=bool), bool | None)
    assert_type(device.attribute("ready", default=False, type=bool), bool)
    assert_type(device.attribute("model", type=str), str | None)
    assert_type(device.attribute("model", "", type=str), str)
    assert_type(device.attribute("driverVersion", type=dra_metadata.Version), Version | None)
    assert_type(device.attribute("driverVersion", None, type=Version), Version | None)
    fallback = Version("0.0.0")
    assert_type(device.attribute("driverVersion", fallback, type=Version), Version)
    assert_type(device.attribute("ids", type=tuple[int, ...]), tuple[int, ...] | None)
    assert_type(device.attribute("ids", (), type=tuple[int, ...]), tuple[int, ...])
    assert_type(device.attribute("flags", (), type=tuple[bool, ...]), tuple[bool, ...])
    assert_type(device.attribute("names", type=tuple[str, ...]), tuple[str, ...] | None)
    assert_type(device.attribute("versions", (), type=tuple[Version, ...]), tuple[Version, ...])
    # Without type=, the whole union, as before.
    assert_type(device.attribute("index"), AttributeValue | None)
    version: Version = Version("1.10.0")
    newer: bool = version > Version("1.9.0") and version >= "1.9.0"
    parts: tuple[int, int, int, str | None, str | None] = (
        version.major,
        version.minor,
        version.patch,
        version.prerelease,
        version.build,
    )
    text: str = version  # a str everywhere a str is expected
    del newer, parts, text
    try:
        device.attribute("index", type=int)
    except dra_metadata.AttributeValueError as error:
        held: str | None = error.kind
        name: str | None = error.name
        del held, name
    return idx


def decode(data: bytes) -> str:
    result: DecodeResult = dra_metadata.decode_stream(data)
    skipped: tuple[str, ...] = result.skipped_versions
    del skipped
    return result.api_version


def paths() -> list[Path]:
    return [
        dra_metadata.resource_claim_file_path("gpu.example.com", "c", "r"),
        dra_metadata.resource_claim_template_file_path("gpu.example.com", "c", "r", root="/x"),
        dra_metadata.resource_claim_request_dir("c", "r", root=Path("/x")),
        dra_metadata.resource_claim_template_request_dir("c", "r"),
        dra_metadata.default_root(),
    ]


def write(path: Path) -> DeviceMetadata:
    metadata = DeviceMetadata(
        requests=[DeviceMetadataRequest(name="gpu", devices=[Device(driver="d", pool="p")])],
        pod_claim_name="gpu",
    )
    data: bytes = encode_stream(metadata, versions=["metadata.resource.k8s.io/v1beta1"])
    del data
    try:
        written: Path = write_metadata_file(path, metadata, mode="in-place", root=path.parent)
    except dra_metadata.MetadataWriteError as error:
        code: int | None = error.errno
        del code
        raise
    del written
    device = Device(driver="d", pool="p", name="n", attributes={"a": DeviceAttribute(int=1)})
    return update_metadata_file(path, [device], root=str(path.parent))


def errors() -> str:
    try:
        dra_metadata.read_claim_metadata("c", "r")
    except dra_metadata.MetadataNotFoundError as error:
        return str(error.path)
    except dra_metadata.MetadataDecodeError as error:
        return f"{error.object_index} {error.field}"
    except dra_metadata.DeviceMetadataError as error:
        return error.message
    return ""


def watch(root: Path) -> int | None:
    for event in dra_metadata.watch_claim_metadata("c", "r", root=root, timeout=1.0):
        kind: dra_metadata.MetadataEventKind = event.kind
        if kind is dra_metadata.MetadataEventKind.UPDATED and event.metadata is not None:
            return event.generations.get("gpu.example.com")
    ready = dra_metadata.wait_for_network_data("c", "r", root=root, timeout=5, require=("ips",))
    one = dra_metadata.wait_for_network_data("c", "r", root=root, timeout=5, require="ips")
    listed = dra_metadata.wait_for_network_data("c", "r", root=root, timeout=5, require=["ips"])
    del one, listed
    return ready.generation


async def awatch(path: Path) -> list[str]:
    return [event.kind.value async for event in dra_metadata.awatch_metadata_file(path, timeout=1)]


async def await_ready(root: Path) -> int:
    import asyncio  # noqa: PLC0415

    stop = asyncio.Event()
    ready: DeviceMetadata = await dra_metadata.await_for_network_data(
        "c", "r", root=root, timeout=5, require=("ips",), stop_event=stop
    )
    each: DeviceMetadata = await dra_metadata.await_for(
        lambda device: device.network_data is not None, "c", "r", root=root, timeout=None
    )
    source: dra_metadata.WaitSource = "api"
    whole: DeviceMetadata = await dra_metadata.await_until(
        lambda m: None if m.devices else "no devices",
        "c",
        "r",
        template=True,
        timeout=5.0,
        progress=print,
        source=source,
        namespace="ns",
        pod_name="p",
    )
    return ready.generation + len(each.devices) + len(whole.devices)


def wait_on_the_api() -> DeviceMetadata:
    from lightkube import Client  # noqa: PLC0415

    with Client() as client:
        dra_metadata.wait_for(lambda _: True, "c", "r", timeout=1, source="auto", client=client)
        return dra_metadata.wait_for_network_data(
            "rdma-nics", "nics", source="api", namespace="ml", client=client, timeout=60
        )


def list_what_can_be_listed(root: Path) -> list[str]:
    problems: list[dra_metadata.MetadataReadError] = []
    claims = dra_metadata.list_claims(root=root, on_error=problems.append)
    return [claim.claim_name for claim in claims] + [str(problem.path) for problem in problems]


def kube_status() -> list[str]:
    from lightkube import Client  # noqa: PLC0415

    from dra_metadata import kube  # noqa: PLC0415

    with Client() as client:
        status: kube.ClaimStatus = kube.read_claim_status("rdma-nics", client=client)
        template = kube.read_template_claim_status("accelerator", pod_name="p", namespace="ns")
        metadata: DeviceMetadata = status.to_metadata("nics", driver="dra.net")
        for update in kube.watch_claim_status("rdma-nics", timeout=1.0):
            status = update
        health: tuple[kube.DeviceHealth, ...] = kube.read_device_health(container_name="c")
    documents: list[dict[str, object]] = [status.to_document(), *(h.to_document() for h in health)]
    del documents
    names = [device.name for device in (*status.devices, *template.devices)]
    ready = [device.condition("Ready") for device in status.devices]
    states: list[kube.Health] = [entry.health for entry in health]
    del metadata, ready, states
    return names


async def kube_watch() -> list[str]:
    from dra_metadata import kube  # noqa: PLC0415

    names: list[str] = []
    async for status in kube.awatch_claim_status("rdma-nics", template=True, timeout=1.0):
        names.extend(status.device_names())
    stop = asyncio.Event()
    async for snapshot in kube.awatch_device_health(container="c", timeout=1.0, stop_event=stop):
        names.extend(entry.device or entry.unresolved or "" for entry in snapshot)
    return names


def kube_health_watch() -> list[str | None]:
    import threading  # noqa: PLC0415

    from dra_metadata import kube  # noqa: PLC0415

    claims: list[str | None] = []
    for snapshot in kube.watch_device_health(
        namespace="ml", pod_name="trainer-0", stop_event=threading.Event()
    ):
        first: kube.DeviceHealth = snapshot[0]
        claims.append(first.claim_name)
    return claims


def kube_pools() -> list[int | None]:
    import datetime as dt  # noqa: PLC0415

    from lightkube import AsyncClient  # noqa: PLC0415

    from dra_metadata import kube  # noqa: PLC0415

    result: kube.PoolStatusResult = kube.read_pool_status(
        "gpu.example.com", pool="rack-1/node-7", limit=10, timeout=5.0, keep=False, client=None
    )
    pools: tuple[kube.PoolStatus, ...] = result.pools
    when: dt.datetime | None = result.completed_at
    count: int = result.pool_count
    truncated: bool = result.truncated
    summary: kube.ShareableSummary | None = pools[0].shareable_summary
    partitions = pools[0].partition_summary or ()
    types: list[str] = [entry.type for entry in partitions]
    capacity: list[kube.ShareableCapacity] = list(summary.capacity) if summary else []
    document: dict[str, object] = result.to_document()
    coroutine = kube.aread_pool_status("gpu.example.com", client=AsyncClient())
    coroutine.close()
    del when, count, truncated, types, capacity, document
    return [pool.available_devices for pool in pools]


def mounted(root: Path) -> list[str]:
    claims: list[dra_metadata.MountedClaim] = dra_metadata.list_claims(root=root)
    for claim in claims:
        kind: str = claim.kind
        drivers: tuple[str, ...] = claim.drivers
        files: tuple[Path, ...] = claim.paths
        metadata: DeviceMetadata = claim.read(driver=drivers[0], validate="strict")
        del kind, files, metadata
    devices: list[dra_metadata.MountedDevice] = dra_metadata.list_devices(root=str(root))
    return [
        f"{d.claim.claim_name} {d.request_name} {d.device.name} {d.source.path}" for d in devices
    ]


def export(metadata: DeviceMetadata) -> str:
    import json  # noqa: PLC0415

    wire: dict[str, object] = metadata.to_wire("metadata.resource.k8s.io/v1beta1")
    return json.dumps([wire, metadata.to_wire(), metadata.to_document()])


def plain_attributes() -> Device:
    return Device(
        name="gpu-0",
        attributes={
            "uuid": "GPU-1",
            "index": 0,
            "healthy": True,
            "links": ["a", "b"],
            "ids": [1, 2],
            "driverVersion": DeviceAttribute(version="1.2.3"),
        },
    )


def node_agent(socket: Path) -> dict[tuple[str, str, str], str]:
    from dra_metadata import podresources  # noqa: PLC0415

    holders: dict[tuple[str, str, str], str] = {}
    try:
        pods: list[podresources.PodResources] = podresources.list_pod_resources(socket=socket)
        one: podresources.PodResources = podresources.get_pod_resources(
            "trainer-0", "ml", socket=str(socket), timeout=2.5
        )
    except podresources.PodNotFoundError as error:
        return {(error.namespace, error.name, ""): error.socket}
    except podresources.PodResourcesError as error:
        return {("", "", error.method or ""): error.code or ""}
    for pod in [*pods, one]:
        for container, claim, device in pod.claim_resources(driver="gpu.example.com"):
            names: tuple[str, ...] = device.cdi_devices
            share: str | None = device.share_id
            holders[(device.driver, device.pool, device.device)] = (
                f"{pod.namespace}/{pod.name}/{container.name}/{claim.claim_name}{names}{share}"
            )
    allocatable = podresources.allocatable_resources()
    cpus: tuple[int, ...] = allocatable.cpu_ids
    for devices in allocatable.devices:
        if devices.topology is not None:
            numa: list[int] = [node.id for node in devices.topology.nodes]
            del numa
    del cpus
    return holders


async def anode_agent() -> int:
    from dra_metadata import podresources  # noqa: PLC0415

    pods = await podresources.alist_pod_resources(timeout=5)
    pod = await podresources.aget_pod_resources("trainer-0", "ml")
    allocatable = await podresources.aallocatable_resources(socket="/run/kubelet.sock")
    document: dict[str, object] = pod.to_document()
    return len(pods) + len(allocatable.memory) + len(document)
