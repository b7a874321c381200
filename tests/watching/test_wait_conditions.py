"""What a wait's condition (and wait_for's predicate) may answer.

A condition answers None or True (ready), or a sentence or False (not ready); anything else
is a mistake in the caller's code and a TypeError naming what came back, raised at the first
answer: never an internal error, never a wait that runs to its timeout.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import Device, DeviceMetadata, NetworkDeviceData, WaitTimeoutError
from dra_metadata.testing import MetadataTree

LONG = 60.0
"""The timeout of waits that must end at once: far longer than any of them may take."""


def tree(tmp_path: Path) -> Path:
    metadata_tree = MetadataTree(tmp_path)
    device = Device(name="nic-0", network_data=NetworkDeviceData("net1"))
    metadata_tree.add_claim("fast-net", "vf", "sriov.example.com", [device], generation=3)
    return tmp_path


def test_a_condition_that_returns_true_is_ready(tmp_path: Path) -> None:
    root = tree(tmp_path)
    metadata = dra_metadata.wait_until(
        lambda m: m.generation >= 0, "fast-net", "vf", root=root, timeout=LONG
    )
    assert metadata.generation == 3
    awaited = asyncio.run(
        dra_metadata.await_until(
            lambda m: m.generation >= 3, "fast-net", "vf", root=root, timeout=LONG
        )
    )
    assert awaited.generation == 3


def test_a_condition_that_returns_false_is_not_ready(tmp_path: Path) -> None:
    root = tree(tmp_path)
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_until(
            lambda m: m.generation > 3, "fast-net", "vf", root=root, timeout=0.2
        )
    assert info.value.reason == "the condition returned False"
    assert info.value.metadata is not None
    assert info.value.metadata.generation == 3
    with pytest.raises(WaitTimeoutError) as awaited:
        asyncio.run(
            dra_metadata.await_until(lambda _: False, "fast-net", "vf", root=root, timeout=0.2)
        )
    assert awaited.value.reason == "the condition returned False"


def test_a_sentence_and_none_keep_their_meaning(tmp_path: Path) -> None:
    root = tree(tmp_path)
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_until(lambda _: "not yet", "fast-net", "vf", root=root, timeout=0.2)
    assert info.value.reason == "not yet"
    ready = dra_metadata.wait_until(lambda _: None, "fast-net", "vf", root=root, timeout=LONG)
    assert ready.name == "fast-net"


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        (1, "int 1"),
        (0, "int 0"),
        (0.5, "float 0.5"),
        ([], "list []"),
        (["no devices"], "list ['no devices']"),
        (b"not yet", "bytes b'not yet'"),
        (NetworkDeviceData("net1"), "NetworkDeviceData NetworkDeviceData(interface_name='net1')"),
    ],
)
def test_any_other_answer_is_a_type_error_at_once(
    tmp_path: Path, answer: object, shown: str
) -> None:
    root = tree(tmp_path)

    def condition(_: DeviceMetadata) -> Any:
        return answer

    waits = [
        lambda: dra_metadata.wait_until(condition, "fast-net", "vf", root=root, timeout=LONG),
        lambda: asyncio.run(
            dra_metadata.await_until(condition, "fast-net", "vf", root=root, timeout=LONG)
        ),
    ]
    for wait in waits:
        started = time.monotonic()
        with pytest.raises(TypeError) as info:
            wait()
        assert str(info.value) == (
            f"the condition returned {shown}: it must return None or True when the metadata "
            "is ready, else a str saying why not, or False"
        )
        assert time.monotonic() - started < LONG / 2  # at the first answer, not at the timeout


def test_a_condition_that_is_not_callable_is_refused_at_the_call(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="^condition must be callable, not str$"):
        dra_metadata.wait_until(
            "generation >= 2",  # type: ignore[arg-type]
            "fast-net",
            "vf",
            root=tmp_path,
            timeout=LONG,
        )


def test_a_predicate_answers_by_its_truth_value(tmp_path: Path) -> None:
    root = tree(tmp_path)
    for predicate in (
        lambda device: device.network_data is not None,
        lambda device: device.network_data,  # an object, or None: its truth value
    ):
        ready = dra_metadata.wait_for(predicate, "fast-net", "vf", root=root, timeout=LONG)
        assert ready.devices[0].name == "nic-0"
    with pytest.raises(WaitTimeoutError, match="device nic-0 not ready"):
        dra_metadata.wait_for(lambda _: None, "fast-net", "vf", root=root, timeout=0.1)


def test_a_predicate_that_answers_a_sentence_is_a_type_error_at_once(tmp_path: Path) -> None:
    # A condition given to wait_for: its "not ready, because ..." would read as ready.
    root = tree(tmp_path)

    def predicate(device: Device) -> Any:
        return None if device.network_data is None else "no IPs yet"

    waits = [
        lambda: dra_metadata.wait_for(predicate, "fast-net", "vf", root=root, timeout=LONG),
        lambda: asyncio.run(
            dra_metadata.await_for(predicate, "fast-net", "vf", root=root, timeout=LONG)
        ),
    ]
    for wait in waits:
        started = time.monotonic()
        with pytest.raises(TypeError) as info:
            wait()
        assert str(info.value) == (
            "the predicate returned str 'no IPs yet' for device nic-0: it answers True (this "
            "device is ready) or False; a sentence saying why not is the answer of a wait_until "
            "condition"
        )
        assert time.monotonic() - started < LONG / 2
