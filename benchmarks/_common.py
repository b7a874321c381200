"""Shared pieces of the benchmarks: the realistic stream and timing helpers."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path

import dra_metadata
from dra_metadata import (
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    NetworkDeviceData,
    ObjectMeta,
)
from dra_metadata.writer import encode_stream

_ATTRIBUTE_KINDS: tuple[Callable[[int, int], DeviceAttribute], ...] = (
    lambda index, device: DeviceAttribute(int=index * 1000 + device),
    lambda index, device: DeviceAttribute(string=f"value-{device}-{index}-0000:{index:02x}:00.0"),
    lambda index, _: DeviceAttribute(bool=index % 8 == 2),
    lambda index, device: DeviceAttribute(version=f"{index}.{device}.0"),
    lambda index, device: DeviceAttribute(ints=[index, device, index * device]),
    lambda index, device: DeviceAttribute(bools=[index % 2 == 0, device % 2 == 0]),
    lambda index, device: DeviceAttribute(strings=[f"s-{index}", f"t-{device}"]),
    lambda index, device: DeviceAttribute(versions=[f"1.{index}.0", f"2.{device}.1"]),
)
"""The eight value kinds; the first four are what drivers publish today."""


def _key(index: int, names: str) -> str:
    """Drivers publish both qualified and unqualified names ("mixed")."""
    qualified = f"gpu.example.com/attribute{index}"
    if names == "qualified":
        return qualified
    if names == "unqualified":
        return f"attribute{index}"
    return qualified if index % 3 else f"attr{index}"


def realistic_metadata(
    devices: int = 8,
    attributes: int = 32,
    *,
    kinds: int = 4,
    names: str = "mixed",
    network: bool = True,
) -> DeviceMetadata:
    """A request with ``devices`` devices of ``attributes`` attributes each, of the first
    ``kinds`` value kinds in turn, named as ``names`` says, with network data or not."""
    return DeviceMetadata(
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
                            _key(index, names): _ATTRIBUTE_KINDS[index % kinds](index, device)
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


def realistic_stream() -> bytes:
    """The realistic object as the upstream writer would write it: v1beta1, then v1alpha1."""
    return encode_stream(realistic_metadata())


def best_seconds(function: Callable[[], object], *, number: int, repeat: int = 7) -> float:
    """The best time of one call over ``repeat`` rounds of ``number`` calls."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number


def interleaved_best(
    functions: dict[str, Callable[[], object]], *, number: int, rounds: int = 7
) -> dict[str, float]:
    """Best time per call of each function, measured round-robin so noise hits all alike."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(rounds):
        for name, function in functions.items():
            best[name] = min(best[name], best_seconds(function, number=number, repeat=1))
    return best


def process_seconds(commands: dict[str, list[str]], *, runs: int) -> dict[str, float]:
    """Median wall time of each command, run round-robin ``runs`` times.

    As after a pip install, the package's bytecode is compiled first and used: a machine that
    sets PYTHONDONTWRITEBYTECODE would otherwise compile it from source at every start.
    """
    package = Path(dra_metadata.__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=environment)
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def quick_option(description: str | None) -> bool:
    """Parse the one option every benchmark has: --quick, few iterations (a smoke test)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke test)")
    return bool(parser.parse_args().quick)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]
