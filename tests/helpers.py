"""Building blocks for tests: the upstream test object, as wire JSON."""

from __future__ import annotations

import copy
import os
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import orjson
import pytest

from dra_metadata import MetadataDecodeError, decode_stream

V1ALPHA1 = "metadata.resource.k8s.io/v1alpha1"
V1BETA1 = "metadata.resource.k8s.io/v1beta1"

_UPSTREAM_TEST_OBJECT: dict[str, Any] = {
    "kind": "DeviceMetadata",
    "apiVersion": V1ALPHA1,
    "metadata": {"name": "my-claim", "namespace": "default", "uid": "uid-1234", "generation": 1},
    "requests": [
        {
            "name": "gpu",
            "devices": [
                {
                    "driver": "gpu.example.com",
                    "pool": "worker-0",
                    "name": "gpu-0",
                    "attributes": {"model": {"string": "LATEST-GPU-MODEL"}},
                }
            ],
        }
    ],
}


def wire_object(api_version: str | None = V1ALPHA1, **top_level: Any) -> dict[str, Any]:
    """The object of upstream's decode tests; keyword arguments replace top-level keys
    (``None`` removes the key)."""
    obj = copy.deepcopy(_UPSTREAM_TEST_OBJECT)
    obj["apiVersion"] = api_version
    obj.update(top_level)
    return {key: value for key, value in obj.items() if value is not None}


def compact(obj: Any) -> bytes:
    """One stream object as upstream's tests write it: compact JSON and a newline."""
    return orjson.dumps(obj) + b"\n"


def stream(*objects: Any) -> bytes:
    return b"".join(compact(obj) for obj in objects)


def outcome(data: bytes) -> tuple[Any, ...]:
    """Everything a caller can see of a decode: the result, or the error and its attributes."""
    try:
        result = decode_stream(data)
    except MetadataDecodeError as error:
        return (
            type(error).__name__,
            str(error),
            error.object_index,
            error.api_version,
            error.field,
            error.truncated,
            getattr(error, "unknown_versions", None),
        )
    return (result.metadata, result.api_version, result.skipped_versions)


def read_every_object_exactly(patch: pytest.MonkeyPatch) -> None:
    """Make decode_stream read every object with the exact parser, as it does for what orjson
    refuses: the writer's stream takes the general way, which reads with ``_read_value``."""
    from dra_metadata._decoding import _decode as decode_module  # noqa: PLC0415

    patch.setattr(
        decode_module,
        "_read_value",
        lambda data, start, first: decode_module._read_value_exactly(data, start),  # noqa: ARG005
    )
    general = decode_module._decode_objects
    patch.setattr(decode_module, "decode_bytes", lambda data, path=None: general(data, path, None))


def compiler_and_headers() -> str | None:
    """Why this machine cannot compile the package's extension module, or None if it can."""
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler}) on this machine"
    if not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        return "no Python headers (Python.h) on this machine"
    return None
