"""Inputs and timing for the decode benchmarks: realistic stream shapes and hostile streams.

Each case is measured in a fresh interpreter (``python bench_*.py --case NAME``), so that one
case's garbage and caches do not weigh on the next. Times are the CPU time of the benchmark
process (``time.process_time``): other processes on a busy machine do not count.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from dra_metadata import (
    KNOWN_API_VERSIONS,
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    NetworkDeviceData,
    ObjectMeta,
)
from dra_metadata.writer import encode_stream

_KINDS = (
    lambda i, d: DeviceAttribute(int=i * 1000 + d),
    lambda i, d: DeviceAttribute(string=f"value-{d}-{i}-0000:{i:02x}:00.0"),
    lambda i, _: DeviceAttribute(bool=i % 8 == 2),
    lambda i, d: DeviceAttribute(version=f"{i}.{d}.0"),
    lambda i, d: DeviceAttribute(ints=[i, d, i * d]),
    lambda i, d: DeviceAttribute(bools=[i % 2 == 0, d % 2 == 0]),
    lambda i, d: DeviceAttribute(strings=[f"s-{i}", f"t-{d}"]),
    lambda i, d: DeviceAttribute(versions=[f"1.{i}.0", f"2.{d}.1"]),
)


def _name(index: int, names: str) -> str:
    qualified = f"gpu.example.com/attribute{index}"
    if names == "qualified":
        return qualified
    if names == "unqualified":
        return f"attribute{index}"
    return qualified if index % 3 else f"attr{index}"  # drivers publish both


def shape_stream(
    *,
    devices: int = 8,
    attributes: int = 32,
    kinds: int = 4,
    names: str = "mixed",
    network: bool = True,
    versions: int = 2,
) -> bytes:
    """A stream as the upstream writer writes it, of the given shape."""
    metadata = DeviceMetadata(
        metadata=ObjectMeta(name="training", namespace="ml", uid="0d5c1c52-6a4e", generation=3),
        requests=[
            DeviceMetadataRequest(
                name="gpu",
                devices=[
                    Device(
                        driver="gpu.example.com",
                        pool="node-a",
                        name=f"gpu-{device}",
                        attributes={
                            _name(index, names): _KINDS[index % kinds](index, device)
                            for index in range(attributes)
                        },
                        network_data=NetworkDeviceData(
                            interface_name=f"net{device}",
                            ips=(f"10.0.{device}.5/24", f"fd00::{device}:5/64"),
                            hardware_address=f"02:42:ac:11:00:{device:02x}",
                        )
                        if network
                        else None,
                    )
                    for device in range(devices)
                ],
            )
        ],
    )
    return encode_stream(metadata, versions=KNOWN_API_VERSIONS[:versions])


def first_object(data: bytes) -> bytes:
    """The bytes of the first object of a writer's stream (what the floor parses)."""
    end = data.find(b"}\n{")
    return data if end == -1 else data[: end + 1]


def best_cpu_seconds(
    functions: dict[str, Callable[[], object]], *, number: int, rounds: int
) -> dict[str, float]:
    """Best CPU time per call of each function, measured round-robin."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(rounds):
        for name, function in functions.items():
            start = time.process_time()
            for _ in range(number):
                function()
            best[name] = min(best[name], (time.process_time() - start) / number)
    return best


def run_cases(script: Path, cases: list[str], *, quick: bool) -> list[dict[str, object]]:
    """Run each case of ``script`` in a fresh interpreter; each prints one JSON line."""
    results = []
    for case in cases:
        command = [sys.executable, str(script), "--case", case, *(["--quick"] if quick else [])]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results.append(json.loads(output.splitlines()[-1]))
    return results
