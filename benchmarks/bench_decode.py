"""decode_stream against the orjson floor and the naive way, side by side; and import time.

    python benchmarks/bench_decode.py [--quick]

Targets (issue #2): decode_stream at most 3x the floor (orjson.loads of the first object's bytes
only); `import dra_metadata` at most 30 ms over `import pydantic, orjson`.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

import dra_metadata

from _common import interleaved_best, process_seconds, python, quick_option, realistic_stream


class _Naive(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)


class NaiveAttribute(_Naive):
    int_: int | None = Field(None, alias="int")
    bool_: bool | None = Field(None, alias="bool")
    string: str | None = None
    version: str | None = None
    ints: list[int] = []
    bools: list[bool] = []
    strings: list[str] = []
    versions: list[str] = []


class NaiveNetwork(_Naive):
    interface_name: str = Field("", alias="interfaceName")
    ips: list[str] = []
    hardware_address: str = Field("", alias="hardwareAddress")


class NaiveDevice(_Naive):
    driver: str = ""
    pool: str = ""
    name: str = ""
    attributes: dict[str, NaiveAttribute] = {}
    network_data: NaiveNetwork | None = Field(None, alias="networkData")


class NaiveRequest(_Naive):
    name: str = ""
    devices: list[NaiveDevice] = []


class NaiveMeta(_Naive):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    generation: int = 0


class NaiveMetadata(_Naive):
    api_version: str = Field(alias="apiVersion")
    kind: str
    metadata: NaiveMeta = NaiveMeta()
    pod_claim_name: str | None = Field(None, alias="podClaimName")
    requests: list[NaiveRequest] = []


def naive_decode(text: str) -> NaiveMetadata:
    """What one would write without this library: json raw_decode + a pydantic model per object."""
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while text[position].isspace():
            position += 1
        value: Any
        value, position = decoder.raw_decode(text, position)
        model = NaiveMetadata.model_validate(value)
        if model.api_version in dra_metadata.KNOWN_API_VERSIONS:
            return model


def main() -> None:
    quick = quick_option(__doc__)
    number, rounds, runs = (20, 2, 3) if quick else (2000, 9, 21)

    data = realistic_stream()
    first = data[: data.index(b"}\n{") + 1]
    text = data.decode()
    assert naive_decode(text).requests[0].devices[0].name == "gpu-0"
    assert dra_metadata.decode_stream(data).metadata.devices[7].name == "gpu-7"

    best = interleaved_best(
        {
            "floor: orjson.loads(first object)": lambda: orjson.loads(first),
            "dra_metadata.decode_stream(stream)": lambda: dra_metadata.decode_stream(data),
            "naive: json raw_decode + pydantic": lambda: naive_decode(text),
        },
        number=number,
        rounds=rounds,
    )
    floor = best["floor: orjson.loads(first object)"]
    print(f"stream: {len(data)} bytes, 2 objects (v1beta1, v1alpha1), 8 devices x 32 attributes")
    for name, seconds in best.items():
        print(f"  {name:38} {seconds * 1e6:9.1f} us   {seconds / floor:5.2f}x floor")

    imports = process_seconds(
        {
            "python -c 'import pydantic, orjson'": python("import pydantic, orjson"),
            "python -c 'import dra_metadata'": python("import dra_metadata"),
        },
        runs=runs,
    )
    baseline, ours = imports.values()
    print("import time (median wall time of a fresh interpreter):")
    for name, seconds in imports.items():
        print(f"  {name:38} {seconds * 1e3:9.1f} ms")
    print(f"  dra_metadata adds {(ours - baseline) * 1e3:+.1f} ms ({ours / baseline:.2f}x)")


if __name__ == "__main__":
    main()
