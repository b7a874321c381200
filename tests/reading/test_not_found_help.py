"""What a reader says when metadata is not there, and which requests it returns.

Every sentence of MetadataNotFoundError is checked whole: which usual mistake it is, what exists
instead (names byte-wise sorted, at most ten), and what to do next, in the Python API's words and
in the command's (which sets the wording the command's users read). Real trees under tmp_path.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dra_metadata import (
    CONTAINER_DIR,
    DeviceMetadata,
    MetadataNotFoundError,
    MetadataReadError,
    list_claims,
    read_claim_metadata,
    read_metadata_file,
    read_template_metadata,
)
from dra_metadata._reading._missing import WORDING

from helpers import V1ALPHA1, stream, wire_object

LS = "`dra-metadata ls` lists everything mounted"


def put(path: Path, data: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def metadata_object(*requests: str) -> bytes:
    return stream(
        wire_object(
            requests=[
                {"name": name, "devices": [{"driver": "d", "pool": "p", "name": f"{name}-0"}]}
                for name in requests
            ]
        )
    )


def not_found(call: Callable[[], object]) -> MetadataNotFoundError:
    with pytest.raises(MetadataNotFoundError) as info:
        call()
    error = info.value
    assert isinstance(error, FileNotFoundError)
    assert error.errno == errno.ENOENT
    return error


@pytest.fixture
def command_wording() -> Iterator[None]:
    """The words of the `dra-metadata` command, which sets them for everything it calls."""
    token = WORDING.set("command")
    yield
    WORDING.reset(token)


class TestRoot:
    def sentence(self, root: Path, origin: str, elsewhere: str = "pass root= or set") -> str:
        return (
            f"the metadata root {root} (from {origin}) does not exist: no DRA device metadata "
            "is mounted here (no claim of this container has a driver that publishes it); to "
            f"read a tree elsewhere, {elsewhere} DRA_METADATA_ROOT"
        )

    def test_given(self, tmp_path: Path) -> None:
        root = tmp_path / "absent"
        error = not_found(lambda: read_template_metadata("c", "r", root=root))
        assert error.path == root / "resourceclaimtemplates" / "c" / "r"
        assert str(error) == f"{error.path}: {self.sentence(root, 'root=')}"

    def test_from_the_environment(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        root = tmp_path / "absent"
        monkeypatch.setenv("DRA_METADATA_ROOT", str(root))
        error = not_found(lambda: read_claim_metadata("c", "r", driver="d"))
        assert error.path == root / "resourceclaims" / "c" / "r" / "d-metadata.json"
        assert str(error) == f"{error.path}: {self.sentence(root, '$DRA_METADATA_ROOT')}"

    @pytest.mark.parametrize("value", [None, ""])
    def test_the_container_default(
        self, monkeypatch: pytest.MonkeyPatch, value: str | None
    ) -> None:
        if Path(CONTAINER_DIR).exists():
            pytest.skip(f"{CONTAINER_DIR} exists on this machine")
        if value is None:
            monkeypatch.delenv("DRA_METADATA_ROOT", raising=False)
        else:
            monkeypatch.setenv("DRA_METADATA_ROOT", value)  # empty: not set
        error = not_found(lambda: read_claim_metadata("c", "r"))
        root = Path(CONTAINER_DIR)
        assert error.path == root / "resourceclaims" / "c" / "r"
        assert str(error) == f"{error.path}: {self.sentence(root, 'the container default')}"

    @pytest.mark.usefixtures("command_wording")
    def test_in_the_command_s_words(self, tmp_path: Path) -> None:
        root = tmp_path / "absent"
        error = not_found(lambda: read_claim_metadata("c", "r", root=root))
        expected = self.sentence(root, "--root", "pass --root DIR or set")
        assert str(error) == f"{error.path}: {expected}"

    def test_a_root_that_is_a_file(self, tmp_path: Path) -> None:
        root = put(tmp_path / "root")
        with pytest.raises(MetadataReadError) as info:
            list_claims(root=root)
        assert info.value.errno == errno.ENOTDIR
        assert str(info.value) == (
            f"{root}: the metadata root {root} (from root=) is not a directory"
        )

    def test_a_root_that_is_missing_for_list_claims(self, tmp_path: Path) -> None:
        root = tmp_path / "absent"
        error = not_found(lambda: list_claims(root=root))
        assert str(error) == f"{root}: {self.sentence(root, 'root=')}"


class TestClaim:
    def test_read_as_a_named_claim_but_made_from_a_template(self, tmp_path: Path) -> None:
        (tmp_path / "resourceclaimtemplates" / "acc").mkdir(parents=True)
        error = not_found(lambda: read_claim_metadata("acc", "gpu", root=tmp_path))
        assert str(error) == (
            f"{tmp_path}/resourceclaims/acc/gpu: no claim acc referenced by name has metadata, "
            "but acc is the pod claim name of a claim made from a template: use "
            "read_template_metadata"
        )

    def test_read_as_a_template_claim_but_referenced_by_name(self, tmp_path: Path) -> None:
        (tmp_path / "resourceclaims" / "net").mkdir(parents=True)
        error = not_found(lambda: read_template_metadata("net", "vf", root=tmp_path))
        assert str(error) == (
            f"{tmp_path}/resourceclaimtemplates/net/vf: no claim made from a template has the "
            "pod claim name net, but claim net is referenced by name: use read_claim_metadata"
        )

    @pytest.mark.usefixtures("command_wording")
    def test_the_other_kind_in_the_command_s_words(self, tmp_path: Path) -> None:
        (tmp_path / "resourceclaimtemplates" / "acc").mkdir(parents=True)
        (tmp_path / "resourceclaims" / "net").mkdir(parents=True)
        error = not_found(lambda: read_claim_metadata("acc", "gpu", root=tmp_path))
        assert str(error).endswith("claim made from a template: add --template")
        error = not_found(lambda: read_template_metadata("net", "vf", root=tmp_path))
        assert str(error).endswith("claim net is referenced by name: leave out --template")

    def test_no_claim_at_all(self, tmp_path: Path) -> None:
        put(tmp_path / "resourceclaims" / "a-file")  # not a claim
        error = not_found(lambda: read_claim_metadata("c", "r", root=tmp_path))
        assert str(error) == (
            f"{tmp_path}/resourceclaims/c/r: no claim c referenced by name has metadata (no "
            f"claim has device metadata under {tmp_path}); {LS}"
        )

    def test_the_claims_there_are(self, tmp_path: Path) -> None:
        for name in ("b", "a", "B", "é", *(f"n{index:02d}" for index in range(9))):
            (tmp_path / "resourceclaims" / name).mkdir(parents=True)
        (tmp_path / "resourceclaimtemplates" / "t").mkdir(parents=True)
        error = not_found(lambda: read_template_metadata("x", "r", root=tmp_path))
        assert str(error) == (
            f"{tmp_path}/resourceclaimtemplates/x/r: no claim made from a template has the pod "
            "claim name x (claims referenced by name: B, a, b, n00, n01, n02, n03, n04, n05, "
            "n06, and 3 more; claims made from templates (pod claim names): t); " + LS
        )

    def test_only_template_claims(self, tmp_path: Path) -> None:
        (tmp_path / "resourceclaimtemplates" / "t").mkdir(parents=True)
        error = not_found(lambda: read_claim_metadata("x", "r", root=tmp_path))
        assert str(error).endswith(
            "no claim x referenced by name has metadata (claims made from templates (pod claim "
            f"names): t); {LS}"
        )


class TestRequest:
    def test_the_requests_there_are(self, tmp_path: Path) -> None:
        claim = tmp_path / "resourceclaims" / "c"
        for name in ("nic", "gpu"):
            (claim / name).mkdir(parents=True)
        put(claim / "not-a-request")
        error = not_found(lambda: read_claim_metadata("c", "tpu/fast", root=tmp_path))
        assert error.path == claim / "tpu"
        assert str(error) == (
            f"{claim}/tpu: claim c has no request tpu with metadata (its requests: gpu, nic); " + LS
        )

    def test_a_claim_without_requests(self, tmp_path: Path) -> None:
        (tmp_path / "resourceclaimtemplates" / "c").mkdir(parents=True)
        error = not_found(lambda: read_template_metadata("c", "gpu", root=tmp_path))
        assert str(error) == (
            f"{tmp_path}/resourceclaimtemplates/c/gpu: the claim with pod claim name c has no "
            f"request gpu with metadata (it has no request); {LS}"
        )

    def test_the_request_is_in_the_other_kind_of_claim(self, tmp_path: Path) -> None:
        (tmp_path / "resourceclaims" / "c" / "nic").mkdir(parents=True)
        (tmp_path / "resourceclaimtemplates" / "c" / "gpu").mkdir(parents=True)
        error = not_found(lambda: read_claim_metadata("c", "gpu", root=tmp_path))
        assert str(error) == (
            f"{tmp_path}/resourceclaims/c/gpu: claim c has no request gpu with metadata (its "
            "requests: nic); the claim with pod claim name c has: use read_template_metadata; " + LS
        )


class TestRequestDirectory:
    def test_no_metadata_file(self, tmp_path: Path) -> None:
        directory = tmp_path / "resourceclaims" / "c" / "gpu"
        put(directory / "notes.txt")
        put(directory / "a-metadata.json.tmp")
        for driver in (None, "d"):
            error = not_found(
                lambda driver=driver: read_claim_metadata("c", "gpu", driver=driver, root=tmp_path)
            )
            where = directory if driver is None else directory / "d-metadata.json"
            assert error.path == where
            assert str(error) == (
                f"{where}: no *-metadata.json file in {directory} (it holds: "
                "a-metadata.json.tmp, notes.txt): is the claim allocated to this container, "
                "and does its driver publish device metadata?"
            )

    def test_an_empty_request_directory(self, tmp_path: Path) -> None:
        directory = tmp_path / "resourceclaims" / "c" / "gpu"
        directory.mkdir(parents=True)
        error = not_found(lambda: read_claim_metadata("c", "gpu", root=tmp_path))
        assert str(error) == (
            f"{directory}: no *-metadata.json file in {directory} (it is empty): is the claim "
            "allocated to this container, and does its driver publish device metadata?"
        )

    @pytest.mark.parametrize("wording", ["python", "command"])
    def test_another_driver_s_file(self, tmp_path: Path, wording: str) -> None:
        directory = tmp_path / "resourceclaimtemplates" / "c" / "gpu"
        for driver in ("b.example.com", "a.example.com"):
            put(directory / f"{driver}-metadata.json", metadata_object("gpu"))
        token = WORDING.set(wording)  # type: ignore[arg-type]
        try:
            error = not_found(lambda: read_template_metadata("c", "gpu", driver="x", root=tmp_path))
        finally:
            WORDING.reset(token)
        leave_out = "driver=" if wording == "python" else "--driver"
        assert str(error) == (
            f"{directory}/x-metadata.json: driver x has no metadata file in {directory}; "
            f"drivers with a file: a.example.com, b.example.com (leave out {leave_out} to read "
            "them all)"
        )

    def test_a_file_that_is_listed_but_cannot_be_opened(self, tmp_path: Path) -> None:
        # A dangling symlink is listed, as a file removed between listing and reading would be.
        directory = tmp_path / "resourceclaims" / "c" / "gpu"
        directory.mkdir(parents=True)
        (directory / "d-metadata.json").symlink_to(tmp_path / "gone")
        error = not_found(lambda: read_claim_metadata("c", "gpu", driver="d", root=tmp_path))
        assert str(error) == (
            f"{directory}/d-metadata.json: the metadata file was removed while it was being "
            "read; read it again"
        )
        error = not_found(lambda: read_claim_metadata("c", "gpu", root=tmp_path))
        assert error.path == directory / "d-metadata.json"
        assert str(error) == (
            f"{directory}/d-metadata.json: open metadata file: d-metadata.json does not exist; "
            f"its directory {directory} holds: d-metadata.json"
        )


class TestMetadataFile:
    def test_its_directory_is_missing(self, tmp_path: Path) -> None:
        path = tmp_path / "absent" / "a-metadata.json"
        error = not_found(lambda: read_metadata_file(path))
        assert str(error) == (
            f"{path}: open metadata file: a-metadata.json does not exist, and neither does its "
            f"directory {path.parent}"
        )

    def test_its_directory_holds_other_files(self, tmp_path: Path) -> None:
        for index in range(12):
            put(tmp_path / f"f{index:02d}")
        path = tmp_path / "a-metadata.json"
        error = not_found(lambda: read_metadata_file(path))
        assert str(error) == (
            f"{path}: open metadata file: a-metadata.json does not exist; its directory "
            f"{tmp_path} holds: f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, and 2 more"
        )

    def test_its_directory_is_empty(self, tmp_path: Path) -> None:
        path = tmp_path / "a-metadata.json"
        error = not_found(lambda: read_metadata_file(path))
        assert str(error).endswith(f"its directory {tmp_path} holds: nothing")


class TestSubrequests:
    """A subrequest name returns that subrequest, or says which one was allocated."""

    def read(self, tmp_path: Path, request: str, *names: str) -> DeviceMetadata:
        path = tmp_path / "resourceclaims" / "c" / "gpu" / "d-metadata.json"
        put(path, metadata_object(*names))
        return read_claim_metadata("c", request, root=tmp_path)

    def test_several_subrequests_allocated_none_of_them_asked_for(self, tmp_path: Path) -> None:
        error = not_found(lambda: self.read(tmp_path, "gpu/c", "gpu/a", "gpu/b", "gpu/a"))
        assert str(error) == (
            f"{tmp_path}/resourceclaims/c/gpu: request gpu was allocated as gpu/a and gpu/b, not "
            "as gpu/c (the scheduler chose another subrequest of its prioritized list); read it "
            "as gpu"
        )

    def test_one_subrequest_allocated_another_asked_for(self, tmp_path: Path) -> None:
        error = not_found(lambda: self.read(tmp_path, "gpu/c", "gpu/a", "nic"))
        assert str(error).endswith(
            "request gpu was allocated as gpu/a, not as gpu/c (the scheduler chose another "
            "subrequest of its prioritized list); read it as gpu or gpu/a"
        )

    def test_a_plain_request(self, tmp_path: Path) -> None:
        error = not_found(lambda: self.read(tmp_path, "gpu/c", "gpu"))
        assert str(error).endswith(
            "request gpu has no subrequest gpu/c: it was allocated as a plain request, read it "
            "as gpu"
        )

    def test_other_requests_only(self, tmp_path: Path) -> None:
        names = [f"r{index:02d}" for index in range(11)]
        error = not_found(lambda: self.read(tmp_path, "gpu/c", *names))
        assert str(error).endswith(
            "the metadata files hold no request gpu, only: r00, r01, r02, r03, r04, r05, r06, "
            "r07, r08, r09, and 1 more"
        )

    def test_the_one_asked_for_among_others(self, tmp_path: Path) -> None:
        metadata = self.read(tmp_path, "gpu/b", "gpu/a", "gpu/b", "nic")
        assert [request.name for request in metadata.requests] == ["gpu/b"]
        assert metadata.api_version == V1ALPHA1

    def test_every_request_is_the_one_asked_for(self, tmp_path: Path) -> None:
        metadata = self.read(tmp_path, "gpu/b", "gpu/b", "gpu/b")
        assert [request.name for request in metadata.requests] == ["gpu/b", "gpu/b"]


def test_names_are_sorted_byte_wise(tmp_path: Path) -> None:
    # A name that is not UTF-8 (U+DCFF for the byte ff, as os.fsdecode makes it) sorts after
    # U+E000 as bytes, before it as code points.
    claims = tmp_path / "resourceclaims"
    claims.mkdir()
    for name in (b"\xff", "\ue000".encode(), b"z"):
        (claims / os.fsdecode(name)).mkdir()
    error = not_found(lambda: read_claim_metadata("c", "r", root=tmp_path))
    assert "(claims referenced by name: z, \ue000, \udcff); " in str(error)


def test_ten_names_are_all_shown(tmp_path: Path) -> None:
    names = [f"r{index}" for index in range(10)]
    for name in names:
        (tmp_path / "resourceclaims" / "c" / name).mkdir(parents=True)
    error = not_found(lambda: read_claim_metadata("c", "x", root=tmp_path))
    assert f"(its requests: {', '.join(names)}); " in str(error)


def test_why_a_root_cannot_hold_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dra_metadata._reading._missing import describe_missing_root  # noqa: PLC0415 - the command's

    assert describe_missing_root(tmp_path) is None
    monkeypatch.setenv("DRA_METADATA_ROOT", str(tmp_path))
    assert describe_missing_root(None) is None
    absent = tmp_path / "absent"
    monkeypatch.setenv("DRA_METADATA_ROOT", str(absent))
    assert describe_missing_root(None) == (
        f"the metadata root {absent} (from $DRA_METADATA_ROOT) does not exist: no DRA device "
        "metadata is mounted here (no claim of this container has a driver that publishes "
        "it); to read a tree elsewhere, pass root= or set DRA_METADATA_ROOT"
    )
    error = not_found(list_claims)
    assert str(error) == f"{absent}: {describe_missing_root(None)}"


def test_why_a_root_that_is_no_directory_cannot_hold_metadata(tmp_path: Path) -> None:
    from dra_metadata._reading._missing import describe_missing_root  # noqa: PLC0415 - the command's

    regular = tmp_path / "file"
    regular.write_text("x")
    assert describe_missing_root(regular) == (
        f"the metadata root {regular} (from root=) is not a directory"
    )
    too_long = tmp_path / ("x" * 300)
    assert describe_missing_root(too_long) == (
        f"the metadata root {too_long} (from root=) cannot be looked at: File name too long"
    )
    with_nul = f"{tmp_path}/a\0b"
    with pytest.raises(ValueError, match="null") as python_says:  # its words vary by version
        Path(with_nul).stat()
    assert describe_missing_root(with_nul) == (
        f"the metadata root {with_nul} (from root=) cannot be looked at: {python_says.value}"
    )
