"""The installed dra-metadata command, run in subprocesses against temporary trees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dra_metadata import Device, DeviceAttribute
from dra_metadata.testing import MetadataTree

from conftest import REPO

COMMAND = str(Path(sys.executable).parent / "dra-metadata")
SAMPLE = REPO / "examples" / "tree"


def run(
    *arguments: str, root: Path | None = SAMPLE, timeout: float = 60, **options: object
) -> subprocess.CompletedProcess[str]:
    prefix = ["--root", str(root)] if root is not None else []
    return subprocess.run(
        [COMMAND, *prefix, *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **options,  # type: ignore[call-overload]
    )


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


@pytest.mark.parametrize("command", ["show", "wait", "validate", "path", "ls", "env"])
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
        }
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
        assert "  resource.kubernetes.io/pciBusID = 0000:c1:00.0" in result.stdout
        path = SAMPLE / "resourceclaims" / "fast-net" / "vf" / "sriov.example.com-metadata.json"
        result = run("show", "--file", str(path), "-o", "table")
        assert "net1 10.56.217.12/24,fd00:56::12/64 ca:fe:c0:ff:ee:03" in result.stdout

    def test_missing_claim_is_one_line(self) -> None:
        result = run("show", "nope", "gpu")
        assert result.returncode == 1
        assert result.stderr.count("\n") == 1
        assert result.stderr.startswith("dra-metadata: ")
        assert "resourceclaims/nope/gpu" in result.stderr
        assert "Traceback" not in result.stderr

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

    def test_usage_errors_exit_2(self) -> None:
        assert run("show").returncode == 2
        assert run("show", "a", "b", "--file", "x").returncode == 2
        assert run("show", "../x", "gpu").returncode == 2
        assert run("wait", "c", "r", "--for", "magic").returncode == 2
        assert run("wait", "c", "r", "--timeout", "soon").returncode == 2

    def test_default_output_off_a_terminal_is_json(self) -> None:
        json.loads(run("show", "fast-net", "vf").stdout)


class TestWait:
    def test_network_data_from_another_process(self, tree: MetadataTree) -> None:
        tree.add_template_claim("nic", "vf", "sriov.example.com", ["vf-0"])
        code = (
            "import sys, time\n"
            "from dra_metadata import Device, NetworkDeviceData\n"
            "from dra_metadata.testing import MetadataTree\n"
            "time.sleep(1)\n"
            "MetadataTree(sys.argv[1], mode='in-place').update('nic', 'vf', 'sriov.example.com', template=True,\n"
            "    devices=[Device(name='vf-0', network_data=NetworkDeviceData('net1', ('10.0.0.5/24',)))])\n"
        )
        writer = subprocess.Popen([sys.executable, "-c", code, str(tree.root)])
        start = time.monotonic()
        result = run(
            "wait",
            "--template",
            "nic",
            "vf",
            "--for",
            "network-data",
            "--timeout",
            "30s",
            "-o",
            "table",
            root=tree.root,
        )
        elapsed = time.monotonic() - start
        assert writer.wait(10) == 0
        assert result.returncode == 0, result.stderr
        assert 0.9 < elapsed < 10
        assert (
            result.stdout
            == "ready: network data (interface_name) on every device: 1 device(s), sriov.example.com generation 2\n"
        )

    def test_timeout_exits_1_with_the_reason(self, tree: MetadataTree) -> None:
        tree.add_claim("net", "nic", "nic.example.com", ["nic-0"])
        start = time.monotonic()
        result = run(
            "wait", "net", "nic", "--for", "network-data", "--timeout", "1.5s", root=tree.root
        )
        elapsed = time.monotonic() - start
        assert result.returncode == 1
        assert 1.5 <= elapsed < 6  # close to the timeout, with room for a noisy machine
        assert "timed out" in result.stderr
        assert "generation 1, device nic-0 has no networkData" in result.stderr

    def test_progress_every_5_seconds(self, tree: MetadataTree) -> None:
        result = run("wait", "c", "r", "--timeout", "5.5s", root=tree.root)
        lines = [
            line for line in result.stderr.splitlines() if "waiting for the metadata file" in line
        ]
        assert len(lines) == 1
        assert "(5s)" in lines[0]
        assert lines[0].endswith(f"no *-metadata.json file in {tree.root}/resourceclaims/c/r yet")

    def test_stale_view_exits_4(self, tmp_path: Path) -> None:
        original = tmp_path / "nic.example.com-metadata.json"
        tree = MetadataTree(tmp_path / "root")
        tree.add_claim("net", "nic", "nic.example.com", ["nic-0"])
        link = tree.path("net", "nic", "nic.example.com")
        link.replace(original)
        code = (
            "import os, sys, subprocess\n"
            "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
            "os.symlink(f'/proc/{os.getpid()}/fd/{fd}', sys.argv[2])\n"
            "os.unlink(sys.argv[1])  # what a rename-replace on the host leaves behind\n"
            "result = subprocess.run(sys.argv[3:], pass_fds=(fd,))\n"
            "sys.exit(result.returncode)\n"
        )
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                str(original),
                str(link),
                COMMAND,
                "--root",
                str(tree.root),
                "wait",
                "net",
                "nic",
                "--for",
                "network-data",
                "--timeout",
                "20s",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 4, result.stderr
        assert "restart the container" in result.stderr

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
        with subprocess.Popen(
            [COMMAND, "--root", str(tree.root), "wait", "c", "r"], stderr=subprocess.PIPE, text=True
        ) as process:
            time.sleep(0.5)  # started and waiting
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
            "env",
            "c",
            "r",
            "--attribute",
            "resource.kubernetes.io/pciBusID",
            "--var",
            "BUS",
            root=tree.root,
        )
        assert result.stdout == "export BUS=0000:01:00.0\n"
        assert (
            run("env", "c", "r", "--attribute", "x", "--var", "1BAD", root=tree.root).returncode
            == 2
        )
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
        assert "has no attribute uuid" in missing.stderr


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

    def test_manifests_use_real_commands(self) -> None:
        manifest = (REPO / "examples" / "kubernetes" / "nic-init-container.yaml").read_text()
        assert "- network-data" in manifest
        assert "resourceClaimTemplateName: sriov-vf" in manifest
        assert (
            "select_gpus.py" in (REPO / "examples" / "kubernetes" / "ml-gpu-pod.yaml").read_text()
        )
