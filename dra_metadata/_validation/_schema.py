"""JSON Schemas (2020-12) of the DeviceMetadata wire format, generated from the models.

pydantic derives the shape from the dataclasses (wire names, types, nesting); the limits of the
validator (spec §5.1) that a schema can express are added here. Run

    python -m dra_metadata._validation._schema schemas

to rewrite the committed files; tests/validation/test_schema.py fails when they drift.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from dra_metadata._model import _metadata, _models, _semver
from dra_metadata._model._checks import INT64_MAX, INT64_MIN
from dra_metadata._model._metadata import DeviceMetadata
from dra_metadata._model._models import ATTRIBUTE_MEMBERS
from dra_metadata._model._versions import KIND, KNOWN_API_VERSIONS
from dra_metadata._validation._validate import LABEL_PATTERN as _LABEL
from dra_metadata._validation._validate import SUBDOMAIN_PATTERN as _SUBDOMAIN

# The validator's patterns; JSON Schema regexes have no flags, so caseless spells out A-Z.
_CASELESS_SUBDOMAIN = _SUBDOMAIN.replace("a-z0-9", "a-zA-Z0-9")
_INT64 = {"minimum": INT64_MIN, "maximum": INT64_MAX}


def _constrain(schema: dict[str, Any], **constraints: Any) -> None:
    """Add constraints to a property, inside the non-null branch of an optional one."""
    for branch in schema.get("anyOf", [schema]):
        if branch.get("type") != "null":
            branch.update(constraints)


def _load_the_models_public_names() -> None:
    """Make every model importable by name from the module the models report as theirs.

    The models report the public package (``dra_metadata``) as their module, and pydantic
    resolves their annotations in that module's namespace; but the package imports each public
    name on first use, so a model not used yet would be missing there.
    """
    package = sys.modules[DeviceMetadata.__module__]
    for module in (_metadata, _models, _semver):
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == package.__name__:
                getattr(package, value.__name__, None)


def json_schema(api_version: str = KNOWN_API_VERSIONS[0]) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a valid DeviceMetadata object of ``api_version``.

    Generated from the models by pydantic (imported here, on demand), with the limits of the
    upstream validator that a schema can express. Lengths in a schema count characters, the
    validator counts bytes: `dra_metadata.validate` is the authority for non-ASCII text.
    """
    if api_version not in KNOWN_API_VERSIONS:
        raise ValueError(f"unknown API version {api_version!r}; known: {KNOWN_API_VERSIONS}")
    from pydantic import TypeAdapter  # noqa: PLC0415 - pydantic only when a schema is asked for

    _load_the_models_public_names()
    generated = TypeAdapter(DeviceMetadata).json_schema(by_alias=True, mode="serialization")
    definitions = generated["$defs"]
    # DeviceMetadata refers to itself through `sources`, which is not part of the wire format.
    schema = definitions.pop("DeviceMetadata")
    del definitions["MetadataSource"]
    properties = schema["properties"]
    del properties["sources"]
    properties["apiVersion"] = {"const": api_version, "title": "Api Version"}
    properties = {"kind": {"const": KIND, "title": "Kind"}, **properties}
    schema["properties"] = properties
    schema["required"] = ["kind", "apiVersion"]
    _constrain(properties["podClaimName"], pattern=f"^{_LABEL}$", maxLength=63)

    meta = definitions["ObjectMeta"]["properties"]
    _constrain(meta["generation"], minimum=0, maximum=INT64_MAX)
    _constrain(meta["deletionGracePeriodSeconds"], **_INT64)
    _constrain(
        definitions["ManagedFieldsEntry"]["properties"]["operation"], enum=["Apply", "Update"]
    )
    definitions["ManagedFieldsEntry"]["required"] = ["operation"]
    owner_reference = definitions["OwnerReference"]
    owner_reference["required"] = ["apiVersion", "kind", "name", "uid"]
    for name in owner_reference["required"]:
        _constrain(owner_reference["properties"][name], minLength=1)

    request = definitions["DeviceMetadataRequest"]
    request["required"] = ["name"]
    _constrain(request["properties"]["name"], minLength=1)

    device = definitions["Device"]
    device["required"] = ["driver", "pool", "name"]
    device_properties = device["properties"]
    _constrain(
        device_properties["driver"], minLength=1, maxLength=63, pattern=f"^{_CASELESS_SUBDOMAIN}$"
    )
    _constrain(
        device_properties["pool"],
        minLength=1,
        maxLength=253,
        pattern=f"^{_SUBDOMAIN}(/{_SUBDOMAIN})*$",
    )
    _constrain(device_properties["name"], minLength=1, maxLength=63, pattern=f"^{_LABEL}$")
    _constrain(device_properties["attributes"], maxProperties=32)

    attribute = definitions["DeviceAttribute"]
    attribute_properties = attribute["properties"]
    _constrain(attribute_properties["int"], **_INT64)
    attribute_properties["ints"]["items"].update(_INT64)
    attribute_properties["strings"]["items"]["maxLength"] = 64
    attribute["oneOf"] = [{"required": [member]} for member in ATTRIBUTE_MEMBERS]

    network = definitions["NetworkDeviceData"]["properties"]
    _constrain(network["interfaceName"], maxLength=256)
    _constrain(network["ips"], maxItems=16, uniqueItems=True)
    _constrain(network["hardwareAddress"], maxLength=128)

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"DeviceMetadata {api_version}",
        "description": (
            "One object of a DRA device metadata stream (KEP-5304), as the upstream validator "
            "accepts it. Generated from the dra_metadata models; do not edit."
        ),
        **{key: value for key, value in schema.items() if key not in {"title", "description"}},
        "$defs": definitions,
    }


def schema_file_name(api_version: str) -> str:
    """``metadata.resource.k8s.io_v1beta1.json`` for ``metadata.resource.k8s.io/v1beta1``."""
    return api_version.replace("/", "_") + ".json"


def render(api_version: str) -> bytes:
    """The committed form of a schema: indented JSON and a final newline."""
    return orjson.dumps(json_schema(api_version), option=orjson.OPT_INDENT_2) + b"\n"


def main(arguments: list[str]) -> int:
    """Write one schema file per known API version into the given directory."""
    if len(arguments) != 1:
        print("usage: python -m dra_metadata._validation._schema DIRECTORY", file=sys.stderr)  # noqa: T201
        return 2
    directory = Path(arguments[0])
    directory.mkdir(parents=True, exist_ok=True)
    for api_version in KNOWN_API_VERSIONS:
        path = directory / schema_file_name(api_version)
        path.write_bytes(render(api_version))
        print(path)  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
