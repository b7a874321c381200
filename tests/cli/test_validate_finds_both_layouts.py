"""``validate`` on a driver's plugin directory finds the files it wrote on the node
(``dra-device-metadata/<namespace>_<claim>/<request>/metadata.json``, where the writer's
host_metadata_file_path puts them), as well as the container's ``<driver>-metadata.json``
files, and says which layout it found: in the table, and per file in the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata.writer import host_metadata_file_path, write_metadata_file

from helpers import SAMPLE
from helpers import run_command as run

HOST_SHAPE = (
    "a driver's host-side layout (dra-device-metadata/<namespace>_<claim>/<request>/metadata.json)"
)
CONTAINER_SHAPE = (
    "the container's layout (resourceclaims or resourceclaimtemplates/<claim>/<request>/"
    "<driver>-metadata.json)"
)


@pytest.fixture
def plugin(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A kubelet plugin data directory with two requests' files, and a file of another name."""
    directory = tmp_path / "plugins" / "sriov.example.com"
    metadata = dra_metadata.read_claim_metadata("fast-net", "vf", root=SAMPLE)
    files = [
        host_metadata_file_path(directory, "ml", "fast-net", "vf"),
        host_metadata_file_path(directory, "ml", "fast-net", "vf2/sub"),
    ]
    for file in files:
        file.parent.mkdir(parents=True)
        write_metadata_file(file, metadata)
    (directory / "metadata.json").write_text("{}")  # not below dra-device-metadata: not one
    (directory / "dra-device-metadata" / "nounderscore" / "r").mkdir(parents=True)
    (directory / "dra-device-metadata" / "nounderscore" / "r" / "metadata.json").write_text("{")
    return directory, files


def test_the_host_side_files_are_found_and_named_so(plugin: tuple[Path, list[Path]]) -> None:
    directory, files = plugin
    result = run("validate", str(directory), "-o", "json", root=None)
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout)
    assert [(r["path"], r["layout"], r["status"]) for r in reports] == [
        (str(files[0]), "host", "valid"),
        (str(files[1]), "host", "valid"),
    ]
    table = run("validate", str(directory), "-o", "table", root=None)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines() == [
        f"{files[0]}: metadata.resource.k8s.io/v1beta1: valid (metadata)",
        f"{files[1]}: metadata.resource.k8s.io/v1beta1: valid (metadata)",
        f"{directory}: 2 metadata files in {HOST_SHAPE}",
    ]


def test_the_container_layout_is_named_too() -> None:
    table = run("validate", str(SAMPLE), "-o", "table", root=None)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[-1] == f"{SAMPLE}: 4 metadata files in {CONTAINER_SHAPE}"
    reports = json.loads(run("validate", "-o", "json").stdout)
    assert {report["layout"] for report in reports} == {"container"}


def test_both_layouts_below_one_directory_are_both_named(
    plugin: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    assert plugin[0].is_relative_to(tmp_path)  # the driver's files, below tmp_path too
    mounted = tmp_path / "container" / "resourceclaims" / "fast-net" / "vf"
    mounted.mkdir(parents=True)
    (mounted / "sriov.example.com-metadata.json").write_bytes(
        (
            SAMPLE / "resourceclaims" / "fast-net" / "vf" / "sriov.example.com-metadata.json"
        ).read_bytes()
    )
    table = run("validate", str(tmp_path), "-o", "table", root=None)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[-2:] == [
        f"{tmp_path}: 1 metadata file in {CONTAINER_SHAPE}",
        f"{tmp_path}: 2 metadata files in {HOST_SHAPE}",
    ]


def test_a_file_given_by_path_has_its_layout(plugin: tuple[Path, list[Path]]) -> None:
    directory, files = plugin
    other = directory / "metadata.json"
    result = run("validate", str(files[0]), str(other), "-o", "json", root=None)
    reports = json.loads(result.stdout)
    assert [(r["layout"], r["status"]) for r in reports] == [
        ("host", "valid"),
        (None, "undecodable"),
    ]


def test_a_directory_without_either_says_what_it_looked_for(tmp_path: Path) -> None:
    result = run("validate", str(tmp_path), "-o", "table", root=None)
    assert result.returncode == 1
    assert result.stdout == (
        f"{tmp_path}: not found: no *-metadata.json file ({CONTAINER_SHAPE}) nor metadata.json "
        f"({HOST_SHAPE}) below it\n"
    )
