"""What the command advises when a path cannot be looked at: each cause its own hint.

A root that is a regular file (ENOTDIR) and a path too long for the system (ENAMETOOLONG) are
no "a metadata file must be a regular file": the message names the component that is a file,
and the hint says what is expected there (or why the path is refused), exit 6.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_metadata import Device
from dra_metadata.testing import MetadataTree

from helpers import run_command

NOT_A_DIRECTORY = (
    "a directory is expected there, not a file: check the path (the metadata root, --root or "
    "$DRA_METADATA_ROOT, is the directory that holds resourceclaims/ and resourceclaimtemplates/)"
)
TOO_LONG = (
    "the path is too long for the system (a name in it over 255 bytes, or all of it over "
    "4095): check --root and the names given"
)
SUBCOMMANDS = {
    "show": ["show", "training-gpus", "gpu"],
    "show driver": ["show", "training-gpus", "gpu", "--driver", "gpu.example.com"],
    "ls": ["ls"],
    "wait": ["wait", "training-gpus", "gpu", "--timeout", "60s"],
    "env": ["env", "training-gpus", "gpu", "--attribute", "uuid"],
}


def a_file(tmp_path: Path) -> Path:
    tree = MetadataTree(tmp_path / "tree")
    return tree.add_claim("fast-net", "vf", "sriov.example.com", [Device(name="vf-0")])


@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_a_root_that_is_a_regular_file(tmp_path: Path, subcommand: str) -> None:
    root = a_file(tmp_path)
    result = run_command(*SUBCOMMANDS[subcommand], root=root)
    assert result.returncode == 6, result.stderr
    (line,) = result.stderr.splitlines()
    # The component named: "<root> is not a directory", or "the metadata root <root> (from
    # --root) is not a directory" where the root itself is listed.
    assert line.endswith(
        (
            f"{root} is not a directory; {NOT_A_DIRECTORY}",
            f"(from --root) is not a directory; {NOT_A_DIRECTORY}",
        )
    ), line
    assert line.count(str(root)) >= 2, line
    assert "a metadata file must be a regular file" not in line


@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_a_root_too_long_for_the_system(tmp_path: Path, subcommand: str) -> None:
    root = tmp_path / ("x" * 300)
    result = run_command(*SUBCOMMANDS[subcommand], root=root)
    assert result.returncode == 6, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"dra-metadata: {root}"), line
    assert line.endswith(f": File name too long; {TOO_LONG}"), line


def test_a_path_through_a_file_given_to_show(tmp_path: Path) -> None:
    regular = a_file(tmp_path)
    result = run_command("show", "--file", str(regular / "x-metadata.json"), root=None)
    assert result.returncode == 6, result.stderr
    assert result.stderr == (
        f"dra-metadata: {regular / 'x-metadata.json'}: open metadata file: {regular} is not a "
        f"directory; {NOT_A_DIRECTORY}\n"
    )


def test_a_regular_file_is_still_expected_of_a_metadata_file(tmp_path: Path) -> None:
    fifo_dir = tmp_path / "resourceclaims" / "c" / "r"
    fifo_dir.mkdir(parents=True)
    (fifo_dir / "x.example.com-metadata.json").mkdir()  # a directory where a file should be
    result = run_command("show", "c", "r", root=tmp_path)
    assert result.returncode == 6, result.stderr
    assert "a metadata file must be a regular file (ls -l shows what it is)" in result.stderr
