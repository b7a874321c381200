"""Request names: readers, watches and waits return the request (or subrequest) asked for.

A request directory is named after the top-level request, so the files of ``gpu`` carry
``gpu/high-memory`` when a prioritized list chose that subrequest; asking for
``gpu/low-memory`` must fail, saying which subrequest was allocated.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import DeviceMetadata, MetadataNotFoundError, ObjectMeta
from dra_metadata.testing import MetadataTree
from dra_metadata.writer import write_metadata_file

from helpers import REPO

SAMPLE = REPO / "examples" / "tree"

Read = Callable[..., DeviceMetadata]


def by_reader(claim: str, request: str, **options: object) -> DeviceMetadata:
    template = bool(options.pop("template", False))
    reader = dra_metadata.read_template_metadata if template else dra_metadata.read_claim_metadata
    return reader(claim, request, **options)  # type: ignore[arg-type]


def by_watch(claim: str, request: str, **options: object) -> DeviceMetadata:
    template = bool(options.pop("template", False))
    watch = dra_metadata.watch_template_metadata if template else dra_metadata.watch_claim_metadata
    events = watch(claim, request, timeout=5, **options)  # type: ignore[arg-type]
    try:
        event = next(events)
    finally:
        events.close()
    assert event.metadata is not None
    return event.metadata


def by_async_watch(claim: str, request: str, **options: object) -> DeviceMetadata:
    template = bool(options.pop("template", False))
    watch = (
        dra_metadata.awatch_template_metadata if template else dra_metadata.awatch_claim_metadata
    )

    async def first() -> DeviceMetadata:
        async for event in watch(claim, request, timeout=5, **options):  # type: ignore[arg-type]
            assert event.metadata is not None
            return event.metadata
        raise AssertionError("no event")

    return asyncio.run(first())


def by_wait(claim: str, request: str, **options: object) -> DeviceMetadata:
    return dra_metadata.wait_until(lambda _: None, claim, request, timeout=5, **options)  # type: ignore[arg-type]


def by_wait_for(claim: str, request: str, **options: object) -> DeviceMetadata:
    return dra_metadata.wait_for(lambda _: True, claim, request, timeout=5, **options)  # type: ignore[arg-type]


READERS = [by_reader, by_watch, by_async_watch, by_wait, by_wait_for]


@pytest.fixture(params=READERS, ids=lambda read: read.__name__)
def read(request: pytest.FixtureRequest) -> Read:
    function: Read = request.param
    return function


def devices(metadata: DeviceMetadata) -> list[tuple[str, str]]:
    return [
        (request.name, device.name) for request in metadata.requests for device in request.devices
    ]


def test_the_subrequest_asked_for(read: Read) -> None:
    metadata = read("accelerator", "gpu/high-memory", template=True, root=SAMPLE)
    assert devices(metadata) == [("gpu/high-memory", "gpu-3")]


def test_the_top_level_name_gives_every_subrequest(read: Read) -> None:
    metadata = read("accelerator", "gpu", template=True, root=SAMPLE)
    assert devices(metadata) == [("gpu/high-memory", "gpu-3")]


def test_another_subrequest_was_allocated(read: Read) -> None:
    directory = SAMPLE / "resourceclaimtemplates" / "accelerator" / "gpu"
    with pytest.raises(MetadataNotFoundError) as info:
        read("accelerator", "gpu/low-memory", template=True, root=SAMPLE)
    assert str(info.value) == (
        f"{directory}: request gpu was allocated as gpu/high-memory, not as gpu/low-memory (the "
        "scheduler chose another subrequest of its prioritized list); read it as gpu or "
        "gpu/high-memory"
    )


def test_a_plain_request_has_no_subrequest(read: Read) -> None:
    with pytest.raises(MetadataNotFoundError, match="has no subrequest gpu/foo: it was allocated"):
        read("training-gpus", "gpu/foo", root=SAMPLE)


def test_one_drivers_file(read: Read) -> None:
    metadata = read("training-gpus", "gpu", driver="rdma.example.com", root=SAMPLE)
    assert devices(metadata) == [("gpu", "mlx5-0"), ("gpu", "mlx5-1")]
    with pytest.raises(MetadataNotFoundError, match="allocated as gpu/high-memory") as info:
        read("accelerator", "gpu/low", driver="gpu.example.com", template=True, root=SAMPLE)
    assert info.value.path == SAMPLE / "resourceclaimtemplates" / "accelerator" / "gpu"


@pytest.fixture
def split_tree(tmp_path: Path) -> MetadataTree:
    """Two drivers of one request directory that carry different requests (hand-made files)."""
    tree = MetadataTree(tmp_path)
    tree.add_claim("c", "gpu/a", "a.example.com", ["a0", "a1"])
    tree.add_claim("c", "gpu/b", "b.example.com", ["b0"])
    tree.add_claim("c", "gpu", "c.example.com", ["c0"])
    return tree


def test_only_the_subrequests_devices(read: Read, split_tree: MetadataTree) -> None:
    metadata = read("c", "gpu/a", root=split_tree.root)
    assert devices(metadata) == [("gpu/a", "a0"), ("gpu/a", "a1")]
    # Every file stays a source: generations are per file, whatever it contributed.
    assert [source.driver for source in metadata.sources] == [
        "a.example.com",
        "b.example.com",
        "c.example.com",
    ]
    everything = read("c", "gpu", root=split_tree.root)
    assert devices(everything) == [("gpu/a", "a0"), ("gpu/a", "a1"), ("gpu/b", "b0"), ("gpu", "c0")]


def test_files_of_another_request(read: Read, tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path)
    path = tree.add_claim("c", "gpu", "a.example.com", ["a0"])
    tree.add_claim("c", "nic", "a.example.com", ["n0"]).replace(path)  # a "nic" file under gpu
    # The top-level name reads the directory as upstream does; a subrequest must be there.
    assert devices(read("c", "gpu", root=tmp_path)) == [("nic", "n0")]
    with pytest.raises(MetadataNotFoundError, match="hold no request gpu, only: nic"):
        read("c", "gpu/a", root=tmp_path)


@pytest.mark.parametrize("read", [by_reader, by_watch, by_wait], ids=lambda read: read.__name__)
def test_files_without_requests_contradict_nothing(read: Read, tmp_path: Path) -> None:
    # (wait_for waits for devices, so it is not here.)
    path = dra_metadata.resource_claim_file_path("a.example.com", "c", "gpu", root=tmp_path)
    write_metadata_file(path, DeviceMetadata(metadata=ObjectMeta(name="c", generation=1)))
    assert read("c", "gpu/x", root=tmp_path).requests == ()


def test_a_single_file_selects_nothing() -> None:
    path = (
        SAMPLE / "resourceclaimtemplates" / "accelerator" / "gpu" / "gpu.example.com-metadata.json"
    )
    assert devices(dra_metadata.read_metadata_file(path)) == [("gpu/high-memory", "gpu-3")]
