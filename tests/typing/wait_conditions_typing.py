"""Type-checked conditions of the waits (mypy --strict runs over this file; pytest does not):
a condition may answer None, a bool or a str."""

from __future__ import annotations

from pathlib import Path

import dra_metadata
from dra_metadata import DeviceMetadata


def newer(metadata: DeviceMetadata) -> bool:
    return metadata.generation >= 2


def why_not(metadata: DeviceMetadata) -> str | None:
    return None if metadata.devices else "no devices"


async def conditions(root: Path) -> int:
    by_bool: DeviceMetadata = dra_metadata.wait_until(
        lambda m: m.generation >= 0, "fast-net", "vf", root=root, timeout=3
    )
    by_function: DeviceMetadata = dra_metadata.wait_until(newer, "c", "r", root=root, timeout=3)
    by_reason: DeviceMetadata = await dra_metadata.await_until(
        why_not, "c", "r", root=root, timeout=3
    )
    condition: dra_metadata.Condition = newer
    either: dra_metadata.Condition = why_not
    both: DeviceMetadata = dra_metadata.wait_until(condition, "c", "r", timeout=None)
    assert either is not condition
    return by_bool.generation + by_function.generation + by_reason.generation + both.generation
