"""The pytest plugin installed with dra-metadata (entry point ``pytest11``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_metadata._reading._paths import ROOT_ENVIRONMENT_VARIABLE
from dra_metadata.testing import MetadataTree


@pytest.fixture
def dra_metadata_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MetadataTree:
    """A MetadataTree on a temporary directory, with DRA_METADATA_ROOT pointing at it.

    Code under test that reads metadata without ``root=`` (as it does in a container) reads
    this tree.
    """
    root = tmp_path / "dra-device-attributes"
    root.mkdir()
    monkeypatch.setenv(ROOT_ENVIRONMENT_VARIABLE, str(root))
    return MetadataTree(root)
