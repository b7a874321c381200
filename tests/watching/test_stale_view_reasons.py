"""What a wait says of a stale view, in this process: the exact words, ready or not.

A view is stale when the path the container sees has no link left (st_nlink 0): the driver
replaced the file on the host and a single-file bind mount still shows the old inode. The
same state, without a mount: the request's file is a symbolic link to ``/proc/self/fd/N``, an
open descriptor of a file that was unlinked, whose status the watcher reads through the link.
The bind mount itself is tested in test_stale_view_waits.py (root and ``unshare -m``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import Device, StaleMetadataError
from dra_metadata.testing import MetadataTree

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").is_dir() or not sys.platform.startswith("linux"),
    reason="/proc/self/fd is Linux's",
)


@pytest.fixture
def stale(tmp_path: Path) -> Iterator[Path]:
    """The request's file: a view of an inode with no link left."""
    path = MetadataTree(tmp_path).add_claim("c", "gpu", "gpu.example.com", [Device(name="gpu-0")])
    held = tmp_path / "replaced-on-the-host.json"
    path.rename(held)
    descriptor = os.open(held, os.O_RDONLY)
    try:
        held.unlink()
        path.symlink_to(f"/proc/self/fd/{descriptor}")
        assert path.stat().st_nlink == 0
        yield path
    finally:
        os.close(descriptor)


def _said(path: Path, seen: str) -> str:
    return (
        f"the driver replaced {path} on the host and this container keeps seeing the old file "
        f"({seen}); restart the container to see the new one"
    )


def test_a_stale_view_that_is_not_ready_says_why(stale: Path, tmp_path: Path) -> None:
    with pytest.raises(StaleMetadataError) as info:
        dra_metadata.wait_for_network_data("c", "gpu", root=tmp_path, timeout=30)
    reason = "generation 1, device gpu-0 has no networkData"
    assert str(info.value) == f"{stale}: {_said(stale, reason)}"
    assert info.value.reason == reason
    assert info.value.path == stale
    assert info.value.metadata is not None
    assert info.value.metadata.generation == 1


def test_a_stale_view_in_which_the_condition_holds_is_not_returned(
    stale: Path, tmp_path: Path
) -> None:
    with pytest.raises(StaleMetadataError) as info:
        dra_metadata.wait_until(lambda _: True, "c", "gpu", root=tmp_path, timeout=30)
    assert str(info.value) == f"{stale}: {_said(stale, 'in which the condition holds')}"
    assert info.value.reason is None
    assert info.value.path == stale
    assert info.value.metadata is not None
