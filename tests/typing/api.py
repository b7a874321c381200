"""Type-checked uses of the public API (mypy --strict runs over this file; pytest does not)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import dra_metadata
from dra_metadata import (
    AttributeValue,
    DecodeResult,
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    MetadataSource,
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
    uuids: list[str] = []
    for device in (*metadata.devices, *template.devices, *single.devices):
        value: AttributeValue | None = device.attribute("uuid")
        if isinstance(value, str):
            uuids.append(value)
        fallback: AttributeValue | int | None = device.attribute("index", -1)
        del fallback
    del generations
    return uuids


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
    return ready.generation


async def awatch(path: Path) -> list[str]:
    return [event.kind.value async for event in dra_metadata.awatch_metadata_file(path, timeout=1)]
