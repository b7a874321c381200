"""The version `--version` and `dra_metadata.__version__` report, read without importlib.metadata."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata._version import installed_version


def test_the_version_is_what_importlib_metadata_says() -> None:
    assert installed_version() == importlib.metadata.version("dra-metadata")
    assert dra_metadata.__version__ == importlib.metadata.version("dra-metadata")


def test_the_first_distribution_on_the_path_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As importlib.metadata finds it: in sys.path order, the folder's name matched loosely.
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, name, version in (
        (first, "DRA_Metadata-9.8.7.dist-info", "9.8.7"),
        (second, "dra_metadata-1.0.0.dist-info", "1.0.0"),
    ):
        (folder / name).mkdir(parents=True)
        (folder / name / "METADATA").write_text(
            f"Metadata-Version: 2.4\nName: dra-metadata\nVersion: {version}\n\nVersion: 0\n"
        )
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(first), str(second)])
    assert installed_version() == importlib.metadata.version("dra-metadata") == "9.8.7"


def test_not_installed_is_importlib_metadata_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        installed_version()
