"""A wait for a claim mounted as the other kind: named, or made from a template.

The files of a claim made from a template are under resourceclaimtemplates/<pod claim name>/,
those of a claim referenced by name under resourceclaims/<claim>/: a wait for the wrong kind
would wait for ever. It says so at once, in one warning on the dra_metadata logger when it
starts, and in every reason (progress and timeout), with what to pass instead and the claims
that are mounted.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import Device, NetworkDeviceData, WaitTimeoutError
from dra_metadata.testing import MetadataTree

LONG = 60.0
MOUNTED = (
    "claims referenced by name: fast-net, training-gpus; claims made from templates (pod claim "
    "names): accelerator"
)
TO_TEMPLATE = (
    "no claim accelerator referenced by name has metadata, but accelerator is the pod claim "
    f"name of a claim made from a template: pass template=True (read_template_metadata reads "
    f"it); {MOUNTED}"
)
TO_NAMED = (
    "no claim made from a template has the pod claim name fast-net, but claim fast-net is "
    f"referenced by name: leave out template=True (read_claim_metadata reads it); {MOUNTED}"
)


def tree(root: Path) -> Path:
    metadata_tree = MetadataTree(root)
    nic = Device(name="nic-0", network_data=NetworkDeviceData("net1"))
    metadata_tree.add_claim("fast-net", "vf", "sriov.example.com", [nic])
    metadata_tree.add_claim("training-gpus", "gpu", "gpu.example.com", [Device(name="gpu-0")])
    metadata_tree.add_template_claim("accelerator", "gpu", "gpu.example.com", [nic])
    return root


class Recorder(logging.Handler):
    """The dra_metadata logger's records, and an event set by the first."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.first = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        self.first.set()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    handler = Recorder()
    logger = logging.getLogger("dra_metadata")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


@pytest.mark.parametrize(
    ("claim", "request_name", "template", "directory", "notice"),
    [
        ("accelerator", "gpu/low-memory", False, "resourceclaims/accelerator/gpu", TO_TEMPLATE),
        ("fast-net", "vf", True, "resourceclaimtemplates/fast-net/vf", TO_NAMED),
    ],
)
def test_the_wait_says_so_when_it_starts_and_in_its_reasons(
    tmp_path: Path,
    recorder: Recorder,
    claim: str,
    request_name: str,
    template: bool,
    directory: str,
    notice: str,
) -> None:
    root = tree(tmp_path)
    stop = threading.Event()
    progress: list[str] = []
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            dra_metadata.wait_for_network_data(
                claim,
                request_name,
                template=template,
                root=root,
                timeout=LONG,
                stop_event=stop,
            )
        except BaseException as error:  # noqa: BLE001 - looked at below
            errors.append(error)

    waiting = threading.Thread(target=wait)
    waiting.start()
    try:
        assert recorder.first.wait(LONG / 2), "no warning when the wait started"
    finally:
        stop.set()
        waiting.join(LONG)
    assert recorder.messages == [f"{root / directory}: this wait is likely in vain: {notice}"]
    (error,) = errors
    assert isinstance(error, WaitTimeoutError)
    assert error.reason == f"stopped; no *-metadata.json file in {root / directory} yet; {notice}"
    # The progress lines say it from the first on; a timeout says it once.
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_until(
            lambda _: None,
            claim,
            request_name,
            template=template,
            root=root,
            timeout=0.3,
            progress=progress.append,
            progress_interval=0.05,
        )
    assert progress
    assert progress[0] == f"no *-metadata.json file in {root / directory} yet; {notice}"
    assert info.value.reason == progress[0]


def test_the_asyncio_waits_say_so_too(tmp_path: Path, recorder: Recorder) -> None:
    root = tree(tmp_path)
    with pytest.raises(WaitTimeoutError) as info:
        asyncio.run(
            dra_metadata.await_for(lambda _: True, "accelerator", "gpu", root=root, timeout=0.1)
        )
    assert info.value.reason.endswith(f"; {TO_TEMPLATE}")
    assert len(recorder.messages) == 1
    assert recorder.messages[0].endswith(f": this wait is likely in vain: {TO_TEMPLATE}")


@pytest.mark.parametrize("request_name", ["gpu", "gpu/low-memory"])
def test_a_request_mounted_only_in_the_other_kind(
    tmp_path: Path, recorder: Recorder, request_name: str
) -> None:
    # accelerator is both a named claim (request nic) and a template claim (request gpu); a
    # subrequest is looked for as its request.
    root = tree(tmp_path)
    MetadataTree(root).add_claim("accelerator", "nic", "nic.example.com", [Device(name="n")])
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_for(lambda _: True, "accelerator", request_name, root=root, timeout=0.1)
    mounted = (
        "claims referenced by name: accelerator, fast-net, training-gpus; claims made from "
        "templates (pod claim names): accelerator"
    )
    sentence = (
        "claim accelerator has no request gpu with metadata (its requests: nic); the claim "
        "with pod claim name accelerator has: pass template=True (read_template_metadata "
        f"reads it); {mounted}; `dra-metadata ls` lists everything mounted"
    )
    directory = root / "resourceclaims" / "accelerator" / "gpu"
    assert info.value.reason == f"no *-metadata.json file in {directory} yet; {sentence}"
    assert recorder.messages == [f"{directory}: this wait is likely in vain: {sentence}"]


def test_a_claim_mounted_as_neither_kind_lists_the_claims_at_the_timeout(
    tmp_path: Path, recorder: Recorder
) -> None:
    root = tree(tmp_path)
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_for_network_data("nope", "vf", root=root, timeout=0.1)
    directory = root / "resourceclaims" / "nope" / "vf"
    assert info.value.reason == (
        f"no *-metadata.json file in {directory} yet; no claim nope referenced by name has "
        f"metadata ({MOUNTED}); `dra-metadata ls` lists everything mounted"
    )
    assert recorder.messages == []  # it may yet be mounted: nothing to warn about at the start


def test_a_wait_of_the_right_kind_warns_of_nothing(tmp_path: Path, recorder: Recorder) -> None:
    root = tree(tmp_path)
    ready = dra_metadata.wait_for_network_data(
        "accelerator", "gpu", template=True, root=root, timeout=LONG
    )
    assert ready.pod_claim_name == "accelerator"
    assert dra_metadata.wait_for_network_data("fast-net", "vf", root=root, timeout=LONG)
    assert recorder.messages == []


def test_a_claim_mounted_as_both_kinds_warns_of_nothing(tmp_path: Path, recorder: Recorder) -> None:
    # accelerator/gpu is both a named claim's request and a template claim's.
    root = tree(tmp_path)
    MetadataTree(root).add_claim("accelerator", "gpu", "gpu.example.com", [Device(name="g")])
    for template in (False, True):
        ready = dra_metadata.wait_for(
            lambda _: True, "accelerator", "gpu", template=template, root=root, timeout=LONG
        )
        assert ready.devices[0].name == ("nic-0" if template else "g")
    assert recorder.messages == []


def test_the_root_from_the_environment_is_looked_at_too(
    tmp_path: Path, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRA_METADATA_ROOT", str(tree(tmp_path)))
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_for(lambda _: True, "accelerator", "gpu", timeout=0.1)
    assert info.value.reason.endswith(f"; {TO_TEMPLATE}")
    directory = tmp_path / "resourceclaims" / "accelerator" / "gpu"
    assert recorder.messages == [f"{directory}: this wait is likely in vain: {TO_TEMPLATE}"]


def test_readers_keep_their_words(tmp_path: Path) -> None:
    root = tree(tmp_path)
    with pytest.raises(dra_metadata.MetadataNotFoundError) as info:
        dra_metadata.read_claim_metadata("accelerator", "gpu", root=root)
    assert str(info.value).endswith(
        ": no claim accelerator referenced by name has metadata, but accelerator is the pod "
        "claim name of a claim made from a template: use read_template_metadata"
    )


def test_readers_name_the_other_kind_that_has_the_request(tmp_path: Path) -> None:
    root = tree(tmp_path)
    MetadataTree(root).add_claim("accelerator", "nic", "nic.example.com", [Device(name="n")])
    with pytest.raises(dra_metadata.MetadataNotFoundError) as info:
        dra_metadata.read_claim_metadata("accelerator", "gpu", root=root)
    assert str(info.value).endswith(
        ": claim accelerator has no request gpu with metadata (its requests: nic); the claim "
        "with pod claim name accelerator has: use read_template_metadata; `dra-metadata ls` "
        "lists everything mounted"
    )


def test_a_wait_that_saw_metadata_says_only_why_it_is_not_ready(tmp_path: Path) -> None:
    # What is mounted is said only where nothing was ever there: here the claim was read.
    root = tree(tmp_path)
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_for_network_data("training-gpus", "gpu", root=root, timeout=0.1)
    assert info.value.reason == "generation 1, device gpu-0 has no networkData"


def test_a_wait_for_one_driver_names_the_drivers_that_have_a_file(tmp_path: Path) -> None:
    root = tree(tmp_path)
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_for_network_data(
            "fast-net", "vf", driver="other.example.com", root=root, timeout=0.1
        )
    directory = root / "resourceclaims" / "fast-net" / "vf"
    assert info.value.reason == (
        f"{directory}/other.example.com-metadata.json does not exist yet; driver "
        f"other.example.com has no metadata file in {directory}; drivers with a file: "
        "sriov.example.com (leave out driver= to read them all)"
    )


def test_a_template_wait_for_no_such_claim_lists_the_claims(tmp_path: Path) -> None:
    root = tree(tmp_path)
    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_for_network_data("nope", "vf", template=True, root=root, timeout=0.1)
    directory = root / "resourceclaimtemplates" / "nope" / "vf"
    assert info.value.reason == (
        f"no *-metadata.json file in {directory} yet; no claim made from a template has the "
        f"pod claim name nope ({MOUNTED}); `dra-metadata ls` lists everything mounted"
    )


def test_a_file_removed_after_it_was_read_leaves_the_reason_of_what_was_read(
    tmp_path: Path,
) -> None:
    # The wait read the claim (not ready), then the file went and no scan saw it go (polling,
    # an hour away): the timeout says why what it read was not ready, not what is mounted.
    root = tree(tmp_path)
    path = root / "resourceclaims" / "training-gpus" / "gpu" / "gpu.example.com-metadata.json"

    def remove_once(reason: str) -> None:
        if path.exists():
            path.unlink()

    with pytest.raises(WaitTimeoutError) as info:
        dra_metadata.wait_until(
            lambda _: False,
            "training-gpus",
            "gpu",
            root=root,
            timeout=0.5,
            force_polling=True,
            poll_interval=3600,
            progress=remove_once,
            progress_interval=0.01,
        )
    assert not path.exists()
    assert info.value.reason == "the condition returned False"
