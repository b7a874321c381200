"""Readers: single files, request directories, merging (spec §6, §12.2, §12.3), bad files."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dra_metadata import (
    DEFAULT_MAX_SIZE,
    Device,
    DeviceMetadata,
    DeviceMetadataRequest,
    MetadataConflictError,
    MetadataDecodeError,
    MetadataNotFoundError,
    MetadataReadError,
    MetadataTooLargeError,
    NoMetadataError,
    ObjectMeta,
    read_claim_metadata,
    read_metadata_file,
    read_template_metadata,
    resource_claim_request_dir,
    resource_claim_template_request_dir,
)
from dra_metadata.writer import write_metadata_file

from helpers import (
    REPO,
    UPSTREAM,
    V1ALPHA1,
    V1BETA1,
    can_unshare,
    compact,
    replaced_without_pause,
    running_as_root,
    stream,
    wire_object,
)


def device(driver: str, name: str) -> dict[str, object]:
    return {"driver": driver, "pool": "worker-0", "name": name}


def metadata_object(driver: str, requests: dict[str, list[str]], **top: object) -> bytes:
    wire_requests = [
        {"name": request, "devices": [device(driver, name) for name in names]}
        for request, names in requests.items()
    ]
    return stream(wire_object(requests=wire_requests, **top))


def put(directory: Path, name: str, data: bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(data)
    return path


@pytest.fixture
def gpu_dir(tmp_path: Path) -> Path:
    return resource_claim_request_dir("my-claim", "gpu", root=tmp_path)


class TestReadMetadataFile:
    def test_valid_file(self, tmp_path: Path) -> None:  # §12.2 case 1
        path = put(tmp_path, "gpu.example.com-metadata.json", stream(wire_object()))
        metadata = read_metadata_file(path)
        assert (metadata.name, metadata.namespace, metadata.uid, metadata.generation) == (
            "my-claim",
            "default",
            "uid-1234",
            1,
        )
        assert [request.name for request in metadata.requests] == ["gpu"]
        (source,) = metadata.sources
        assert source.path == path
        assert source.driver == "gpu.example.com"
        assert source.api_version == V1ALPHA1
        assert source.generation == 1

    def test_any_file_name(self, tmp_path: Path) -> None:
        path = put(tmp_path, "metadata.json", stream(wire_object()))
        assert read_metadata_file(str(path)).sources[0].driver is None

    def test_upstream_fixtures_as_files(self) -> None:
        metadata = read_metadata_file(UPSTREAM / "HEAD" / "metadata.json")
        assert metadata.api_version == V1BETA1
        assert metadata.generation == 7

    def test_missing_file_says_what_is_there(self, gpu_dir: Path) -> None:  # §12.2 case 2
        put(gpu_dir, "nic.example.com-metadata.json", stream(wire_object()))
        path = gpu_dir / "gpu.example.com-metadata.json"
        with pytest.raises(MetadataNotFoundError) as info:
            read_metadata_file(path)
        error = info.value
        assert isinstance(error, FileNotFoundError)
        assert error.path == path
        assert error.filename == str(path)
        assert "open metadata file" in str(error)
        assert "holds: nic.example.com-metadata.json" in str(error)

    def test_a_crowded_directory_is_listed_in_part(self, tmp_path: Path) -> None:
        for index in range(25):
            put(tmp_path, f"d{index:02}-metadata.json", b"")
        with pytest.raises(MetadataNotFoundError) as info:
            read_metadata_file(tmp_path / "x-metadata.json")
        listed = str(info.value).partition("holds: ")[2]
        names = [f"d{index:02}-metadata.json" for index in range(10)]
        assert listed == ", ".join([*names, "and 15 more"])

    def test_missing_directory_is_named(self, tmp_path: Path) -> None:
        path = tmp_path / "absent" / "x-metadata.json"
        with pytest.raises(MetadataNotFoundError, match="neither does its directory"):
            read_metadata_file(path)

    def test_empty_object_names_the_file(self, tmp_path: Path) -> None:  # §12.2 case 3
        path = put(tmp_path, "x-metadata.json", b"{}")
        with pytest.raises(MetadataDecodeError) as info:
            read_metadata_file(path)
        assert info.value.path == path
        assert str(path) in str(info.value)

    def test_empty_file_may_be_mid_write(self, tmp_path: Path) -> None:
        path = put(tmp_path, "x-metadata.json", b"")
        with pytest.raises(NoMetadataError, match="middle of writing") as info:
            read_metadata_file(path)
        assert info.value.path == path

    def test_truncated_file(self, tmp_path: Path) -> None:
        data = stream(wire_object())
        path = put(tmp_path, "x-metadata.json", data[:-20])
        with pytest.raises(MetadataDecodeError, match="truncated") as info:
            read_metadata_file(path)
        assert info.value.path == path

    def test_directory_instead_of_file(self, tmp_path: Path) -> None:
        (tmp_path / "x-metadata.json").mkdir()
        with pytest.raises(MetadataReadError, match="it is a directory") as info:
            read_metadata_file(tmp_path / "x-metadata.json")
        assert isinstance(info.value, OSError)

    def test_fifo_is_refused_without_blocking(self, tmp_path: Path) -> None:
        fifo = tmp_path / "x-metadata.json"
        os.mkfifo(fifo)
        with pytest.raises(MetadataReadError, match="not a regular file"):
            read_metadata_file(fifo)

    def test_too_large_is_not_read_whole(self, tmp_path: Path) -> None:
        path = tmp_path / "x-metadata.json"
        with path.open("wb") as handle:
            handle.truncate(DEFAULT_MAX_SIZE + 1)  # sparse: reading it whole would be noticed
        with pytest.raises(MetadataTooLargeError, match="limit of 4194304 bytes") as info:
            read_metadata_file(path)
        assert info.value.limit == DEFAULT_MAX_SIZE
        assert isinstance(info.value, MetadataDecodeError)

    def test_size_cap_is_configurable(self, tmp_path: Path) -> None:
        data = stream(wire_object())
        path = put(tmp_path, "x-metadata.json", data)
        with pytest.raises(MetadataTooLargeError):
            read_metadata_file(path, max_size=len(data) - 1)
        assert read_metadata_file(path, max_size=len(data)).name == "my-claim"
        for wrong in (-1, float("nan")):
            with pytest.raises(ValueError, match="max_size must be"):
                read_metadata_file(path, max_size=wrong)  # type: ignore[arg-type]

    def test_non_utf8_file(self, tmp_path: Path) -> None:
        # As in Go, each byte that is not UTF-8 inside a string reads as U+FFFD.
        data = stream(wire_object()).replace(b"my-claim", b"my-\xc3\x28claim")
        path = put(tmp_path, "x-metadata.json", data)
        assert read_metadata_file(path).name == "my-\ufffd(claim"
        with pytest.raises(MetadataDecodeError, match="invalid character"):
            read_metadata_file(put(tmp_path, "y-metadata.json", b"\xc3\x28"))

    def test_permission_denied(self, tmp_path: Path) -> None:
        path = put(tmp_path, "x-metadata.json", stream(wire_object()))
        path.chmod(0o000)
        code = (
            "import dra_metadata\n"
            "try:\n"
            f"    dra_metadata.read_metadata_file({str(path)!r})\n"
            "except dra_metadata.MetadataReadError as error:\n"
            "    print(type(error).__name__, error.errno, error)\n"
        )
        command = [sys.executable, "-c", code]
        if running_as_root():
            # Root reads anything: drop the capabilities that bypass file permissions.
            if shutil.which("setpriv") is None:
                pytest.skip("running as root and setpriv (util-linux) is not installed")
            command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        assert result.stdout.startswith("MetadataReadError 13 "), result.stderr
        assert "Permission denied" in result.stdout
        assert str(path) in result.stdout


class TestReadRequestDirectory:
    def test_one_driver(self, tmp_path: Path, gpu_dir: Path) -> None:  # §12.3 case 1
        put(gpu_dir, "gpu.example.com-metadata.json", stream(wire_object()))
        metadata = read_claim_metadata("my-claim", "gpu", root=tmp_path)
        assert [request.name for request in metadata.requests] == ["gpu"]
        # Better than upstream: a single file keeps its whole object metadata.
        assert metadata.generation == 1
        assert metadata.name == "my-claim"

    def test_two_drivers_sorted(self, tmp_path: Path, gpu_dir: Path) -> None:  # §12.3 case 2
        put(
            gpu_dir,
            "nic.example.com-metadata.json",
            metadata_object("nic.example.com", {"nic": ["n0"]}),
        )
        put(
            gpu_dir,
            "gpu.example.com-metadata.json",
            metadata_object("gpu.example.com", {"gpu": ["g0"]}),
        )
        metadata = read_claim_metadata("my-claim", "gpu", root=tmp_path)
        assert [request.name for request in metadata.requests] == ["gpu", "nic"]
        assert [source.driver for source in metadata.sources] == [
            "gpu.example.com",
            "nic.example.com",
        ]

    def test_requests_merged_by_name(self, tmp_path: Path, gpu_dir: Path) -> None:  # case 3
        put(
            gpu_dir,
            "gpu.example.com-metadata.json",
            metadata_object(
                "gpu.example.com", {"gpu-0": ["gpu-0"], "single-gpu": ["gpu-1"], "gpu-1": ["gpu-2"]}
            ),
        )
        put(
            gpu_dir,
            "mlx.example.com-metadata.json",
            metadata_object("mlx.example.com", {"gpu-0": ["mlx-0"], "gpu-1": ["mlx-1"]}),
        )
        metadata = read_claim_metadata("my-claim", "gpu", root=tmp_path)
        merged = {
            request.name: [(d.driver, d.name) for d in request.devices]
            for request in metadata.requests
        }
        assert list(merged) == ["gpu-0", "single-gpu", "gpu-1"]
        assert merged["gpu-0"] == [("gpu.example.com", "gpu-0"), ("mlx.example.com", "mlx-0")]
        assert merged["single-gpu"] == [("gpu.example.com", "gpu-1")]
        assert merged["gpu-1"] == [("gpu.example.com", "gpu-2"), ("mlx.example.com", "mlx-1")]
        # Kept because both files agree; generation is per file, so it is not merged.
        assert (metadata.name, metadata.namespace, metadata.uid) == (
            "my-claim",
            "default",
            "uid-1234",
        )
        assert metadata.generation == 0
        assert [source.generation for source in metadata.sources] == [1, 1]

    def test_only_unrelated_files(self, tmp_path: Path, gpu_dir: Path) -> None:  # case 4
        put(gpu_dir, "unrelated.txt", b"hello")
        with pytest.raises(MetadataNotFoundError) as info:
            read_claim_metadata("my-claim", "gpu", root=tmp_path)
        assert info.value.path == gpu_dir
        assert str(info.value) == (
            f"{gpu_dir}: no *-metadata.json file in {gpu_dir} (it holds: unrelated.txt): is the "
            "claim allocated to this container, and does its driver publish device metadata?"
        )

    def test_missing_directory(self, tmp_path: Path) -> None:  # case 5
        (tmp_path / "resourceclaims" / "my-claim" / "nic").mkdir(parents=True)
        with pytest.raises(MetadataNotFoundError, match="has no request gpu with metadata"):
            read_claim_metadata("my-claim", "gpu", root=tmp_path)

    def test_unrelated_json_ignored(self, tmp_path: Path, gpu_dir: Path) -> None:  # case 6
        put(gpu_dir, "gpu.example.com-metadata.json", stream(wire_object()))
        put(gpu_dir, "unrelated.json", b"not json at all")
        assert read_claim_metadata("my-claim", "gpu", root=tmp_path).requests[0].name == "gpu"

    def test_pod_claim_name(self, tmp_path: Path) -> None:  # case 7
        directory = resource_claim_template_request_dir("my-gpu", "gpu", root=tmp_path)
        put(directory, "gpu.example.com-metadata.json", stream(wire_object(podClaimName="my-gpu")))
        put(directory, "z.example.com-metadata.json", stream(wire_object(podClaimName="other")))
        metadata = read_template_metadata("my-gpu", "gpu", root=tmp_path)
        assert metadata.pod_claim_name == "my-gpu"  # the first one set

    def test_dot_files_are_included_and_sorted_bytewise(
        self, tmp_path: Path, gpu_dir: Path
    ) -> None:
        for name in (
            "b-metadata.json",
            ".hidden-metadata.json",
            "B-metadata.json",
            "é-metadata.json",
        ):
            put(gpu_dir, name, metadata_object(name.split("-")[0], {name: ["d"]}))
        metadata = read_claim_metadata("my-claim", "gpu", root=tmp_path)
        assert [source.driver for source in metadata.sources] == [".hidden", "B", "b", "é"]

    def test_mixed_versions(self, tmp_path: Path, gpu_dir: Path) -> None:
        put(gpu_dir, "a-metadata.json", stream(wire_object(V1BETA1)))
        put(gpu_dir, "b-metadata.json", stream(wire_object(V1ALPHA1)))
        metadata = read_claim_metadata("my-claim", "gpu", root=tmp_path)
        assert metadata.api_version == ""
        assert [source.api_version for source in metadata.sources] == [V1BETA1, V1ALPHA1]

    def test_conflicting_claims(self, tmp_path: Path, gpu_dir: Path) -> None:
        # As Go, the merge succeeds (the uid is left empty); validate= reports the conflict.
        put(gpu_dir, "a-metadata.json", stream(wire_object()))
        other = wire_object(metadata={"name": "my-claim", "namespace": "default", "uid": "other"})
        put(gpu_dir, "b-metadata.json", stream(other))
        assert read_claim_metadata("my-claim", "gpu", root=tmp_path).uid == ""
        with pytest.raises(MetadataConflictError, match="uid") as info:
            read_claim_metadata("my-claim", "gpu", root=tmp_path, validate=True)
        assert info.value.field == "uid"
        assert info.value.values == ("uid-1234", "other")
        assert info.value.path == gpu_dir

    def test_a_broken_file_fails_the_read(self, tmp_path: Path, gpu_dir: Path) -> None:
        put(gpu_dir, "a-metadata.json", stream(wire_object()))
        broken = put(gpu_dir, "b-metadata.json", b"{")
        with pytest.raises(MetadataDecodeError) as info:
            read_claim_metadata("my-claim", "gpu", root=tmp_path)
        assert info.value.path == broken

    def test_with_driver_reads_that_file_only(self, tmp_path: Path, gpu_dir: Path) -> None:
        put(gpu_dir, "a-metadata.json", metadata_object("a", {"gpu": ["a0"]}))
        put(gpu_dir, "b-metadata.json", b"{ broken")
        metadata = read_claim_metadata("my-claim", "gpu", driver="a", root=tmp_path)
        assert [d.name for d in metadata.devices] == ["a0"]
        with pytest.raises(MetadataNotFoundError):
            read_claim_metadata("my-claim", "gpu", driver="c", root=tmp_path)

    def test_subrequest_uses_the_top_level_directory(self, tmp_path: Path) -> None:
        directory = resource_claim_template_request_dir("my-gpu", "gpu", root=tmp_path)
        obj = wire_object(requests=[{"name": "gpu/high-memory", "devices": [device("g", "g0")]}])
        put(directory, "g-metadata.json", compact(obj))
        metadata = read_template_metadata("my-gpu", "gpu/high-memory", root=tmp_path)
        (request,) = metadata.requests
        assert (request.base_name, request.subrequest_name) == ("gpu", "high-memory")

    def test_request_path_is_a_file(self, tmp_path: Path, gpu_dir: Path) -> None:
        put(gpu_dir.parent, "gpu", b"")
        with pytest.raises(MetadataReadError, match="not a directory"):
            read_claim_metadata("my-claim", "gpu", root=tmp_path)

    def test_root_from_environment(
        self, tmp_path: Path, gpu_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        put(gpu_dir, "gpu.example.com-metadata.json", stream(wire_object()))
        monkeypatch.setenv("DRA_METADATA_ROOT", str(tmp_path))
        assert read_claim_metadata("my-claim", "gpu").name == "my-claim"


SAMPLE = REPO / "examples" / "tree"


class TestNotFoundSaysWhatToDo:
    """Each usual mistake gets its own sentence: what exists, and what to do next."""

    def message(self, call: Callable[[], object]) -> str:
        with pytest.raises(MetadataNotFoundError) as info:
            call()
        return str(info.value)

    def test_the_root_is_missing(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        absent = tmp_path / "absent"
        message = self.message(lambda: read_claim_metadata("c", "r", root=absent))
        assert message == (
            f"{absent}/resourceclaims/c/r: the metadata root {absent} (from root=) does not "
            "exist: no DRA device metadata is mounted here (no claim of this container has a "
            "driver that publishes it); to read a tree elsewhere, pass root= or set "
            "DRA_METADATA_ROOT"
        )
        monkeypatch.setenv("DRA_METADATA_ROOT", str(absent))
        assert f"{absent} (from $DRA_METADATA_ROOT)" in self.message(
            lambda: read_claim_metadata("c", "r")
        )
        monkeypatch.delenv("DRA_METADATA_ROOT")
        assert "(from the container default)" in self.message(lambda: read_claim_metadata("c", "r"))

    def test_the_root_is_a_file(self, tmp_path: Path) -> None:
        root = put(tmp_path, "root", b"")
        with pytest.raises(MetadataReadError, match="not a directory"):
            read_claim_metadata("c", "r", root=root)

    def test_the_claim_is_wrong(self) -> None:
        message = self.message(lambda: read_claim_metadata("nope", "gpu", root=SAMPLE))
        assert message.endswith(
            "no claim nope referenced by name has metadata (claims referenced by name: "
            "fast-net, training-gpus; claims made from templates (pod claim names): "
            "accelerator); `dra-metadata ls` lists everything mounted"
        )
        message = self.message(lambda: read_template_metadata("nope", "gpu", root=SAMPLE))
        assert "no claim made from a template has the pod claim name nope (" in message

    def test_an_empty_root(self, tmp_path: Path) -> None:
        message = self.message(lambda: read_claim_metadata("c", "r", root=tmp_path))
        assert f"(no claim has device metadata under {tmp_path})" in message

    def test_a_template_claim_read_as_a_named_one(self) -> None:
        message = self.message(lambda: read_claim_metadata("accelerator", "gpu", root=SAMPLE))
        assert message.endswith(
            "no claim accelerator referenced by name has metadata, but accelerator is the pod "
            "claim name of a claim made from a template: use read_template_metadata"
        )
        message = self.message(lambda: read_template_metadata("fast-net", "vf", root=SAMPLE))
        assert message.endswith(
            "no claim made from a template has the pod claim name fast-net, but claim fast-net "
            "is referenced by name: use read_claim_metadata"
        )

    def test_the_request_is_wrong(self) -> None:
        message = self.message(lambda: read_claim_metadata("training-gpus", "gpus", root=SAMPLE))
        assert message == (
            f"{SAMPLE}/resourceclaims/training-gpus/gpus: claim training-gpus has no request "
            "gpus with metadata (its requests: gpu); `dra-metadata ls` lists everything mounted"
        )
        message = self.message(lambda: read_template_metadata("accelerator", "x/y", root=SAMPLE))
        assert "the claim with pod claim name accelerator has no request x with metadata" in (
            message
        )

    def test_the_request_exists_in_the_other_kind(self, tmp_path: Path) -> None:
        put(tmp_path / "resourceclaims" / "c" / "gpu", "a-metadata.json", stream(wire_object()))
        (tmp_path / "resourceclaimtemplates" / "c" / "nic").mkdir(parents=True)
        message = self.message(lambda: read_template_metadata("c", "gpu", root=tmp_path))
        assert (
            "the claim with pod claim name c has no request gpu with metadata (its requests: "
            "nic); claim c has: use read_claim_metadata" in message
        )

    def test_the_driver_is_wrong(self) -> None:
        path = SAMPLE / "resourceclaims" / "training-gpus" / "gpu" / "x.example.com-metadata.json"
        message = self.message(
            lambda: read_claim_metadata("training-gpus", "gpu", driver="x.example.com", root=SAMPLE)
        )
        assert message == (
            f"{path}: driver x.example.com has no metadata file in {path.parent}; drivers with "
            "a file: gpu.example.com, rdma.example.com (leave out driver= to read them all)"
        )


def pin(path: Path, link: Path) -> int:
    """Open ``path`` and make ``link`` a name of the open file: as a bind mount pins an inode."""
    descriptor = os.open(path, os.O_RDONLY)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(f"/proc/self/fd/{descriptor}")
    return descriptor


_opened: list[str] | None = None
"""The paths os.open is given while ``opened_paths`` counts (an audit hook, set up once)."""


def _note_open(event: str, arguments: tuple[object, ...]) -> None:
    if _opened is not None and event == "open":
        _opened.append(str(arguments[0]))


sys.addaudithook(_note_open)


@contextlib.contextmanager
def opened_paths() -> Iterator[list[str]]:
    """The paths opened in the block, as the ``open`` audit events name them."""
    global _opened  # noqa: PLW0603 - the audit hook's switch
    _opened = opened = []
    try:
        yield opened
    finally:
        _opened = None


class TestStaleViews:
    @pytest.mark.parametrize("frozen", [False, True], ids=["fresh", "frozen"])
    def test_a_file_is_opened_once_per_read(self, tmp_path: Path, frozen: bool) -> None:
        """Only a file that was replaced while it was opened is read again; a fresh file and a
        frozen view are each read once."""
        host = tmp_path / "host.json"
        write_metadata_file(host, tree_metadata(1))
        path = tmp_path / "root" / "a.example.com-metadata.json"
        descriptor = pin(host, path)
        try:
            if frozen:
                write_metadata_file(host, tree_metadata(2), mode="atomic")
            with opened_paths() as opened:
                (source,) = read_metadata_file(path).sources
            assert (source.stale, source.generation) == (frozen, 1)
            # Files of the test only: a frozen view's warning may import its logger's module.
            assert [name for name in opened if name.startswith(str(tmp_path))] == [str(path)]
        finally:
            os.close(descriptor)

    def test_a_replaced_file_is_marked_and_warned_about_once(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        host = tmp_path / "host" / "metadata.json"
        root = tmp_path / "root"
        write_metadata_file(host, tree_metadata(1), mode="atomic")
        fresh = resource_claim_request_dir("c", "gpu", root=root) / "b.example.com-metadata.json"
        write_metadata_file(fresh, tree_metadata(1, "b.example.com"))
        descriptor = pin(host, fresh.parent / "a.example.com-metadata.json")
        try:
            metadata = read_claim_metadata("c", "gpu", root=root)
            assert [source.stale for source in metadata.sources] == [False, False]
            assert not caplog.records
            write_metadata_file(host, tree_metadata(2), mode="atomic")  # rename over it
            for _ in range(3):
                metadata = read_claim_metadata("c", "gpu", root=root)
                assert [source.stale for source in metadata.sources] == [True, False]
                assert metadata.sources[0].generation == 1  # the frozen view
            (record,) = caplog.records
            assert (record.name, record.levelname) == ("dra_metadata", "WARNING")
            pinned = fresh.parent / "a.example.com-metadata.json"
            assert record.getMessage() == (
                f"{pinned}: stale view: the driver replaced this file on the host and this "
                "container still sees the old one (generation 1); restart the container to see "
                "the new one"
            )
            single = read_metadata_file(pinned)
            assert single.sources[0].stale
            assert len(caplog.records) == 1  # once per file, whichever reader
        finally:
            os.close(descriptor)

    def test_a_file_replaced_while_it_is_read_is_not_stale(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A read that opens the file just before a rename over it holds a file with no link
        left, as a frozen view does; but the path already names the new file, which is read."""
        path = tmp_path / "a.example.com-metadata.json"
        write_metadata_file(path, tree_metadata(1))
        with replaced_without_pause(path):
            sources = [read_metadata_file(path).sources[0] for _ in range(10_000)]
        assert [source for source in sources if source.stale] == []
        assert not caplog.records

    def test_an_in_place_rewrite_is_not_stale(self, tmp_path: Path) -> None:
        host = tmp_path / "metadata.json"
        write_metadata_file(host, tree_metadata(1), mode="in-place")
        descriptor = pin(host, tmp_path / "root" / "a-metadata.json")
        try:
            write_metadata_file(host, tree_metadata(2), mode="in-place")
            (source,) = read_metadata_file(tmp_path / "root" / "a-metadata.json").sources
            assert (source.stale, source.generation) == (False, 2)
        finally:
            os.close(descriptor)


def tree_metadata(generation: int, driver: str = "a.example.com") -> DeviceMetadata:
    return DeviceMetadata(
        metadata=ObjectMeta(name="c", namespace="default", uid="u", generation=generation),
        requests=[DeviceMetadataRequest(name="gpu", devices=[Device(driver, "p", "d0")])],
    )


BIND_MOUNT_READER = """
import logging, sys
import dra_metadata
logging.basicConfig(format="%(levelname)s %(message)s")
for _ in range(2):
    metadata = dra_metadata.read_claim_metadata("c", "gpu", root=sys.argv[1])
    print([(s.driver, s.generation, s.stale) for s in metadata.sources], flush=True)
"""


@pytest.mark.skipif(can_unshare() is not None, reason=str(can_unshare()))
def test_a_real_single_file_bind_mount_goes_stale(tmp_path: Path) -> None:
    """As in a container: an in-place write is seen, a rename-replace leaves a stale view."""
    host = tmp_path / "host" / "metadata.json"
    write_metadata_file(host, tree_metadata(1), mode="in-place")
    root = tmp_path / "root"
    container = resource_claim_request_dir("c", "gpu", root=root) / "a.example.com-metadata.json"
    container.parent.mkdir(parents=True)
    container.write_bytes(b"")
    script = 'mount --bind "$0" "$1" && "$2" -c "$3" "$4" && "$2" -c "$5" "$0" && "$2" -c "$3" "$4"'
    rewrite = (
        "import sys\n"
        "from dra_metadata import Device, DeviceMetadata, DeviceMetadataRequest, ObjectMeta\n"
        "from dra_metadata.writer import write_metadata_file\n"
        "request = DeviceMetadataRequest('gpu', [Device('a.example.com', 'p', 'a0')])\n"
        "write_metadata_file(sys.argv[1], DeviceMetadata(metadata=ObjectMeta(name='c', "
        "namespace='default', uid='u', generation=2), requests=[request]), mode='atomic')\n"
    )
    result = subprocess.run(
        [
            "unshare", "-m", "--propagation", "private", "sh", "-c", script,
            str(host), str(container), sys.executable, BIND_MOUNT_READER, str(root), rewrite,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "[('a.example.com', 1, False)]",
        "[('a.example.com', 1, False)]",
        "[('a.example.com', 1, True)]",  # the host has generation 2; this view cannot see it
        "[('a.example.com', 1, True)]",
    ]
    (warning,) = result.stderr.splitlines()  # once per file
    assert warning.startswith(f"WARNING {container}: stale view: the driver replaced this file")
    assert container.read_bytes() == b""  # outside the namespace nothing was mounted
