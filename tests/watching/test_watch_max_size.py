"""``max_size=`` of every public wait and watch, on a real 5 MiB file (the default limit: 4 MiB).

The limit is the read functions' own: the default refuses the file with the typed error that
tells a Python caller to pass ``max_size=``, a raised one reads it; with inotify and polling.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import DeviceMetadata, MetadataTooLargeError

from helpers import SAMPLE

FILE = "sriov.example.com-metadata.json"
RAISED = 16 * 1024 * 1024
PADDED = 5 * 1024 * 1024


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A claim and a template request directory, each with one valid 5 MiB file."""
    root = tmp_path_factory.mktemp("large")
    content = (SAMPLE / "resourceclaims" / "fast-net" / "vf" / FILE).read_bytes()
    for kind in ("resourceclaims", "resourceclaimtemplates"):
        directory = root / kind / "c" / "r"
        directory.mkdir(parents=True)
        (directory / FILE).write_bytes(content + b" " * PADDED + b"\n")
    return root


def _ready(metadata: DeviceMetadata) -> str | None:
    return None if metadata.devices else "no devices"


SyncWait = Callable[..., DeviceMetadata]
SYNC_WAITS: dict[str, SyncWait] = {
    "wait_until": lambda **options: dra_metadata.wait_until(_ready, "c", "r", **options),
    "wait_for": lambda **options: dra_metadata.wait_for(lambda _: True, "c", "r", **options),
    "wait_for_network_data": lambda **options: dra_metadata.wait_for_network_data(
        "c", "r", require=("interface_name", "ips"), **options
    ),
}
ASYNC_WAITS: dict[str, Callable[..., Any]] = {
    "await_until": lambda **options: dra_metadata.await_until(_ready, "c", "r", **options),
    "await_for": lambda **options: dra_metadata.await_for(lambda _: True, "c", "r", **options),
    "await_for_network_data": lambda **options: dra_metadata.await_for_network_data(
        "c", "r", require=("interface_name", "ips"), **options
    ),
}


def _watches(root: Path) -> dict[str, Callable[..., Any]]:
    file = root / "resourceclaims" / "c" / "r" / FILE
    return {
        "watch_claim_metadata": lambda **o: dra_metadata.watch_claim_metadata("c", "r", **o),
        "watch_template_metadata": lambda **o: dra_metadata.watch_template_metadata("c", "r", **o),
        "watch_metadata_file": lambda **o: dra_metadata.watch_metadata_file(file, **o),
    }


def _awatches(root: Path) -> dict[str, Callable[..., Any]]:
    file = root / "resourceclaims" / "c" / "r" / FILE
    return {
        "awatch_claim_metadata": lambda **o: dra_metadata.awatch_claim_metadata("c", "r", **o),
        "awatch_template_metadata": lambda **o: dra_metadata.awatch_template_metadata(
            "c", "r", **o
        ),
        "awatch_metadata_file": lambda **o: dra_metadata.awatch_metadata_file(file, **o),
    }


def _assert_names_the_option(error: MetadataTooLargeError) -> None:
    assert f"{FILE}" in str(error)
    assert "pass max_size= to" in str(error)
    assert error.path is not None
    assert error.path.name == FILE


POLLING = pytest.mark.parametrize("force_polling", [False, True], ids=["inotify", "polling"])


@POLLING
@pytest.mark.parametrize("name", sorted(SYNC_WAITS))
def test_waits(root: Path, name: str, force_polling: bool) -> None:
    wait = SYNC_WAITS[name]
    options = {"root": root, "timeout": 30, "force_polling": force_polling}
    with pytest.raises(MetadataTooLargeError) as info:
        wait(**options)
    _assert_names_the_option(info.value)
    metadata = wait(**options, max_size=RAISED)
    assert metadata.devices[0].name == "vf-3"


@POLLING
@pytest.mark.parametrize("name", sorted(ASYNC_WAITS))
def test_async_waits(root: Path, name: str, force_polling: bool) -> None:
    wait = ASYNC_WAITS[name]
    options = {"root": root, "timeout": 30, "force_polling": force_polling}
    with pytest.raises(MetadataTooLargeError) as info:
        asyncio.run(wait(**options))
    _assert_names_the_option(info.value)
    metadata = asyncio.run(wait(**options, max_size=RAISED))
    assert metadata.devices[0].name == "vf-3"


def _options(name: str, root: Path, force_polling: bool) -> dict[str, Any]:
    options: dict[str, Any] = {"timeout": 30, "force_polling": force_polling}
    if "metadata_file" not in name:
        options["root"] = root
    return options


@POLLING
@pytest.mark.parametrize(
    "name", ["watch_claim_metadata", "watch_template_metadata", "watch_metadata_file"]
)
def test_watches(root: Path, name: str, force_polling: bool) -> None:
    watch = _watches(root)[name]
    options = _options(name, root, force_polling)
    with pytest.raises(MetadataTooLargeError) as info:
        next(iter(watch(**options)))
    _assert_names_the_option(info.value)
    events = watch(**options, max_size=RAISED)
    event = next(iter(events))
    events.close()
    assert event.metadata is not None
    assert event.metadata.devices[0].name == "vf-3"


@POLLING
@pytest.mark.parametrize(
    "name", ["awatch_claim_metadata", "awatch_template_metadata", "awatch_metadata_file"]
)
def test_async_watches(root: Path, name: str, force_polling: bool) -> None:
    watch = _awatches(root)[name]
    options = _options(name, root, force_polling)

    async def first(**given: Any) -> dra_metadata.MetadataEvent:
        events = watch(**given)
        try:
            return await events.__anext__()  # type: ignore[no-any-return]
        finally:
            await events.aclose()

    with pytest.raises(MetadataTooLargeError) as info:
        asyncio.run(first(**options))
    _assert_names_the_option(info.value)
    event = asyncio.run(first(**options, max_size=RAISED))
    assert event.metadata is not None
    assert event.metadata.devices[0].name == "vf-3"


@pytest.mark.parametrize("max_size", [-1, float("nan")])
def test_a_bad_limit_is_refused_at_the_call(root: Path, max_size: Any) -> None:
    with pytest.raises(ValueError, match="max_size must be a number of bytes >= 0"):
        dra_metadata.watch_claim_metadata("c", "r", root=root, max_size=max_size)
    with pytest.raises(ValueError, match="max_size must be a number of bytes >= 0"):
        dra_metadata.wait_for(lambda _: True, "c", "r", root=root, timeout=0, max_size=max_size)


def test_a_limit_with_the_api_source_is_refused(root: Path) -> None:
    with pytest.raises(ValueError, match="max_size: only for metadata files"):
        dra_metadata.wait_for(lambda _: True, "c", "r", timeout=0, source="api", max_size=RAISED)
