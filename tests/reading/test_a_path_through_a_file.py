"""A root (or a claim directory) that is a regular file: the error names that component.

Readers, watches and waits alike raise MetadataReadError (errno ENOTDIR) saying which
component of the path is a file where a directory is expected, not merely that the request
path is not one: it will not become a directory by waiting.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import Device, MetadataReadError
from dra_metadata.testing import MetadataTree


def calls(root: Path) -> dict[str, Callable[[], Any]]:
    return {
        "read_claim_metadata": lambda: dra_metadata.read_claim_metadata(
            "training-gpus", "gpu", root=root
        ),
        "read_claim_metadata driver": lambda: dra_metadata.read_claim_metadata(
            "training-gpus", "gpu", driver="gpu.example.com", root=root
        ),
        "read_template_metadata": lambda: dra_metadata.read_template_metadata(
            "accelerator", "gpu", root=root
        ),
        "wait_for_network_data": lambda: dra_metadata.wait_for_network_data(
            "training-gpus", "gpu", root=root, timeout=60
        ),
        "wait_for driver": lambda: dra_metadata.wait_for(
            lambda _: True, "training-gpus", "gpu", driver="gpu.example.com", root=root, timeout=60
        ),
        "watch_claim_metadata": lambda: next(
            dra_metadata.watch_claim_metadata("training-gpus", "gpu", root=root, timeout=60)
        ),
    }


def check(root: Path, culprit: Path) -> None:
    for name, call in calls(root).items():
        with pytest.raises(MetadataReadError) as info:
            call()
        assert info.value.errno == errno.ENOTDIR, name
        assert str(info.value).endswith(f": {culprit} is not a directory"), (name, info.value)


def test_a_root_that_is_a_regular_file(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path / "tree")
    root = tree.add_claim("fast-net", "vf", "sriov.example.com", [Device(name="vf-0")])
    check(root, root)


def test_a_claim_directory_that_is_a_regular_file(tmp_path: Path) -> None:
    claims = tmp_path / "resourceclaims"
    claims.mkdir()
    (claims / "training-gpus").write_bytes(b"{}")
    templates = tmp_path / "resourceclaimtemplates"
    templates.mkdir()
    (templates / "accelerator").write_bytes(b"{}")
    for name, call in calls(tmp_path).items():
        culprit = templates / "accelerator" if "template" in name else claims / "training-gpus"
        with pytest.raises(MetadataReadError) as info:
            call()
        assert info.value.errno == errno.ENOTDIR, name
        assert str(info.value).endswith(f": {culprit} is not a directory"), (name, info.value)


def test_a_file_path_through_a_regular_file(tmp_path: Path) -> None:
    regular = tmp_path / "regular"
    regular.write_bytes(b"{}")
    with pytest.raises(MetadataReadError) as info:
        dra_metadata.read_metadata_file(regular / "x" / "gpu.example.com-metadata.json")
    assert info.value.errno == errno.ENOTDIR
    assert str(info.value) == (
        f"{regular / 'x' / 'gpu.example.com-metadata.json'}: open metadata file: {regular} is "
        "not a directory"
    )
