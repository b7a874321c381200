"""list_claims and list_devices: what is mounted, on the sample tree and on trees written here."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import (
    Device,
    MetadataConflictError,
    MetadataDecodeError,
    MetadataNotFoundError,
    MetadataReadError,
    MountedClaim,
    list_claims,
    list_devices,
)
from dra_metadata.testing import MetadataTree

from helpers import REPO, unprivileged

SAMPLE = REPO / "examples" / "tree"
COMMAND = str(Path(sys.executable).parent / "dra-metadata")


def test_sample_tree_claims() -> None:
    claims = list_claims(root=SAMPLE)
    assert [(c.kind, c.claim_name, c.request_name, c.drivers) for c in claims] == [
        ("claim", "fast-net", "vf", ("sriov.example.com",)),
        ("claim", "training-gpus", "gpu", ("gpu.example.com", "rdma.example.com")),
        ("template", "accelerator", "gpu", ("gpu.example.com",)),
    ]
    training = claims[1]
    assert training.root == SAMPLE
    assert training.directory == SAMPLE / "resourceclaims" / "training-gpus" / "gpu"
    assert training.paths == (
        training.directory / "gpu.example.com-metadata.json",
        training.directory / "rdma.example.com-metadata.json",
    )
    assert not training.template
    assert claims[2].template
    with pytest.raises(FrozenInstanceError):
        training.claim_name = "x"  # type: ignore[misc]


def test_read_gives_what_the_readers_give() -> None:
    for claim in list_claims(root=SAMPLE):
        reader = (
            dra_metadata.read_template_metadata
            if claim.template
            else dra_metadata.read_claim_metadata
        )
        expected = reader(claim.claim_name, claim.request_name, root=SAMPLE)
        read = claim.read()
        assert read == expected
        assert read.sources == expected.sources
        for driver, path in zip(claim.drivers, claim.paths, strict=True):
            one = claim.read(driver=driver, validate="strict")
            assert one == dra_metadata.read_metadata_file(path)
            assert one.sources[0].path == path


def test_the_default_root_is_the_readers_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRA_METADATA_ROOT", str(SAMPLE))
    assert list_claims() == list_claims(root=SAMPLE)
    assert list_claims(root=str(SAMPLE)) == list_claims(root=SAMPLE)


def test_ls_json_can_be_built_from_the_entries() -> None:
    """Every field of `ls -o json` (README) comes from an entry and a read of its file."""
    shown = json.loads(
        subprocess.run(
            [COMMAND, "--root", str(SAMPLE), "ls", "-o", "json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    built = []
    for claim in list_claims(root=SAMPLE):
        for driver, path in zip(claim.drivers, claim.paths, strict=True):
            metadata = claim.read(driver=driver)
            built.append(
                {
                    "kind": claim.kind,
                    "claim": claim.claim_name,
                    "request": claim.request_name,
                    "driver": driver,
                    "path": str(path),
                    "generation": metadata.generation,
                    "apiVersion": metadata.api_version,
                    "stale": metadata.sources[0].stale,
                    "status": "ok",
                    "error": None,
                }
            )
    assert built == shown


def test_a_pod_with_a_training_and_an_inference_claim(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path, namespace="ml")
    tree.add_claim(
        "training", "gpu", "gpu.example.com", [Device(name="gpu-0", attributes={"uuid": "G0"})]
    )
    tree.add_claim("training", "gpu", "rdma.example.com", ["mlx-0"], generation=3)
    tree.add_claim("training", "nic", "sriov.example.com", ["vf-0"])
    tree.add_template_claim(
        "inference",
        "gpu/high-memory",
        "gpu.example.com",
        [Device(name="gpu-1", attributes={"uuid": "G1"}), "gpu-2"],
    )
    mounted = list_devices(root=tmp_path)
    assert [
        (
            m.claim.kind,
            m.claim.claim_name,
            m.claim.request_name,
            m.request_name,
            m.device.driver,
            m.device.name,
            m.source.generation,
        )
        for m in mounted
    ] == [
        ("claim", "training", "gpu", "gpu", "gpu.example.com", "gpu-0", 1),
        ("claim", "training", "gpu", "gpu", "rdma.example.com", "mlx-0", 3),
        ("claim", "training", "nic", "nic", "sriov.example.com", "vf-0", 1),
        ("template", "inference", "gpu", "gpu/high-memory", "gpu.example.com", "gpu-1", 1),
        ("template", "inference", "gpu", "gpu/high-memory", "gpu.example.com", "gpu-2", 1),
    ]
    assert [
        m.device.attribute("uuid") for m in mounted if m.device.driver == "gpu.example.com"
    ] == [
        "G0",
        "G1",
        None,
    ]
    assert mounted[1].source.path == tree.path("training", "gpu", "rdma.example.com")
    assert mounted[3].source.metadata.pod_claim_name == "inference"
    assert mounted[3].source.metadata.namespace == "ml"
    assert mounted[0].claim is mounted[1].claim


def test_sample_tree_devices() -> None:
    mounted = list_devices(root=SAMPLE)
    assert len(mounted) == sum(len(claim.read().devices) for claim in list_claims(root=SAMPLE))
    assert {m.request_name for m in mounted} == {"vf", "gpu", "gpu/high-memory"}


def test_what_is_not_a_claim_is_left_out(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path)
    tree.add_claim("c", "r", "d.example.com", ["dev"])
    (tmp_path / "resourceclaims" / "stray-file").write_text("")
    (tmp_path / "resourceclaims" / "c" / "stray-file").write_text("")
    (tmp_path / "resourceclaims" / "empty" / "r").mkdir(parents=True)
    (tmp_path / "resourceclaims" / "c" / "no-files").mkdir()
    (tmp_path / "resourceclaims" / "c" / "r" / "notes.txt").write_text("")
    claims = list_claims(root=tmp_path)
    assert [(c.claim_name, c.request_name, c.drivers) for c in claims] == [
        ("c", "r", ("d.example.com",))
    ]


def test_names_are_sorted_byte_wise(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path)
    for claim in ("b", "a-2", "a", "B"):
        tree.add_claim(claim, "r", "d.example.com", ["dev"])
    assert [c.claim_name for c in list_claims(root=tmp_path)] == ["B", "a", "a-2", "b"]


def test_a_root_without_claims_lists_nothing(tmp_path: Path) -> None:
    assert list_claims(root=tmp_path) == []
    assert list_devices(root=tmp_path) == []


def test_a_missing_root_is_an_error_not_an_empty_list(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    with pytest.raises(MetadataNotFoundError, match="does not exist") as caught:
        list_claims(root=missing)
    assert caught.value.path == missing
    assert "DRA_METADATA_ROOT" in str(caught.value)
    with pytest.raises(MetadataNotFoundError):
        list_devices(root=missing)


def test_a_root_that_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(MetadataReadError, match="not a directory"):
        list_claims(root=file)


UNPRIVILEGED_LISTING = """
import json, sys
import dra_metadata
root = sys.argv[1]
try:
    dra_metadata.list_claims(root=root)
except dra_metadata.MetadataReadError as error:
    raised = [str(error.path), error.errno]
skipped = []
claims = dra_metadata.list_claims(root=root, on_error=skipped.append)
print(json.dumps({
    "raised": raised,
    "skipped": [[str(error.path), error.errno, error.message] for error in skipped],
    "listed": [[claim.kind, claim.claim_name, claim.request_name] for claim in claims],
}))
"""


@pytest.fixture
def locked_tree() -> Iterator[Path]:
    """A tree readable by anyone but one claim directory and one request directory, with a
    file that cannot be decoded (in a directory of its own: tmp_path is root's alone)."""
    root = Path(tempfile.mkdtemp(prefix="dra-metadata-listing-"))
    root.chmod(0o755)
    tree = MetadataTree(root)
    tree.add_claim("a", "r", "d.example.com", ["dev"])
    tree.add_claim("b", "locked", "d.example.com", ["dev"]).parent.chmod(0)
    tree.add_claim("b", "open", "d.example.com", ["dev"])
    tree.add_claim("c", "r", "d.example.com", ["dev"]).write_text("{")
    tree.add_claim("sealed", "r", "d.example.com", ["dev"]).parent.parent.chmod(0)
    tree.add_template_claim("t", "r", "d.example.com", ["dev"])
    try:
        yield root
    finally:
        for directory in [root, *root.rglob("*")]:
            if directory.is_dir():
                directory.chmod(0o755)
        shutil.rmtree(root)


def _unprivileged_run(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    options, _ = unprivileged()
    prefix = options.pop("prefix", ())
    return subprocess.run(
        [*prefix, *arguments], capture_output=True, text=True, check=False, cwd="/", **options
    )


def test_an_unreadable_directory_is_raised_or_skipped(locked_tree: Path) -> None:
    result = _unprivileged_run([sys.executable, "-c", UNPRIVILEGED_LISTING, str(locked_tree)])
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    claims = locked_tree / "resourceclaims"
    assert found["raised"] == [str(claims / "b" / "locked"), errno.EACCES]
    assert found["skipped"] == [
        [str(claims / "b" / "locked"), errno.EACCES, "list metadata files: Permission denied"],
        [str(claims / "sealed"), errno.EACCES, "list claims: Permission denied"],
    ]
    assert found["listed"] == [
        ["claim", "a", "r"],
        ["claim", "b", "open"],
        ["claim", "c", "r"],
        ["template", "t", "r"],
    ]


def test_ls_lists_the_others_and_each_error(locked_tree: Path) -> None:
    result = _unprivileged_run([COMMAND, "--root", str(locked_tree), "ls", "-o", "json"])
    assert result.returncode == 6, result.stderr  # some path could not be read
    assert "2 paths could not be read (" in result.stderr
    assert "); check the permissions of them" in result.stderr
    entries = json.loads(result.stdout)
    undecodable = entries[3]["error"]  # the decoder's words: it says where the data ends
    assert isinstance(undecodable, str)
    assert "truncated" in undecodable
    assert [
        (e["kind"], e["claim"], e["request"], e["driver"], e["generation"], e["error"])
        for e in entries
    ] == [
        ("claim", "a", "r", "d.example.com", 1, None),
        ("claim", "b", "locked", None, None, "list metadata files: Permission denied"),
        ("claim", "b", "open", "d.example.com", 1, None),
        ("claim", "c", "r", "d.example.com", None, undecodable),
        ("claim", "sealed", None, None, None, "list claims: Permission denied"),
        ("template", "t", "r", "d.example.com", 1, None),
    ]
    assert entries[1]["path"] == str(locked_tree / "resourceclaims" / "b" / "locked")
    table = _unprivileged_run([COMMAND, "--root", str(locked_tree), "ls", "-o", "table"])
    assert table.returncode == 6, table.stderr
    sealed = locked_tree / "resourceclaims" / "sealed"
    assert (
        f"claim     sealed  -        -              -           error: {sealed}: list claims: "
        "Permission denied" in (table.stdout)
    )


def test_the_root_is_missing_says_what_the_readers_say(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    with pytest.raises(MetadataNotFoundError) as listed:
        list_claims(root=missing)
    with pytest.raises(MetadataNotFoundError) as read:
        dra_metadata.read_claim_metadata("c", "r", root=missing)
    assert listed.value.message == read.value.message
    assert listed.value.message.startswith(
        f"the metadata root {missing} (from root=) does not exist"
    )


def test_list_devices_raises_the_readers_errors(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path)
    tree.add_claim("good", "r", "d.example.com", ["dev"])
    broken = tree.add_claim("later", "r", "d.example.com", ["dev"])
    broken.write_text('{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1beta1"')
    with pytest.raises(MetadataDecodeError) as caught:
        list_devices(root=tmp_path)
    assert caught.value.path == broken
    # list_claims reads nothing: a caller can skip what cannot be read

    def readable(claim: MountedClaim) -> bool:
        try:
            claim.read()
        except MetadataDecodeError:
            return False
        return True

    assert [c.claim_name for c in list_claims(root=tmp_path) if readable(c)] == ["good"]


def test_list_devices_validates_when_asked(tmp_path: Path) -> None:
    MetadataTree(tmp_path).add_claim(
        "c", "r", "d.example.com", [Device(name="Not_A_Label", attributes={"a": 1})]
    )
    assert len(list_devices(root=tmp_path)) == 1
    with pytest.raises(dra_metadata.MetadataValidationError):
        list_devices(root=tmp_path, validate=True)


def test_conflicting_files_of_one_request(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path)
    tree.add_claim("c", "r", "a.example.com", ["dev"])
    tree.add_claim("c", "r", "b.example.com", ["dev"], uid="another-uid")
    assert len(list_claims(root=tmp_path)) == 1
    # As Go's merge: the read succeeds and each device keeps its own file's identity ...
    devices = list_devices(root=tmp_path)
    assert [mounted.source.driver for mounted in devices] == ["a.example.com", "b.example.com"]
    assert devices[1].source.metadata.uid == "another-uid"
    assert devices[0].source.metadata.uid != "another-uid"
    # ... and a validating read reports the disagreement.
    with pytest.raises(MetadataConflictError):
        list_devices(root=tmp_path, validate=True)


def test_entries_are_public_and_typed() -> None:
    assert MountedClaim.__module__ == "dra_metadata"
    assert dra_metadata.MountedDevice.__module__ == "dra_metadata"
    claim = list_claims(root=SAMPLE)[0]
    assert repr(claim).startswith("MountedClaim(kind='claim', claim_name='fast-net'")
    assert os.fspath(claim.paths[0]).endswith("sriov.example.com-metadata.json")
