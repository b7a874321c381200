"""decode_stream against the orjson floor on realistic streams of several shapes; import time.

    python benchmarks/bench_decode.py [--quick]

Each shape is a stream as the upstream writer writes it, measured in a fresh interpreter: the
floor is orjson.loads of the first object's bytes alone (target: decode_stream at most
2.5x the floor on every shape). Each shape is measured twice: with the compiled attribute
check (dra_metadata/_decoding/_speedups.c, which an install builds where it finds a C
compiler) and in pure Python (DRA_METADATA_PURE_PYTHON=1, what a build without a compiler gives).

Also: the naive way (json + a pydantic model) on the default shape, `import dra_metadata`
against `import pydantic, orjson` (at most 30 ms more), what the cheapest exact check for
duplicate keys would add (the decision to leave them to the exact path rests on it: see
docs/explanation/decoding.md), and what a decode costs when the layout of its attributes is new
to the process.
"""

from __future__ import annotations

import json
import re
from itertools import cycle
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

import dra_metadata
from dra_metadata._decoding._convert import COMPILED, PURE_PYTHON_VARIABLE

from _common import process_seconds, python
from _decode_cases import best_cpu_seconds, case_options, first_object, run_cases, shape_stream

TARGET = 2.5
SHAPES: dict[str, dict[str, Any]] = {
    "8 GPUs x 32 attributes (default)": {},
    "1 GPU x 32 attributes": {"devices": 1},
    "16 GPUs x 32 attributes": {"devices": 16},
    "all eight value kinds": {"kinds": 8},
    "qualified names only": {"names": "qualified"},
    "unqualified names only": {"names": "unqualified"},
    "no network data": {"network": False},
    "one version": {"versions": 1},
}


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


def measure_shape(name: str, quick: bool) -> dict[str, Any]:
    data = shape_stream(**SHAPES[name])
    first = first_object(data)
    assert dra_metadata.decode_stream(data).metadata == dra_metadata.decode_stream(first).metadata
    number, rounds = (20, 2) if quick else (2000, 15)
    best = best_cpu_seconds(
        {
            "floor": lambda: orjson.loads(first),
            "decode": lambda: dra_metadata.decode_stream(data),
        },
        number=number,
        rounds=rounds,
    )
    return {"shape": name, "bytes": len(data), "compiled": COMPILED, **best}


def first_decodes_of_a_layout(name: str, quick: bool) -> dict[str, float]:
    """What a decode costs when its attributes' layout is not known yet: decode_stream keeps
    the layouts of the last 16 first attribute names, and 20 streams whose attributes are
    named apart are decoded in turn (as a process that reads one file once does)."""
    data = shape_stream(**SHAPES[name])
    streams = [re.sub(rb'"attr(?=[0-9])', b'"v%02dattr' % each, data) for each in range(20)]
    assert len(dra_metadata.decode_stream(streams[1]).metadata.devices[0].attributes) == 32
    firsts = cycle([first_object(stream) for stream in streams])
    turn = cycle(streams)
    number, rounds = (20, 2) if quick else (2000, 15)
    return best_cpu_seconds(
        {
            "floor": lambda: orjson.loads(next(firsts)),
            "decode": lambda: dra_metadata.decode_stream(next(turn)),
        },
        number=number,
        rounds=rounds,
    )


def print_shapes(quick: bool) -> None:
    """Each shape's ratio with the compiled attribute check and in pure Python."""
    print(f"decode_stream / floor (orjson.loads of the first object); target <= {TARGET}x")
    if COMPILED:
        print(
            "  compiled: the attribute check of dra_metadata._decoding._speedups "
            "(what an install builds)"
        )
    else:
        print(
            "  compiled: NOT MEASURED, dra_metadata._decoding._speedups "
            "is not built for this Python"
        )
    print(f"  pure Python: {PURE_PYTHON_VARIABLE}=1 (a build without a C compiler)")
    print(f"  {'shape':34} {'bytes':>7}    {'floor':>7}  {'compiled':>16}  {'pure Python':>16}")
    pure_results = run_cases(
        Path(__file__), list(SHAPES), quick=quick, environment={PURE_PYTHON_VARIABLE: "1"}
    )
    modes = {"compiled": run_cases(Path(__file__), list(SHAPES), quick=quick) if COMPILED else []}
    modes["pure Python"] = pure_results
    for mode, results in modes.items():  # each fresh interpreter ran in the mode it reports
        assert all(result["compiled"] is (mode == "compiled") for result in results), mode
    worst = dict.fromkeys(modes, 0.0)
    for index, name in enumerate(SHAPES):
        columns = []
        for mode, results in modes.items():
            if not results:
                columns.append(f"{'-':>16}")
                continue
            result = results[index]
            ratio = result["decode"] / result["floor"]
            worst[mode] = max(worst[mode], ratio)
            columns.append(f"{result['decode'] * 1e6:7.1f} us {ratio:5.2f}x")
        floor = (modes["compiled"] or pure_results)[index]["floor"]
        size = pure_results[index]["bytes"]
        print(f"  {name:34} {size:7} B  {floor * 1e6:7.1f} us  {'  '.join(columns)}")
    for mode, ratio in worst.items():
        if modes[mode]:
            print(f"  worst shape, {mode}: {ratio:.2f}x")


def main() -> None:
    quick, case = case_options(__doc__, SHAPES)
    if case:
        print(json.dumps(measure_shape(case, quick)))
        return

    print_shapes(quick)
    mode = "compiled" if COMPILED else "pure Python"
    print(f"first decode of a layout ({mode}; 20 streams of other attribute names, in turn):")
    for name in ("1 GPU x 32 attributes", "8 GPUs x 32 attributes (default)"):
        best = first_decodes_of_a_layout(name, quick)
        print(
            f"  {name:34} decode {best['decode'] * 1e6:7.1f} us"
            f"  {best['decode'] / best['floor']:5.2f}x the floor"
        )

    data = shape_stream()
    first = first_object(data)
    text = data.decode()
    assert naive_decode(text).requests[0].devices[0].name == "gpu-0"
    number, rounds = (20, 2) if quick else (1000, 9)
    best = best_cpu_seconds(
        {
            "floor: orjson.loads(first object)": lambda: orjson.loads(first),
            "dra_metadata.decode_stream(stream)": lambda: dra_metadata.decode_stream(data),
            "naive: json raw_decode + pydantic": lambda: naive_decode(text),
            "duplicate keys: count the quotes": lambda: first.count(b'"'),
        },
        number=number,
        rounds=rounds,
    )
    floor = best["floor: orjson.loads(first object)"]
    decode = best["dra_metadata.decode_stream(stream)"]
    print(f"default shape in one process ({len(data)} bytes):")
    for name, seconds in best.items():
        print(f"  {name:38} {seconds * 1e6:9.1f} us   {seconds / floor:5.2f}x floor")
    quotes = best["duplicate keys: count the quotes"]
    print(
        f"  an exact duplicate-key check needs at least the quote count: "
        f"{quotes / decode:.0%} of decode_stream (the limit set is 10%)"
    )

    runs = 3 if quick else 21
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
