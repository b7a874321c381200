"""What the fault tests' child processes share: the metadata they write, and how they run.

The fault tests run writers and readers in child processes (to fail their system calls, or to
run them as another user); each child starts with PRELUDE, the same helpers in its own code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from dra_metadata import (
    Device,
    DeviceMetadata,
    DeviceMetadataRequest,
    NetworkDeviceData,
    ObjectMeta,
)

DRIVER = "nic.example.com"

# Child processes build their metadata with this, as the tests here do.
PRELUDE = """
import errno, json, os, sys
from pathlib import Path
from dra_metadata import *
from dra_metadata.writer import encode_stream, update_metadata_file, write_metadata_file

def metadata(generation, devices=1):
    return DeviceMetadata(
        metadata=ObjectMeta(name="net", namespace="ns", uid="u-1", generation=generation),
        requests=[DeviceMetadataRequest(name="nic", devices=[
            Device(driver="nic.example.com", pool="node-a", name=f"nic-{index}",
                   network_data=NetworkDeviceData("net1", (f"10.0.{index % 250}.5/24",)))
            for index in range(devices)
        ])],
    )

def failure(call):
    try:
        call()
    except (MetadataWriteError, MetadataReadError) as error:
        return {"type": type(error).__name__, "errno": error.errno, "message": str(error)}
    return None
"""


def metadata(generation: int, devices: int = 1) -> DeviceMetadata:
    return DeviceMetadata(
        metadata=ObjectMeta(name="net", namespace="ns", uid="u-1", generation=generation),
        requests=[
            DeviceMetadataRequest(
                name="nic",
                devices=[
                    Device(
                        driver=DRIVER,
                        pool="node-a",
                        name=f"nic-{index}",
                        network_data=NetworkDeviceData("net1", (f"10.0.{index % 250}.5/24",)),
                    )
                    for index in range(devices)
                ],
            )
        ],
    )


def run_child(
    code: str, *arguments: str, prefix: tuple[str, ...] = (), **options: Any
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*prefix, sys.executable, "-c", PRELUDE + code, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/",
        **options,
    )
    assert result.returncode == 0, result.stderr
    return result


def child_json(code: str, *arguments: str, **options: Any) -> Any:
    return json.loads(run_child(code, *arguments, **options).stdout)
