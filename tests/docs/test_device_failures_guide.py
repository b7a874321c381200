"""The device failures guide shows what the command prints: its table is the rows of
``dra-metadata health`` for the device it describes, and the probe's stderr line the one
``--fail-on`` writes for that device (the API side of both runs in tests/kube)."""

from __future__ import annotations

import io

import pytest

from dra_metadata.cli._commands import health
from dra_metadata.cli._exit import EXIT_NOT_READY
from dra_metadata.cli._output import Output, table
from dra_metadata.kube import DeviceHealth

from helpers import REPO
from test_docs import blocks

GUIDE = REPO / "docs" / "guides" / "device-failures.md"

# The guide's pod: claim gpu (examples/kubernetes/device-health-probe.yaml) of container
# trainer, its request gpu given gpu-3 of pool node-7, which the driver reports failing.
FAILING_GPU = DeviceHealth(
    container="trainer",
    pod_claim_name="gpu",
    request="gpu",
    driver="gpu.example.com",
    pool="node-7",
    device="gpu-3",
    health="Unhealthy",
    message="XID 79",
    resource_name="claim:gpu/gpu",
    resource_id="gpu.example.com/node-7/gpu-3",
)


def test_the_guides_table_is_the_commands_rows_for_its_device() -> None:
    (shown,) = [block for block in blocks(GUIDE) if block.language == "text"]
    stream = io.StringIO()
    out = Output(stream)
    table([health._HEADER, health._row(FAILING_GPU)], out)
    out.flush()
    assert stream.getvalue() == shown.code


def test_the_guides_probe_line_is_the_one_fail_on_writes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert health._report_failing([FAILING_GPU]) == EXIT_NOT_READY
    line = capsys.readouterr().err.strip()
    assert f"(`{line}`)" in " ".join(GUIDE.read_text().split())
