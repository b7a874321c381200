"""The examples run against the sample tree shipped in examples/tree/."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO

EXAMPLES = REPO / "examples"


def run_example(script: str, *args: str, root: Path = EXAMPLES / "tree") -> str:
    environment = {**os.environ, "DRA_METADATA_ROOT": str(root)}
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
        timeout=60,
    )
    return result.stdout


def test_read_metadata_example() -> None:
    output = run_example("read_metadata.py")
    assert "GPUs for training: claim ml/training-gpus" in output
    assert "request gpu: rdma.example.com node-a/mlx5-1" in output
    assert (
        "CUDA_VISIBLE_DEVICES=GPU-5b3c1d2e-8f41-4c55-9a1e-0c6f2b7d9e10,"
        "GPU-a9e77c02-3d1b-4f7a-b2c4-51d0e8f6a3b2" in output
    )
    assert "subrequest chosen: high-memory" in output
    assert "metadata.resource.k8s.io/v1alpha1, generation 1" in output
    assert "network: interface net1, IPs 10.56.217.12/24, fd00:56::12/64" in output


def test_sample_tree_is_what_the_builder_writes(tmp_path: Path) -> None:
    run_example("build_sample_tree.py", str(tmp_path))
    committed = sorted(
        p.relative_to(EXAMPLES / "tree") for p in (EXAMPLES / "tree").rglob("*") if p.is_file()
    )
    built = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert committed == built
    for relative in built:
        assert (tmp_path / relative).read_bytes() == (EXAMPLES / "tree" / relative).read_bytes()
