"""DeviceMetadata.to_wire and to_document: JSON exports that the standard library can write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from pydantic import TypeAdapter

import dra_metadata
from dra_metadata import (
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    MetadataEncodeError,
    NetworkDeviceData,
    ObjectMeta,
    decode_stream,
    list_claims,
)
from dra_metadata import strategies as metadata_strategies
from dra_metadata.writer import encode_stream

from helpers import REPO, V1ALPHA1, V1BETA1

SAMPLE = REPO / "examples" / "tree"
COMMAND = str(Path(sys.executable).parent / "dra-metadata")


def show_json(*arguments: str) -> object:
    root = [] if "--file" in arguments else ["--root", str(SAMPLE)]  # --file takes no root
    result = subprocess.run(
        [COMMAND, *root, "show", *arguments, "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


class TestToWire:
    @settings(max_examples=60)
    @given(metadata_strategies.device_metadata(full_object_meta=True))
    def test_is_the_object_encode_stream_writes(self, metadata: DeviceMetadata) -> None:
        for version in dra_metadata.KNOWN_API_VERSIONS:
            wire = metadata.to_wire(version)
            assert wire == json.loads(encode_stream(metadata, versions=[version]))
            assert json.loads(json.dumps(wire)) == wire
        decoded = decode_stream(encode_stream(metadata)).metadata
        assert decoded.to_wire() == metadata.to_wire()

    def test_version(self) -> None:
        metadata = dra_metadata.read_template_metadata("accelerator", "gpu", root=SAMPLE)
        assert metadata.api_version == V1ALPHA1
        assert metadata.to_wire()["apiVersion"] == V1ALPHA1  # the version it was decoded from
        assert metadata.to_wire(V1BETA1)["apiVersion"] == V1BETA1
        merged = dra_metadata.read_claim_metadata("training-gpus", "gpu", root=SAMPLE)
        hand_built = DeviceMetadata(requests=[DeviceMetadataRequest(name="r")])
        for no_version in (merged, hand_built):
            assert no_version.to_wire()["apiVersion"] == dra_metadata.KNOWN_API_VERSIONS[0]
        assert hand_built.to_wire() == {
            "kind": "DeviceMetadata",
            "apiVersion": V1BETA1,
            "metadata": {},
            "requests": [{"name": "r"}],
        }

    def test_bad_versions(self) -> None:
        metadata = DeviceMetadata()
        with pytest.raises(ValueError, match=r"'metadata.resource.k8s.io/v9' is not supported"):
            metadata.to_wire("metadata.resource.k8s.io/v9")
        with pytest.raises(ValueError, match="not supported"):
            metadata.to_wire("")
        with pytest.raises(TypeError, match="api_version must be a str"):
            metadata.to_wire(1)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="not supported"):
            DeviceMetadata(api_version="example.com/v1").to_wire()

    def test_is_a_copy(self) -> None:
        metadata = dra_metadata.read_claim_metadata("fast-net", "vf", root=SAMPLE)
        before = metadata.to_wire()
        wire = metadata.to_wire()
        device = wire["requests"][0]["devices"][0]
        device["attributes"]["pfName"]["string"] = "changed"
        device["networkData"]["ips"].append("10.0.0.1/8")
        wire["metadata"]["name"] = "changed"
        assert metadata.to_wire() == before
        assert metadata.devices[0].attribute("pfName") == "ens1f0"
        assert isinstance(before["requests"][0]["devices"][0]["networkData"]["ips"], list)

    def test_a_value_json_cannot_hold(self) -> None:
        device = Device(driver="d", pool="p", name="n", attributes={"model": "\udcff"})
        metadata = DeviceMetadata(requests=[DeviceMetadataRequest(name="r", devices=[device])])
        with pytest.raises(MetadataEncodeError) as raised:
            metadata.to_wire()
        assert raised.value.field == "requests[0].devices[0].attributes[model].string"


class TestToDocument:
    @pytest.mark.parametrize(
        "arguments",
        [
            ("training-gpus", "gpu"),
            ("training-gpus", "gpu", "--driver", "rdma.example.com"),
            ("fast-net", "vf"),
            ("--template", "accelerator", "gpu"),
            ("--file", str(SAMPLE / "resourceclaims/fast-net/vf/sriov.example.com-metadata.json")),
        ],
    )
    def test_is_what_show_prints(self, arguments: tuple[str, ...]) -> None:
        if arguments[0] == "--file":
            metadata = dra_metadata.read_metadata_file(arguments[1])
        else:
            template = arguments[0] == "--template"
            claim, request, *rest = arguments[1:] if template else arguments
            driver = rest[1] if rest else None
            reader = (
                dra_metadata.read_template_metadata
                if template
                else dra_metadata.read_claim_metadata
            )
            metadata = reader(claim, request, driver=driver, root=SAMPLE)
        document = metadata.to_document()
        assert document == show_json(*arguments)
        assert json.loads(json.dumps(document)) == document

    def test_skipped_versions_and_every_attribute_member(self, tmp_path: Path) -> None:
        device = Device(
            driver="d.example.com",
            pool="p",
            name="n",
            attributes={
                "i": 1,
                "b": False,
                "s": "<&>",
                "v": DeviceAttribute(version="1.2.3"),
                "is": [1, 2],
                "bs": [True],
                "ss": ["x"],
                "vs": DeviceAttribute(versions=["1.0.0"]),
            },
        )
        metadata = DeviceMetadata(
            metadata=ObjectMeta(name="c", namespace="ns", uid="u", generation=4),
            pod_claim_name="pod-claim",
            requests=[DeviceMetadataRequest(name="r/sub", devices=[device])],
        )
        unknown = b'{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v9"}\n'
        path = tmp_path / "d.example.com-metadata.json"
        path.write_bytes(unknown + encode_stream(metadata, versions=[V1ALPHA1]))
        read = dra_metadata.read_metadata_file(path)
        assert read.sources[0].skipped_versions == ("metadata.resource.k8s.io/v9",)
        assert read.to_document() == show_json("--file", str(path))

    def test_every_listed_claim(self) -> None:
        claims = list_claims(root=SAMPLE)
        assert claims
        for claim in claims:
            arguments = (claim.claim_name, claim.request_name)
            if claim.template:
                arguments = ("--template", *arguments)
            assert claim.read().to_document() == show_json(*arguments)

    def test_hand_built(self) -> None:
        device = Device(
            driver="d",
            pool="p",
            name="n",
            attributes={"z": 1, "a": ["x", "y"], "v": DeviceAttribute(version="1.0.0")},
            network_data=NetworkDeviceData(ips=["10.0.0.1/24"]),
        )
        metadata = DeviceMetadata(
            metadata=ObjectMeta(name="c", namespace="ns", uid="u"),
            requests=[DeviceMetadataRequest(name="r", devices=[device]), DeviceMetadataRequest()],
        )
        assert metadata.to_document() == {
            "name": "c",
            "namespace": "ns",
            "uid": "u",
            "podClaimName": None,
            "files": [],
            "requests": [
                {
                    "name": "r",
                    "devices": [
                        {
                            "driver": "d",
                            "pool": "p",
                            "name": "n",
                            "attributes": {
                                "a": {"strings": ["x", "y"]},
                                "v": {"version": "1.0.0"},
                                "z": {"int": 1},
                            },
                            "networkData": {
                                "interfaceName": "",
                                "ips": ["10.0.0.1/24"],
                                "hardwareAddress": "",
                            },
                        }
                    ],
                },
                {"name": "", "devices": []},
            ],
        }


def test_pydantic_dump_as_the_readme_shows() -> None:
    adapter = TypeAdapter(DeviceMetadata)
    for claim in list_claims(root=SAMPLE):
        metadata = claim.read(driver=claim.drivers[0])
        dumped = json.loads(
            adapter.dump_json(metadata, by_alias=True, exclude_defaults=True, exclude={"sources"})
        )
        assert "generateName" not in dumped["metadata"]
        assert dumped == {key: value for key, value in metadata.to_wire().items() if key != "kind"}
