"""The committed JSON Schemas: generated from the models, and meaningful."""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import given, settings

from dra_metadata import KNOWN_API_VERSIONS, DeviceMetadata, json_schema, strategies, validate
from dra_metadata._validation._schema import render, schema_file_name
from dra_metadata.writer import encode_stream

from helpers import REPO, UPSTREAM, V1ALPHA1, V1BETA1, wire_object

SCHEMAS = REPO / "schemas"


def validator(api_version: str) -> jsonschema.Draft202012Validator:
    schema = orjson.loads((SCHEMAS / schema_file_name(api_version)).read_bytes())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("api_version", KNOWN_API_VERSIONS)
def test_committed_schemas_are_what_the_models_generate(api_version: str) -> None:
    committed = (SCHEMAS / schema_file_name(api_version)).read_bytes()
    assert committed == render(api_version), (
        "schemas/ drifted from the models: run `python -m dra_metadata._validation._schema schemas`"
    )


def test_one_schema_per_known_version() -> None:
    assert sorted(path.name for path in SCHEMAS.glob("*.json")) == sorted(
        schema_file_name(version) for version in KNOWN_API_VERSIONS
    )


def test_schema_pins_kind_and_api_version() -> None:
    schema = json_schema(V1ALPHA1)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["apiVersion"] == {"const": V1ALPHA1, "title": "Api Version"}
    check = validator(V1BETA1)
    assert not check.is_valid(wire_object(V1ALPHA1))
    assert check.is_valid(wire_object(V1BETA1))
    assert not check.is_valid({k: v for k, v in wire_object(V1BETA1).items() if k != "kind"})
    with pytest.raises(ValueError, match="unknown API version"):
        json_schema("metadata.resource.k8s.io/v9")


def first_object(data: bytes) -> Any:
    end = data.find(b"}\n{")
    return orjson.loads(data if end == -1 else data[: end + 1])


@settings(max_examples=60, deadline=None)
@given(strategies.device_metadata(full_object_meta=True))
def test_generated_valid_objects_pass_the_schema(metadata: DeviceMetadata) -> None:
    assert validate(metadata, profile="strict") == ()
    for version in KNOWN_API_VERSIONS:
        document = first_object(encode_stream(metadata, versions=[version]))
        errors = [error.message for error in validator(version).iter_errors(document)]
        assert errors == []


def device_document(**device: Any) -> dict[str, Any]:
    base_device = {"driver": "gpu.example.com", "pool": "worker-0", "name": "gpu-0"}
    return wire_object(V1BETA1, requests=[{"name": "gpu", "devices": [base_device | device]}])


@pytest.mark.parametrize(
    ("document", "why"),
    [
        (device_document(attributes={f"a{i}": {"int": i} for i in range(33)}), "33 attributes"),
        (device_document(networkData={"ips": [f"10.0.0.{i}/24" for i in range(17)]}), "17 IPs"),
        (device_document(networkData={"ips": ["10.0.0.1/24", "10.0.0.1/24"]}), "duplicate IP"),
        (device_document(networkData={"interfaceName": "x" * 257}), "long interface name"),
        (device_document(networkData={"hardwareAddress": "x" * 129}), "long MAC"),
        (device_document(driver="a" * 64), "driver too long"),
        (device_document(driver=""), "empty driver"),
        (device_document(driver="-bad"), "driver pattern"),
        (device_document(pool="worker-0/"), "pool pattern"),
        (device_document(name="GPU-0"), "device name pattern"),
        (device_document(attributes={"m": {}}), "attribute with no member"),
        (device_document(attributes={"m": {"int": 1, "bool": True}}), "two members"),
        (device_document(attributes={"m": {"int": 2**63}}), "int64 overflow"),
        (device_document(attributes={"m": {"strings": ["x" * 65]}}), "long strings element"),
        (wire_object(V1BETA1, podClaimName="INVALID"), "pod claim name"),
        (wire_object(V1BETA1, requests=[{"name": ""}]), "empty request name"),
        (wire_object(V1BETA1, metadata={"generation": -1}), "negative generation"),
        (wire_object(V1BETA1, metadata={"managedFields": [{"operation": "Patch"}]}), "operation"),
    ],
)
def test_limits_reject_bad_documents(document: dict[str, Any], why: str) -> None:
    check = validator(V1BETA1)
    assert not check.is_valid(document), why
    # ...and the document without the defect passes (the schema rejects for that reason).
    assert check.is_valid(device_document()), why


def test_fixture_is_rejected_for_its_deliberate_defects() -> None:
    document = first_object((UPSTREAM / "HEAD" / "metadata.json").read_bytes())
    messages = sorted(error.json_path for error in validator(V1BETA1).iter_errors(document))
    assert messages == [
        "$.metadata.managedFields[0].operation",
        "$.podClaimName",
        "$.requests[0].devices[0].attributes.model",
    ]
    repaired = copy.deepcopy(document)
    repaired["metadata"]["managedFields"][0]["operation"] = "Apply"
    repaired["podClaimName"] = "claim"
    repaired["requests"][0]["devices"][0]["attributes"]["model"] = {"string": "LATEST"}
    assert validator(V1BETA1).is_valid(repaired)


def test_a_fresh_interpreter_generates_the_schema_first_thing() -> None:
    # The package imports its names on first use; a schema asked for before any model is used
    # must still resolve every model (pydantic looks them up in the package's namespace).
    result = subprocess.run(
        [sys.executable, "-c", "import dra_metadata; print(len(dra_metadata.json_schema()))"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 0
