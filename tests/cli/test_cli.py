"""The installed dra-metadata command, run in subprocesses against temporary trees."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dra_metadata import Device, DeviceAttribute, NetworkDeviceData
from dra_metadata.testing import MetadataTree

from helpers import COMMAND, REPO, SAMPLE, catches_signal, wait_until, wait_until_watching
from helpers import run_command as run


@pytest.fixture
def tree(tmp_path: Path) -> MetadataTree:
    return MetadataTree(tmp_path, mode="in-place")


def test_console_script_and_module_agree() -> None:
    script = subprocess.run([COMMAND, "--version"], capture_output=True, text=True, check=True)
    module = subprocess.run(
        [sys.executable, "-m", "dra_metadata", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert script.stdout == module.stdout
    assert script.stdout.startswith("dra-metadata ")


@pytest.mark.parametrize(
    "command",
    ["show", "wait", "validate", "path", "ls", "env", "exec", "status", "health", "pools"],
)
def test_every_subcommand_has_help_with_an_example(command: str) -> None:
    result = run(command, "--help", root=None)
    assert result.returncode == 0
    assert "example" in result.stdout
    assert "dra-metadata" in result.stdout


class TestShow:
    def test_json_document(self) -> None:
        result = run("show", "training-gpus", "gpu", "-o", "json")
        assert result.returncode == 0, result.stderr
        document = json.loads(result.stdout)
        assert set(document) == {"name", "namespace", "uid", "podClaimName", "files", "requests"}
        assert (document["name"], document["namespace"], document["podClaimName"]) == (
            "training-gpus",
            "ml",
            None,
        )
        assert [f["driver"] for f in document["files"]] == ["gpu.example.com", "rdma.example.com"]
        assert set(document["files"][0]) == {
            "path",
            "driver",
            "apiVersion",
            "generation",
            "skippedVersions",
            "stale",
        }
        assert document["files"][0]["stale"] is False
        (request,) = document["requests"]
        assert request["name"] == "gpu"
        device = request["devices"][0]
        assert set(device) == {"driver", "pool", "name", "attributes", "networkData"}
        assert device["attributes"]["uuid"] == {
            "string": "GPU-5b3c1d2e-8f41-4c55-9a1e-0c6f2b7d9e10"
        }
        assert device["attributes"]["index"] == {"int": 0}
        assert device["networkData"] is None

    def test_json_devices_match_the_schema(self) -> None:
        jsonschema = pytest.importorskip("jsonschema")
        schema = json.loads(
            (REPO / "schemas" / "metadata.resource.k8s.io_v1beta1.json").read_text()
        )
        device_schema = {"$defs": schema["$defs"], **schema["$defs"]["Device"]}
        device = json.loads(run("show", "fast-net", "vf", "-o", "json").stdout)["requests"][0][
            "devices"
        ][0]
        assert device["networkData"] == {
            "interfaceName": "net1",
            "ips": ["10.56.217.12/24", "fd00:56::12/64"],
            "hardwareAddress": "ca:fe:c0:ff:ee:03",
        }
        jsonschema.validate(device, device_schema)

    def test_table_and_file(self) -> None:
        result = run("show", "--template", "accelerator", "gpu", "-o", "table", "-A")
        assert result.returncode == 0, result.stderr
        assert (
            "claim serving/inference-0-accelerator-x7k2p (pod claim accelerator)" in result.stdout
        )
        assert "gpu/high-memory  gpu.example.com  node-a  gpu-3" in result.stdout
        # Names as the file has them, in the summary column and in the -A list.
        assert "resource.kubernetes.io/pciBusID=0000:c1:00.0 productName=" in result.stdout
        assert "  resource.kubernetes.io/pciBusID = 0000:c1:00.0" in result.stdout
        path = SAMPLE / "resourceclaims" / "fast-net" / "vf" / "sriov.example.com-metadata.json"
        result = run("show", "--file", str(path), "-o", "table", root=None)
        assert "net1 10.56.217.12/24,fd00:56::12/64 ca:fe:c0:ff:ee:03" in result.stdout

    def test_all_attributes_imply_the_table(self) -> None:
        result = run("show", "--template", "accelerator", "gpu", "-A")  # stdout is no terminal
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("claim serving/inference-0-accelerator-x7k2p")
        assert "  driverVersion = 580.65.6" in result.stdout

    def test_a_subrequest_is_exact(self) -> None:
        result = run("show", "--template", "accelerator", "gpu/high-memory", "-o", "json")
        assert result.returncode == 0, result.stderr
        assert [r["name"] for r in json.loads(result.stdout)["requests"]] == ["gpu/high-memory"]
        result = run("show", "--template", "accelerator", "gpu/low-memory")
        assert result.returncode == 1
        assert result.stdout == ""
        assert result.stderr.endswith(
            "request gpu was allocated as gpu/high-memory, not as gpu/low-memory (the scheduler "
            "chose another subrequest of its prioritized list); read it as gpu or "
            "gpu/high-memory\n"
        )
        assert run("show", "training-gpus", "gpu/foo").returncode == 1

    def test_missing_claim_is_one_line(self) -> None:
        result = run("show", "nope", "gpu")
        assert result.returncode == 1
        assert result.stderr == (
            f"dra-metadata: {SAMPLE}/resourceclaims/nope/gpu: no claim nope referenced by name "
            "has metadata (claims referenced by name: fast-net, training-gpus; claims made from "
            "templates (pod claim names): accelerator); `dra-metadata ls` lists everything "
            "mounted\n"
        )

    def test_not_found_says_what_to_do_in_the_commands_words(self, tmp_path: Path) -> None:
        result = run("show", "accelerator", "gpu")
        assert result.stderr.endswith(
            "but accelerator is the pod claim name of a claim made from a template: "
            "add --template\n"
        )
        result = run("env", "--template", "fast-net", "vf", "--attribute", "x")
        assert result.stderr.endswith(
            "but claim fast-net is referenced by name: leave out --template\n"
        )
        result = run("show", "training-gpus", "gpus")
        assert "claim training-gpus has no request gpus with metadata (its requests: gpu)" in (
            result.stderr
        )
        result = run("show", "training-gpus", "gpu", "--driver", "x.example.com")
        assert result.stderr.endswith(
            "drivers with a file: gpu.example.com, rdma.example.com (leave out --driver to read "
            "them all)\n"
        )
        absent = tmp_path / "absent"
        for command in (["show", "c", "r"], ["ls"], ["validate"]):
            result = run(*command, root=absent)
            assert result.returncode == 1
            assert (
                f"the metadata root {absent} (from --root) does not exist: no DRA device "
                "metadata is mounted here" in result.stderr
            )
            assert result.stderr.endswith("pass --root DIR or set DRA_METADATA_ROOT\n")
        environment = {**os.environ, "DRA_METADATA_ROOT": str(absent)}
        result = run("ls", root=None, env=environment)
        assert f"the metadata root {absent} (from $DRA_METADATA_ROOT)" in result.stderr

    def test_debug_shows_the_traceback(self) -> None:
        result = run("--debug", "show", "nope", "gpu")
        assert "Traceback" in result.stderr

    def test_root_and_debug_also_after_the_command(self, tmp_path: Path) -> None:
        before = run("show", "training-gpus", "gpu", "-o", "json")
        after = run("show", "training-gpus", "gpu", "-o", "json", "--root", str(SAMPLE), root=None)
        assert after.returncode == before.returncode == 0
        assert after.stdout == before.stdout
        # Given twice, the one after the command wins; given before only, it stays.
        overridden = run("show", "training-gpus", "gpu", "--root", str(tmp_path))
        assert overridden.returncode == 1
        assert str(tmp_path) in overridden.stderr
        assert "Traceback" in run("show", "nope", "gpu", "--debug").stderr

    def test_broken_file_exits_3(self, tree: MetadataTree) -> None:
        path = tree.add_claim("c", "r", "d", ["n"])
        path.write_text(
            '{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v1beta1", "requests": 5}'
        )
        result = run("show", "c", "r", root=tree.root)
        assert result.returncode == 3
        assert (
            f"dra-metadata: {path}: decode metadata.resource.k8s.io/v1beta1: object 1, field requests"
            in result.stderr
        )

    def test_default_output_off_a_terminal_is_json(self) -> None:
        json.loads(run("show", "fast-net", "vf").stdout)


class TestWait:
    def test_network_data_from_another_process(self, tree: MetadataTree) -> None:
        tree.add_template_claim("nic", "vf", "sriov.example.com", ["vf-0"])
        code = (
            "import sys\n"
            "from dra_metadata import Device, NetworkDeviceData\n"
            "from dra_metadata.testing import MetadataTree\n"
            "MetadataTree(sys.argv[1], mode='in-place').update('nic', 'vf', 'sriov.example.com', template=True,\n"
            "    devices=[Device(name='vf-0', network_data=NetworkDeviceData('net1', ('10.0.0.5/24',)))])\n"
        )
        arguments = ["--template", "nic", "vf", "--for", "network-data", "--timeout", "60s"]
        with subprocess.Popen(
            [COMMAND, "--root", str(tree.root), "wait", *arguments],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as waiting:
            # The file is written once the command waits on it (not ready yet: no network data),
            # by another process.
            wait_until_watching(waiting, "dra-metadata wait")
            subprocess.run([sys.executable, "-c", code, str(tree.root)], check=True, timeout=60)
            stdout, stderr = waiting.communicate(timeout=60)
        assert waiting.returncode == 0, stderr
        assert (
            stdout
            == "ready: network data (interface_name) on every device: 1 device(s), sriov.example.com generation 2\n"
        )

    def test_timeout_exits_1_with_the_reason(self, tree: MetadataTree) -> None:
        tree.add_claim("net", "nic", "nic.example.com", ["nic-0"])
        start = time.monotonic()
        with subprocess.Popen(
            [COMMAND, "--root", str(tree.root), "wait", "net", "nic", "--for", "network-data",
             "--timeout", "1.5s"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as waiting:  # fmt: skip
            # Timed from when it waits, not from the start of its interpreter, which a busy
            # machine may stretch: it ends close to its timeout, with room for a noisy machine.
            wait_until_watching(waiting, "dra-metadata wait")
            waits = time.monotonic()
            _, stderr = waiting.communicate(timeout=60)
        ended = time.monotonic()
        assert waiting.returncode == 1
        assert ended - start >= 1.5
        assert ended - waits < 6
        assert "timed out" in stderr
        assert "generation 1, device nic-0 has no networkData" in stderr

    def test_progress_every_5_seconds(self, tree: MetadataTree) -> None:
        result = run("wait", "c", "r", "--timeout", "5.5s", root=tree.root)
        lines = [
            line for line in result.stderr.splitlines() if "waiting for the metadata files" in line
        ]
        assert len(lines) == 1
        assert "(5s)" in lines[0]
        assert lines[0].endswith(f"no *-metadata.json file in {tree.root}/resourceclaims/c/r yet")
        # Nothing ever came: the last line says what is there instead, as a reader would.
        assert result.stderr.splitlines()[-1].endswith(
            f"yet; no claim c referenced by name has metadata (no claim has device metadata "
            f"under {tree.root}); `dra-metadata ls` lists everything mounted"
        )

    def test_a_file_never_readable_is_no_missing_file(self, tree: MetadataTree) -> None:
        tree.add_claim("c", "r", "d", ["n"]).write_text('{"kind": "DeviceMetadata", "apiVer')
        result = run("wait", "c", "r", "--timeout", "0.3s", root=tree.root)
        assert result.returncode == 1
        assert "being written or truncated" in result.stderr
        assert "no *-metadata.json file" not in result.stderr

    def test_default_output_is_one_line_off_a_terminal(self) -> None:
        result = run("wait", "fast-net", "vf", "--require", "interface-name,ips")
        assert result.returncode == 0, result.stderr
        assert result.stdout == (
            "ready: network data (interface_name, ips) on every device: 1 device(s), "
            "sriov.example.com generation 2\n"
        )
        document = json.loads(run("wait", "fast-net", "vf", "-o", "json").stdout)
        assert document["files"][0]["generation"] == 2

    def test_require_implies_network_data(self, tree: MetadataTree) -> None:
        tree.add_template_claim("nic", "vf", "sriov.example.com", ["vf-0"])
        result = run(
            "wait", "--template", "nic", "vf", "--require", "interface-name,ips",
            "--timeout", "0.5s", root=tree.root,
        )  # fmt: skip
        assert result.returncode == 1
        assert result.stdout == ""
        assert "device vf-0 has no networkData" in result.stderr

    def test_a_name_under_another_domain_fails_at_once(self) -> None:
        start = time.monotonic()
        result = run("wait", "training-gpus", "gpu", "--for", "attribute=pciBusID")
        assert time.monotonic() - start < 30  # no timeout given: it did not wait
        assert result.returncode == 1
        assert result.stderr.endswith("did you mean resource.kubernetes.io/pciBusID?\n")

    def test_an_attribute_of_some_drivers_suggests_driver(self) -> None:
        result = run("wait", "training-gpus", "gpu", "--for", "attribute=uuid", "--timeout", "0")
        assert result.returncode == 1
        assert result.stderr.endswith(
            "only the devices of gpu.example.com have attribute uuid, not mlx5-0, mlx5-1 of "
            "rdma.example.com: add --driver gpu.example.com\n"
        )
        result = run(
            "wait", "training-gpus", "gpu", "--for", "attribute=uuid", "--driver",
            "gpu.example.com", "--timeout", "0",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr

    def test_another_subrequest_fails_at_once(self) -> None:
        result = run("wait", "--template", "accelerator", "gpu/low-memory")
        assert result.returncode == 1
        assert "allocated as gpu/high-memory, not as gpu/low-memory" in result.stderr

    def test_broken_file_exits_3(self, tree: MetadataTree) -> None:
        tree.add_claim("c", "r", "d", ["n"]).write_text(
            '{"kind": "DeviceMetadata", "apiVersion": ["x"]}'
        )
        result = run("wait", "c", "r", "--timeout", "10s", root=tree.root)
        assert result.returncode == 3
        assert "apiVersion" in result.stderr

    def test_invalid_data_exits_3_when_validating(self, tree: MetadataTree) -> None:
        tree.add_claim("c", "r", "d", [Device(name="GPU-0")])
        assert run("wait", "c", "r", "--timeout", "5s", root=tree.root).returncode == 0
        result = run("wait", "c", "r", "--timeout", "5s", "--validate", "metadata", root=tree.root)
        assert result.returncode == 3
        assert "requests[0].devices[0].name: Invalid value" in result.stderr

    def test_generation_and_attribute_conditions(self, tree: MetadataTree) -> None:
        tree.add_claim(
            "c",
            "r",
            "gpu.example.com",
            [Device(name="g", attributes={"model": DeviceAttribute(string="A100")})],
        )
        assert (
            run(
                "wait", "c", "r", "--for", "attribute=model", "--timeout", "5s", root=tree.root
            ).returncode
            == 0
        )
        assert (
            run(
                "wait",
                "c",
                "r",
                "--for",
                "attribute=gpu.example.com/model=A100",
                "--timeout",
                "5s",
                root=tree.root,
            ).returncode
            == 0
        )
        result = run(
            "wait", "c", "r", "--for", "attribute=model=H100", "--timeout", "0.5s", root=tree.root
        )
        assert result.returncode == 1
        assert "device g has model=A100" in result.stderr
        result = run(
            "wait",
            "c",
            "r",
            "--driver",
            "gpu.example.com",
            "--for",
            "generation=2",
            "--timeout",
            "0.5s",
            root=tree.root,
        )
        assert result.returncode == 1
        assert "generation 1 (waiting for 2)" in result.stderr
        tree.update("c", "r", "gpu.example.com", devices=["g"])
        result = run(
            "wait",
            "c",
            "r",
            "--for",
            "generation=2",
            "--timeout",
            "5s",
            "-o",
            "json",
            root=tree.root,
        )
        assert result.returncode == 0
        assert json.loads(result.stdout)["files"][0]["generation"] == 2

    @pytest.mark.parametrize(("sent", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
    def test_signals_end_it_at_once(
        self, tree: MetadataTree, sent: signal.Signals, code: int
    ) -> None:
        # A command started with SIGINT ignored (a job a shell runs in the background) rightly
        # keeps ignoring it: exec it with the default disposition, as a terminal would.
        with_default_sigint = (
            "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
            "os.execv(sys.argv[1], sys.argv[1:])"
        )
        command = [COMMAND, "--root", str(tree.root), "wait", "c", "r"]
        with subprocess.Popen(
            [sys.executable, "-c", with_default_sigint, *command],
            stderr=subprocess.PIPE,
            text=True,
        ) as process:
            # Its SIGTERM handler is installed and it waits on the files (inside the part that
            # turns SIGINT's KeyboardInterrupt into 130).
            wait_until(lambda: catches_signal(process.pid, signal.SIGTERM), "the SIGTERM handler")
            wait_until_watching(process, "dra-metadata wait")
            start = time.monotonic()
            process.send_signal(sent)
            assert process.wait(5) == code
            assert time.monotonic() - start < 5  # the wait itself has no timeout


class TestOtherCommands:
    def test_validate(self, tree: MetadataTree) -> None:
        good = tree.add_claim("good", "r", "d", ["n"])
        bad = tree.add_claim(
            "bad", "r", "d", [Device(name="N", attributes={"a": DeviceAttribute(string="x" * 70)})]
        )
        broken = tree.add_claim("broken", "r", "d", ["n"])
        broken.write_text("{")
        assert run("validate", str(good), root=None).returncode == 0
        result = run("validate", str(tree.root), "-o", "json", root=None)
        assert result.returncode == 1
        reports = {Path(r["path"]).parts[-3]: r for r in json.loads(result.stdout)}
        assert reports["good"]["valid"]
        assert reports["good"]["apiVersion"] == "metadata.resource.k8s.io/v1beta1"
        assert [e["path"] for e in reports["bad"]["errors"]] == ["requests[0].devices[0].name"]
        assert reports["broken"]["error"].startswith("read metadata object from stream")
        strict = json.loads(run("validate", "--strict", str(bad), "-o", "json", root=None).stdout)
        assert [(e["path"], e["type"]) for e in strict[0]["errors"]] == [
            ("requests[0].devices[0].attributes[a].string", "too_long"),
            ("requests[0].devices[0].name", "invalid"),
        ]
        table = run("validate", str(bad), "-o", "table", root=None)
        assert "1 error(s) (metadata)" in table.stdout
        assert "Invalid value" in table.stdout

    def test_validate_without_paths_checks_the_root(self) -> None:
        result = run("validate", "-o", "table")
        assert result.returncode == 0, result.stderr
        assert result.stdout.count(": valid (metadata)\n") == 4
        environment = {**os.environ, "DRA_METADATA_ROOT": str(SAMPLE)}
        assert run("validate", root=None, env=environment).returncode == 0

    def test_path(self, tmp_path: Path) -> None:
        assert (
            run("path", "c", "gpu/high", root=tmp_path).stdout
            == f"{tmp_path}/resourceclaims/c/gpu\n"
        )
        assert (
            run("path", "--template", "c", "r", "--driver", "d.io", root=tmp_path).stdout
            == f"{tmp_path}/resourceclaimtemplates/c/r/d.io-metadata.json\n"
        )
        environment = {**os.environ, "DRA_METADATA_ROOT": str(tmp_path / "env")}
        result = run("path", "c", "r", root=None, env=environment)
        assert result.stdout == f"{tmp_path}/env/resourceclaims/c/r\n"

    def test_ls(self) -> None:
        entries = json.loads(run("ls", "-o", "json").stdout)
        assert [
            (e["kind"], e["claim"], e["request"], e["driver"], e["generation"]) for e in entries
        ] == [
            ("claim", "fast-net", "vf", "sriov.example.com", 2),
            ("claim", "training-gpus", "gpu", "gpu.example.com", 1),
            ("claim", "training-gpus", "gpu", "rdma.example.com", 1),
            ("template", "accelerator", "gpu", "gpu.example.com", 1),
        ]
        assert set(entries[0]) == {
            "kind", "claim", "request", "driver", "path", "generation", "apiVersion", "stale",
            "status", "error",
        }  # fmt: skip
        assert not any(entry["stale"] for entry in entries)
        assert "template  accelerator" in run("ls", "-o", "table").stdout

    def test_env_is_safe_to_eval(self, tree: MetadataTree) -> None:
        marker = tree.root / "pwned"
        hostile = [
            "it's",
            f'$(touch {marker}) `touch {marker}` "x"',
            "line\nbreak; rm -rf /",
            "tab\there ${HOME} \\",
        ]
        tree.add_claim(
            "c",
            "r",
            "d",
            [
                Device(
                    name=f"n{i}",
                    attributes={
                        "note": DeviceAttribute(string=text),
                        "d/index": DeviceAttribute(int=i),
                    },
                )
                for i, text in enumerate(hostile)
            ],
        )
        result = run(
            "env",
            "c",
            "r",
            "--attribute",
            "note",
            "--attribute",
            "index",
            "--join",
            "|",
            root=tree.root,
        )
        assert result.returncode == 0, result.stderr
        shell = subprocess.run(
            ["bash", "-c", 'eval "$1" && printf "%s\\0%s" "$NOTE" "$INDEX"', "bash", result.stdout],
            capture_output=True,
            text=True,
            check=True,
        )
        note, index = shell.stdout.split("\0")
        assert note == "|".join(hostile)
        assert index == "0|1|2|3"
        assert not marker.exists()

    def test_env_variable_names(self, tree: MetadataTree) -> None:
        tree.add_claim(
            "c",
            "r",
            "d",
            [
                Device(
                    name="n",
                    attributes={
                        "resource.kubernetes.io/pciBusID": DeviceAttribute(string="0000:01:00.0")
                    },
                )
            ],
        )
        result = run(
            "env", "c", "r", "--attribute", "resource.kubernetes.io/pciBusID", root=tree.root
        )
        assert result.stdout == "export PCIBUSID=0000:01:00.0\n"
        result = run(
            "env", "c", "r", "--attribute", "resource.kubernetes.io/pciBusID=BUS", root=tree.root
        )
        assert result.stdout == "export BUS=0000:01:00.0\n"
        bad = run("env", "c", "r", "--attribute", "x=1BAD", root=tree.root)
        assert bad.returncode == 2
        assert "'1BAD' is not a shell variable name" in bad.stderr
        twice = run(
            "env", "c", "r", "--attribute", "a/uuid", "--attribute", "b/uuid", root=tree.root
        )
        assert twice.returncode == 2
        assert "--attribute a/uuid and b/uuid would both set UUID" in twice.stderr
        tree.add_claim(
            "c",
            "two",
            "d",
            [Device(name="n", attributes={"m": DeviceAttribute(int=1, string="1")})],
        )
        ambiguous = run("env", "c", "two", "--attribute", "m", root=tree.root)
        assert ambiguous.returncode == 3
        assert "requests[0].devices[0].attributes[m]: Invalid value" in ambiguous.stderr
        missing = run("env", "c", "r", "--attribute", "uuid", root=tree.root)
        assert missing.returncode == 1
        assert missing.stderr.endswith(
            "no device has attribute uuid; the devices' attributes: "
            "resource.kubernetes.io/pciBusID\n"
        )

    def test_env_explains_attribute_names(self) -> None:
        result = run("env", "training-gpus", "gpu", "--attribute", "pciBusID")
        assert result.returncode == 1
        assert result.stdout == ""
        assert result.stderr == (
            f"dra-metadata: {SAMPLE}/resourceclaims/training-gpus/gpu/gpu.example.com-metadata"
            ".json: device gpu-0 (gpu.example.com) has no attribute pciBusID (an unqualified name "
            "finds pciBusID and gpu.example.com/pciBusID); did you mean "
            "resource.kubernetes.io/pciBusID?\n"
        )
        result = run("env", "training-gpus", "gpu", "--attribute", "uuid")
        assert result.returncode == 1
        assert result.stderr == (
            f"dra-metadata: {SAMPLE}/resourceclaims/training-gpus/gpu/rdma.example.com-metadata"
            ".json: only the devices of gpu.example.com have attribute uuid, not mlx5-0, mlx5-1 "
            "of rdma.example.com: add --driver gpu.example.com\n"
        )
        result = run(
            "env", "training-gpus", "gpu", "--attribute", "uuid", "--driver", "gpu.example.com"
        )
        assert result.stdout == (
            "export UUID=GPU-5b3c1d2e-8f41-4c55-9a1e-0c6f2b7d9e10,"
            "GPU-a9e77c02-3d1b-4f7a-b2c4-51d0e8f6a3b2\n"
        )

    def test_the_documented_eval_stops_on_failure(self, tmp_path: Path) -> None:
        script = (
            'vars=$("$0" env --template nic vf --attribute uuid) && eval "$vars" && echo started'
        )
        environment = {**os.environ, "DRA_METADATA_ROOT": str(tmp_path)}
        result = subprocess.run(
            ["sh", "-c", script, COMMAND],
            capture_output=True,
            text=True,
            env=environment,
            check=False,
        )
        assert result.returncode == 1
        assert "started" not in result.stdout


class TestExamples:
    def test_select_gpus(self) -> None:
        environment = {**os.environ, "DRA_METADATA_ROOT": str(SAMPLE)}
        script = str(REPO / "examples" / "select_gpus.py")
        result = subprocess.run(
            [sys.executable, script, "training-gpus", "gpu"],
            capture_output=True,
            text=True,
            env=environment,
            check=True,
        )
        assert result.stdout == (
            "CUDA_VISIBLE_DEVICES=GPU-5b3c1d2e-8f41-4c55-9a1e-0c6f2b7d9e10,GPU-a9e77c02-3d1b-4f7a-b2c4-51d0e8f6a3b2\n"
            "GPU_PCI_BUS_IDS=0000:1b:00.0,0000:9c:00.0\n"
        )
        child = subprocess.run(
            [
                sys.executable,
                script,
                "training-gpus",
                "gpu",
                "--",
                "sh",
                "-c",
                'echo "$CUDA_VISIBLE_DEVICES"',
            ],
            capture_output=True,
            text=True,
            env=environment,
            check=True,
        )
        assert child.stdout.startswith("GPU-5b3c1d2e")
        assert "torch" not in sys.modules

    def test_the_nic_manifest_runs(self, tmp_path: Path) -> None:
        manifest = (KUBERNETES / "nic-init-container.yaml").read_text()
        assert "resourceClaimTemplateName: sriov-vf" in manifest
        wait, app = manifest_commands(manifest)
        wait = [COMMAND, *wait[1:]]
        wait[wait.index("2m")] = "0.5s"  # not ready yet: the init container exits 1 at once
        app = [COMMAND, *app[1:-1], "sh", "-c", 'printf %s "$VF_PCI_ADDRESS"']
        environment = {**os.environ, "DRA_METADATA_ROOT": str(tmp_path)}
        tree = MetadataTree(tmp_path)
        bus = {"resource.kubernetes.io/pciBusID": DeviceAttribute(string="0000:3b:02.1")}
        tree.add_template_claim(
            "nic", "vf", "sriov.example.com", [Device(name="vf-0", attributes=bus)]
        )
        results = [
            subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
            for command in (wait, app)
        ]
        assert results[0].returncode == 1
        assert "device vf-0 has no networkData" in results[0].stderr
        assert (results[1].returncode, results[1].stdout) == (0, "0000:3b:02.1")
        network = NetworkDeviceData("net1", ("10.0.0.5/24",))
        tree.update(
            "nic",
            "vf",
            "sriov.example.com",
            template=True,
            devices=[Device(name="vf-0", attributes=bus, network_data=network)],
        )
        ready = subprocess.run(wait, capture_output=True, text=True, env=environment, check=False)
        assert ready.returncode == 0, ready.stderr
        # Without the claim, the app does not start with an empty variable.
        environment["DRA_METADATA_ROOT"] = str(tmp_path / "elsewhere")
        missing = subprocess.run(app, capture_output=True, text=True, env=environment, check=False)
        assert (missing.returncode, missing.stdout) == (1, "")

    def test_the_gpu_manifest_runs(self) -> None:
        (command,) = manifest_commands((KUBERNETES / "ml-gpu-pod.yaml").read_text())
        assert command[-2:] == ["python", "/app/train.py"]
        command = [COMMAND, *command[1:-2], "sh", "-c", 'printf %s "$CUDA_VISIBLE_DEVICES"']
        environment = {**os.environ, "DRA_METADATA_ROOT": str(SAMPLE)}
        result = subprocess.run(
            command, capture_output=True, text=True, env=environment, check=False
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == (
            "GPU-5b3c1d2e-8f41-4c55-9a1e-0c6f2b7d9e10,GPU-a9e77c02-3d1b-4f7a-b2c4-51d0e8f6a3b2"
        )

    def test_the_dockerfile_entrypoint_runs(self, tmp_path: Path) -> None:
        text = (KUBERNETES / "Dockerfile.init").read_text()
        entrypoint = json.loads(re.findall(r"^#\s+ENTRYPOINT (\[.*\])$", text, re.MULTILINE)[0])
        tree = MetadataTree(tmp_path)
        bus = {"resource.kubernetes.io/pciBusID": DeviceAttribute(string="0000:3b:02.1")}
        tree.add_template_claim(
            "nic", "vf", "sriov.example.com", [Device(name="vf-0", attributes=bus)]
        )
        command = [COMMAND, *entrypoint[1:], "sh", "-c", 'printf %s "$VF_PCI_ADDRESS"']
        result = run(*command[1:], root=tmp_path)
        assert (result.returncode, result.stdout) == (0, "0000:3b:02.1"), result.stderr


KUBERNETES = REPO / "examples" / "kubernetes"


def manifest_commands(manifest: str) -> list[list[str]]:
    """The ``command: [...]`` of a manifest (flow sequences, which are JSON; over lines too)."""
    return [
        json.loads(found)
        for found in re.findall(r"^\s+command: (\[.*?\])$", manifest, re.MULTILINE | re.DOTALL)
    ]
