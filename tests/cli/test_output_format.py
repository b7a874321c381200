"""What show prints: validation findings one per line, tables quoted shell-style.

Subprocesses run the installed command.
"""

from __future__ import annotations

from pathlib import Path

from dra_metadata import Device, NetworkDeviceData
from dra_metadata.testing import MetadataTree

from helpers import run_command as run


def test_show_validate_lists_one_finding_per_line(tmp_path: Path) -> None:
    device = Device(
        driver="d.example.com",
        pool="p",
        name="n",
        attributes={"s": "x" * 65, "t": "y" * 70},
        network_data=NetworkDeviceData(ips=("10.0.0.5/24", "10.0.0.5/24")),
    )
    path = MetadataTree(tmp_path).add_claim("c", "r", "d.example.com", [device])
    result = run("show", "--file", str(path), "--validate", "strict", root=None)
    assert result.returncode == 3
    lines = result.stderr.splitlines()
    assert lines[0] == f"dra-metadata: {path}: 3 validation errors"
    assert [line.split(": ")[0] for line in lines[1:]] == [
        "  requests[0].devices[0].attributes[s].string",
        "  requests[0].devices[0].attributes[t].string",
        "  requests[0].devices[0].networkData.ips[1]",
    ]
    assert all(str(path) not in line for line in lines[1:])


class TestTables:
    def test_values_are_quoted_shell_style(self, tmp_path: Path) -> None:
        attributes = {"productName": "Example H200 141GB", "model": "it's\x1b[31m", "uuid": "u-1"}
        MetadataTree(tmp_path).add_claim(
            "c", "r", "d.example.com", [Device(name="n", attributes=attributes)]
        )
        table = run("show", "c", "r", "-o", "table", root=tmp_path).stdout
        assert "productName='Example H200 141GB'" in table
        assert "model='it'\"'\"'s\\x1b[31m'" in table
        assert "uuid=u-1 " in table
        every = run("show", "c", "r", "-A", root=tmp_path).stdout
        assert "  productName = 'Example H200 141GB'" in every

    def test_custom_attributes_are_shown_when_there_is_room(self, tmp_path: Path) -> None:
        device = Device(name="n", attributes={"example.com/firmware": "1.2"})
        MetadataTree(tmp_path).add_claim("c", "r", "d.example.com", [device])
        table = run("show", "c", "r", "-o", "table", root=tmp_path).stdout
        assert "example.com/firmware=1.2" in table
        assert "more" not in table
        sample = run("show", "training-gpus", "gpu", "-o", "table").stdout
        assert "rdma.example.com/ibDevice=mlx5_0" in sample
