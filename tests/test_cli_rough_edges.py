"""Rough edges a new user hit (issue 23): writers that refuse invalid data, validation findings
one per line, readable reprs, ``require=``, table quoting, the sample tree builder, messages
and the README's "Try it" in a fresh shell. Subprocesses run the installed command.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import Device, DeviceAttribute, NetworkDeviceData
from dra_metadata.testing import MetadataTree

from conftest import COMMAND, SAMPLE
from conftest import run_command as run


def _with_devices(
    metadata: dra_metadata.DeviceMetadata, devices: list[Device]
) -> dra_metadata.DeviceMetadata:
    request = dra_metadata.DeviceMetadataRequest(name="r", devices=tuple(devices))
    return dataclasses.replace(metadata, requests=(request,))


class TestWriters:
    @staticmethod
    def _duplicate_ips() -> dra_metadata.DeviceMetadata:
        network = NetworkDeviceData(interface_name="net1", ips=("10.0.0.5/24", "10.0.0.5/24"))
        device = Device(driver="d.example.com", pool="p", name="n", network_data=network)
        return dra_metadata.DeviceMetadata(
            metadata=dra_metadata.ObjectMeta(name="c", generation=1),
            requests=(dra_metadata.DeviceMetadataRequest(name="r", devices=(device,)),),
        )

    def test_write_refuses_before_anything_changes(self, tmp_path: Path) -> None:
        from dra_metadata.writer import write_metadata_file  # noqa: PLC0415

        target = tmp_path / "new" / "d.example.com-metadata.json"
        with pytest.raises(dra_metadata.MetadataValidationError, match="Duplicate value") as e:
            write_metadata_file(target, self._duplicate_ips(), validate=True)
        assert e.value.path == target
        assert not target.parent.exists()
        write_metadata_file(target, self._duplicate_ips())  # the default: as upstream
        assert target.exists()

    def test_update_leaves_the_file_as_it_was(self, tmp_path: Path) -> None:
        from dra_metadata.writer import update_metadata_file, write_metadata_file  # noqa: PLC0415

        target = tmp_path / "d.example.com-metadata.json"
        valid = self._duplicate_ips()
        device = valid.devices[0]
        write_metadata_file(target, _with_devices(valid, [Device(name=device.name)]))
        before = target.read_bytes()
        with pytest.raises(dra_metadata.MetadataValidationError):
            update_metadata_file(target, [device], validate="strict")
        assert target.read_bytes() == before

    def test_encode_stream_profiles(self) -> None:
        from dra_metadata.writer import encode_stream  # noqa: PLC0415

        long_name = _with_devices(
            self._duplicate_ips(),
            [Device(driver="d.example.com", pool="p", name="n", attributes={"s": "x" * 65})],
        )
        assert encode_stream(long_name, validate=True)  # the string limit is a strict rule
        with pytest.raises(dra_metadata.MetadataValidationError, match="Too long"):
            encode_stream(long_name, validate="strict")
        with pytest.raises(ValueError, match="validate must be"):
            encode_stream(long_name, validate="yes")  # type: ignore[arg-type]


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


class TestPython:
    def test_models_print_what_is_set(self) -> None:
        assert repr(DeviceAttribute(version="1.0.0")) == "DeviceAttribute(version='1.0.0')"
        assert repr(DeviceAttribute(int=0)) == "DeviceAttribute(int=0)"
        assert repr(DeviceAttribute(bool=False)) == "DeviceAttribute(bool=False)"
        assert repr(NetworkDeviceData(ips=("10.0.0.5/24",))) == (
            "NetworkDeviceData(ips=('10.0.0.5/24',))"
        )
        device = Device(driver="d", name="n", attributes={"v": DeviceAttribute(string="x")})
        shown = repr(device)
        assert shown == (
            "Device(driver='d', name='n', attributes=AttributeMap({'v': "
            "DeviceAttribute(string='x')}))"
        )
        assert "None" not in repr(dra_metadata.read_claim_metadata("fast-net", "vf", root=SAMPLE))

    @pytest.mark.parametrize("require", ["ips", ["ips"], ("interface_name", "ips")])
    def test_require_takes_a_name_or_names(self, require: object) -> None:
        ready = dra_metadata.wait_for_network_data(
            "fast-net",
            "vf",
            root=SAMPLE,
            timeout=30,
            require=require,  # type: ignore[arg-type]
        )
        assert ready.devices[0].network_data is not None

    @pytest.mark.parametrize("require", [5, b"ips", [b"ips"], None])
    def test_require_refuses_anything_else(self, require: object) -> None:
        with pytest.raises(TypeError, match="require"):
            dra_metadata.wait_for_network_data(
                "fast-net",
                "vf",
                root=SAMPLE,
                timeout=30,
                require=require,  # type: ignore[arg-type]
            )


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


class TestSampleTreeBuilder:
    SCRIPT = str(SAMPLE.parent / "build_sample_tree.py")

    def _run(self, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, self.SCRIPT, *arguments],
            capture_output=True,
            text=True,
            cwd=cwd,
            check=False,
            timeout=60,
        )

    def test_help_writes_nothing(self, tmp_path: Path) -> None:
        result = self._run("--help", cwd=tmp_path)
        assert result.returncode == 0
        assert "usage: build_sample_tree.py" in result.stdout
        assert list(tmp_path.iterdir()) == []

    def test_the_committed_tree_only_when_asked(self, tmp_path: Path) -> None:
        before = {path: path.stat().st_mtime_ns for path in SAMPLE.rglob("*")}
        result = self._run(cwd=tmp_path)
        assert result.returncode == 2
        assert "give DIR, or --committed" in result.stderr
        refused = self._run(str(SAMPLE), cwd=tmp_path)
        assert refused.returncode == 2
        assert "use --committed" in refused.stderr
        assert {path: path.stat().st_mtime_ns for path in SAMPLE.rglob("*")} == before

    def test_a_tree_is_not_written_over(self, tmp_path: Path) -> None:
        assert self._run(str(tmp_path / "t"), cwd=tmp_path).returncode == 0
        again = self._run(str(tmp_path / "t"), cwd=tmp_path)
        assert again.returncode == 2
        assert "is not empty" in again.stderr
        assert self._run(str(tmp_path / "t"), "--overwrite", cwd=tmp_path).returncode == 0


class TestMessages:
    def test_an_unknown_option_points_to_the_subcommands_help(self) -> None:
        result = run("show", "training-gpus", "gpu", "--temp")
        assert result.returncode == 2
        assert result.stderr == (
            "dra-metadata show: unrecognized arguments: --temp (see dra-metadata show --help)\n"
        )

    def test_exec_says_to_put_the_separator_before_the_command(self) -> None:
        result = run("exec", "training-gpus", "gpu", "env")
        assert result.returncode == 2
        assert "put -- before it: dra-metadata exec CLAIM REQUEST [options] -- env" in (
            result.stderr
        )

    def test_grammar(self, tmp_path: Path) -> None:
        single = run("wait", "c", "r", "--namespace", "ml", root=None)
        assert "--namespace only applies to the Kubernetes API" in single.stderr
        path = tmp_path / "n-metadata.json"
        path.write_text('{"kind": "DeviceMetadata", "apiVersion": 5}')
        result = run("validate", str(path), "-o", "table", root=None)
        assert 'has an "apiVersion" that is the number 5' in result.stdout


def test_readme_try_it_works_in_a_fresh_shell() -> None:
    """The commands after "Try it" run as written in a shell that activated nothing, and the
    section says how long the test command takes."""
    readme = (SAMPLE.parent.parent / "README.md").read_text()
    section = readme.split("## Try it", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)\n```", section, flags=re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines()]
    assert all(re.search(r"(?<![/\w])dra-metadata ", line) is None for line in lines), (
        "a bare dra-metadata needs an activated venv"
    )
    commands = [line for line in lines if line.startswith(".venv/bin/dra-metadata ")]
    assert commands
    for line in commands:
        result = subprocess.run(  # noqa: S602 - the README's command, as a user types it
            line.replace(".venv/bin/dra-metadata", COMMAND, 1),
            shell=True,
            cwd=SAMPLE.parent.parent,
            env={"PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert result.returncode == 0, (line, result.stderr)
    assert re.search(r"takes about \w+ minutes?", section)
