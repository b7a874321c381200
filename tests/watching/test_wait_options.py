"""The options of the waits: driver=, stop=, timeout=, poll_interval=, force_polling=,
progress=, require= and max_size=.

Only the public API is used, so that a rewrite of the watcher keeps these tests valid. Real
files; a wait that must time out is given a short timeout, one that must not a long one.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import dra_metadata
from dra_metadata import (
    Device,
    DeviceMetadata,
    DeviceMetadataRequest,
    MetadataTooLargeError,
    NetworkDeviceData,
    ObjectMeta,
    WaitTimeoutError,
    resource_claim_file_path,
    resource_claim_request_dir,
    resource_claim_template_file_path,
    wait_for,
    wait_for_network_data,
    wait_until,
)
from dra_metadata.writer import write_metadata_file

from helpers import SAMPLE

SHORT = 0.05
LONG = 5.0


def nic(name: str, driver: str, interface_name: str | None = None) -> Device:
    network = None if interface_name is None else NetworkDeviceData(interface_name=interface_name)
    return Device(driver=driver, pool="node-a", name=name, network_data=network)


def publish(
    root: Path,
    driver: str,
    devices: list[Device],
    *,
    generation: int = 1,
    template: bool = False,
    requests: bool = True,
) -> Path:
    build = resource_claim_template_file_path if template else resource_claim_file_path
    path = build(driver, "c", "nic", root=root)
    metadata = DeviceMetadata(
        metadata=ObjectMeta(name="c", namespace="ns", uid="u-1", generation=generation),
        requests=[DeviceMetadataRequest(name="nic", devices=devices)] if requests else [],
    )
    write_metadata_file(path, metadata)
    return path


def timed_out(call: Callable[[], object]) -> WaitTimeoutError:
    with pytest.raises(WaitTimeoutError) as info:
        call()
    error = info.value
    assert isinstance(error, TimeoutError)
    return error


def assert_timeout_error(
    error: WaitTimeoutError, *, path: Path, timeout: float, reason: str
) -> None:
    assert error.path == path
    assert error.timeout == timeout
    assert error.reason == reason
    assert str(error) == f"{path}: not ready after {timeout:g} s: {reason}"


@pytest.fixture
def two_drivers(tmp_path: Path) -> tuple[Path, Path]:
    """a.example.com's device has network data, b.example.com's does not."""
    ready = publish(tmp_path, "a.example.com", [nic("a0", "a.example.com", "net1")])
    not_ready = publish(tmp_path, "b.example.com", [nic("b0", "b.example.com")], generation=3)
    return ready, not_ready


NOT_READY_B = "a.example.com generation 1, b.example.com generation 3"


class TestDriver:
    """driver= makes a wait look at that driver's file only."""

    def test_wait_for_network_data(self, tmp_path: Path, two_drivers: tuple[Path, Path]) -> None:
        ready, not_ready = two_drivers
        metadata = wait_for_network_data(
            "c", "nic", driver="a.example.com", root=tmp_path, timeout=LONG, poll_interval=LONG
        )
        assert [source.path for source in metadata.sources] == [ready]
        assert [device.name for device in metadata.devices] == ["a0"]
        assert metadata.generation == 1

        error = timed_out(
            lambda: wait_for_network_data(
                "c", "nic", driver="b.example.com", root=tmp_path, timeout=SHORT
            )
        )
        reason = "generation 3, device b0 has no networkData"
        assert_timeout_error(error, path=not_ready, timeout=SHORT, reason=reason)
        assert error.metadata is not None
        assert [source.path for source in error.metadata.sources] == [not_ready]

        error = timed_out(lambda: wait_for_network_data("c", "nic", root=tmp_path, timeout=SHORT))
        directory = resource_claim_request_dir("c", "nic", root=tmp_path)
        reason = f"{NOT_READY_B}, device b0 has no networkData"
        assert_timeout_error(error, path=directory, timeout=SHORT, reason=reason)
        assert error.metadata is not None
        assert [device.name for device in error.metadata.devices] == ["a0", "b0"]

    def test_wait_for(self, tmp_path: Path, two_drivers: tuple[Path, Path]) -> None:
        ready, not_ready = two_drivers

        def has_network_data(device: Device) -> bool:
            return device.network_data is not None

        metadata = wait_for(
            has_network_data, "c", "nic", driver="a.example.com", root=tmp_path, timeout=LONG
        )
        assert [source.path for source in metadata.sources] == [ready]
        error = timed_out(
            lambda: wait_for(
                has_network_data, "c", "nic", driver="b.example.com", root=tmp_path, timeout=SHORT
            )
        )
        reason = "generation 3, device b0 not ready"
        assert_timeout_error(error, path=not_ready, timeout=SHORT, reason=reason)
        error = timed_out(
            lambda: wait_for(has_network_data, "c", "nic", root=tmp_path, timeout=SHORT)
        )
        directory = resource_claim_request_dir("c", "nic", root=tmp_path)
        reason = f"{NOT_READY_B}, device b0 not ready"
        assert_timeout_error(error, path=directory, timeout=SHORT, reason=reason)

    def test_wait_until(self, tmp_path: Path, two_drivers: tuple[Path, Path]) -> None:
        ready, _ = two_drivers
        seen: list[tuple[Path | None, ...]] = []

        def one_file(metadata: DeviceMetadata) -> str | None:
            seen.append(tuple(source.path for source in metadata.sources))
            return None if len(metadata.sources) == 1 else f"{len(metadata.sources)} files"

        metadata = wait_until(
            one_file, "c", "nic", driver="a.example.com", root=tmp_path, timeout=LONG
        )
        assert seen == [(ready,)]
        assert metadata.sources[0].path == ready
        error = timed_out(lambda: wait_until(one_file, "c", "nic", root=tmp_path, timeout=SHORT))
        assert error.reason == "2 files"

    def test_of_a_template_claim(self, tmp_path: Path) -> None:
        path = publish(
            tmp_path, "a.example.com", [nic("t0", "a.example.com", "net1")], template=True
        )
        publish(tmp_path, "a.example.com", [nic("wrong", "a.example.com")])  # same names, by name
        for wait in (
            lambda: wait_for_network_data(
                "c", "nic", template=True, driver="a.example.com", root=tmp_path, timeout=LONG
            ),
            lambda: wait_for(
                lambda device: device.name == "t0",
                "c",
                "nic",
                template=True,
                driver="a.example.com",
                root=tmp_path,
                timeout=LONG,
            ),
        ):
            metadata = wait()
            assert [source.path for source in metadata.sources] == [path]

    @pytest.mark.usefixtures("two_drivers")
    def test_a_driver_without_a_file(self, tmp_path: Path) -> None:
        absent = resource_claim_file_path("c.example.com", "c", "nic", root=tmp_path)
        error = timed_out(
            lambda: wait_for_network_data(
                "c", "nic", driver="c.example.com", root=tmp_path, timeout=SHORT
            )
        )
        assert error.path == absent
        assert error.metadata is None
        assert str(absent) in error.reason
        assert "does not exist" in error.reason


WAITS: dict[str, Callable[..., DeviceMetadata]] = {
    "wait_until": lambda **options: wait_until(lambda _: "never", "c", "nic", **options),
    "wait_for": lambda **options: wait_for(lambda _: False, "c", "nic", **options),
    "wait_for_network_data": lambda **options: wait_for_network_data("c", "nic", **options),
}


class TestStopEvent:
    @pytest.fixture(params=sorted(WAITS))
    def wait(self, request: pytest.FixtureRequest) -> Callable[..., DeviceMetadata]:
        return WAITS[request.param]

    def test_a_set_event_stops_the_wait_at_once(
        self, tmp_path: Path, wait: Callable[..., DeviceMetadata]
    ) -> None:
        path = publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        stop = threading.Event()
        stop.set()
        error = timed_out(
            lambda: wait(root=tmp_path, timeout=LONG, poll_interval=LONG, stop_event=stop)
        )
        assert error.reason.startswith("stopped; ")
        assert error.timeout == LONG
        assert error.path == path.parent
        assert error.metadata is not None
        assert error.metadata.devices[0].name == "a0"
        assert str(error) == f"{path.parent}: not ready after 5 s: {error.reason}"

    def test_an_event_set_while_waiting(
        self, tmp_path: Path, wait: Callable[..., DeviceMetadata]
    ) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        stop = threading.Event()
        timer = threading.Timer(0.1, stop.set)
        start = time.monotonic()
        timer.start()
        try:
            error = timed_out(
                lambda: wait(root=tmp_path, timeout=LONG, poll_interval=LONG, stop_event=stop)
            )
        finally:
            timer.cancel()
        # The event is looked at every 100 ms: the wait ends well before its timeout and poll
        # interval.
        assert 0.1 <= time.monotonic() - start < LONG - 1
        assert error.reason.startswith("stopped; ")

    def test_a_wait_without_timeout_is_stopped(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        stop = threading.Event()
        later(0.1, stop.set)
        error = timed_out(
            lambda: wait_for_network_data("c", "nic", root=tmp_path, timeout=None, stop_event=stop)
        )
        assert error.reason == "stopped; generation 1, device a0 has no networkData"
        assert error.timeout is None  # not "after 0 s": it had no timeout
        assert str(error) == f"{error.path}: not ready: {error.reason}"

    def test_ready_metadata_is_returned_even_when_stopped(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com", "net1")])
        stop = threading.Event()
        stop.set()
        metadata = wait_for_network_data("c", "nic", root=tmp_path, timeout=LONG, stop_event=stop)
        assert metadata.devices[0].name == "a0"

    def test_an_event_not_set_does_not_stop(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        error = timed_out(
            lambda: wait_for_network_data(
                "c", "nic", root=tmp_path, timeout=SHORT, stop_event=threading.Event()
            )
        )
        assert error.reason == "generation 1, device a0 has no networkData"


class TestTimeoutAttribute:
    @pytest.mark.parametrize(("timeout", "shown"), [(0, "0"), (0.05, "0.05"), (0.25, "0.25")])
    def test_timeout_is_kept_and_shown(self, tmp_path: Path, timeout: float, shown: str) -> None:
        path = publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        start = time.monotonic()
        error = timed_out(lambda: wait_for_network_data("c", "nic", root=tmp_path, timeout=timeout))
        assert time.monotonic() - start >= timeout
        assert error.timeout == timeout
        assert str(error).startswith(f"{path.parent}: not ready after {shown} s: ")

    def test_a_zero_timeout_ends_under_a_clock_that_does_not_move(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The deadline is reached when the clock reads it (>=), not only once past it: with
        timeout=0 and a clock that does not move, the wait must raise, not pause 0 s forever.
        The join timeout is a hang guard, not a measure of speed."""
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])  # no network data
        frozen = time.monotonic()
        outcome: list[BaseException] = []

        def wait() -> None:
            try:
                wait_for_network_data("c", "nic", root=tmp_path, timeout=0)
            except BaseException as error:  # noqa: BLE001 - judged below
                outcome.append(error)

        monkeypatch.setattr(time, "monotonic", lambda: frozen)
        thread = threading.Thread(target=wait, daemon=True)
        thread.start()
        thread.join(30)
        ended = not thread.is_alive()
        monkeypatch.undo()  # a wait still looping sees the clock move again, and ends
        thread.join(30)
        assert ended, "the wait with timeout=0 loops under a clock that does not move"
        (error,) = outcome
        assert isinstance(error, WaitTimeoutError)
        assert error.timeout == 0

    def test_nothing_there_yet(self, tmp_path: Path) -> None:
        directory = resource_claim_request_dir("c", "nic", root=tmp_path)
        options: dict[str, Any] = {"root": tmp_path, "timeout": SHORT}
        error = timed_out(lambda: wait_for(lambda _: True, "c", "nic", **options))
        assert error.metadata is None
        assert error.path == directory
        assert error.timeout == SHORT
        assert str(directory) in error.reason


def later(seconds: float, action: Callable[[], object]) -> threading.Timer:
    timer = threading.Timer(seconds, action)
    timer.start()
    return timer


class TestTiming:
    """When a wait looks again; bounds are generous: a second where a few ms are expected."""

    def test_no_timeout_waits_until_ready(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        later(0.1, lambda: publish(tmp_path, "a.example.com", [nic("a0", "a.example.com", "n")]))
        metadata = wait_for_network_data("c", "nic", root=tmp_path, timeout=None)
        assert metadata.devices[0].network_data == NetworkDeviceData(interface_name="n")

    def test_a_short_timeout_ends_the_wait_promptly(self, tmp_path: Path) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        start = time.monotonic()
        timed_out(lambda: wait_for_network_data("c", "nic", root=tmp_path, timeout=SHORT))
        assert time.monotonic() - start < 1  # not a whole poll interval (1 s) or more

    def test_the_poll_interval_is_used(self, tmp_path: Path) -> None:
        # Polling, an in-place rewrite (same inode) is seen at the next poll: 0.05 s here, not
        # the default 1 s, which is past the timeout. Each of the three waits, side by side.
        results: dict[str, object] = {}

        def run(name: str) -> None:
            root = tmp_path / name
            path = publish(root, "a.example.com", [nic("a0", "a.example.com")])
            ready = DeviceMetadata(
                metadata=ObjectMeta(name="c", namespace="ns", uid="u-1", generation=2),
                requests=[DeviceMetadataRequest(name="nic", devices=[nic("a0", "a", "n")])],
            )
            later(0.1, lambda: write_metadata_file(path, ready, mode="in-place"))
            options = {"force_polling": True, "poll_interval": 0.05, "timeout": 0.6}
            try:
                results[name] = WAITS_FOR_NETWORK_DATA[name](root=root, **options)
            except WaitTimeoutError as error:
                results[name] = error

        threads = [threading.Thread(target=run, args=(name,)) for name in WAITS_FOR_NETWORK_DATA]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for name, result in results.items():
            assert isinstance(result, DeviceMetadata), (name, result)
            assert result.generation == 2


def inotify_descriptors() -> int:
    """How many inotify instances this process holds."""
    targets = []
    for entry in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile (the one iterdir used)
            targets.append(str(entry.readlink()))
    return targets.count("anon_inode:inotify")


class TestForcePolling:
    """force_polling=True: the wait never makes an inotify instance."""

    @pytest.mark.parametrize("force_polling", [True, False])
    def test_wait_until_and_wait_for(self, tmp_path: Path, force_polling: bool) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        before = inotify_descriptors()
        seen: list[int] = []

        def not_ready(_: object) -> Any:
            seen.append(inotify_descriptors() - before)
            return "not yet"

        options: dict[str, Any] = {"root": tmp_path, "timeout": 0.1, "poll_interval": LONG}
        for wait in (
            lambda: wait_until(not_ready, "c", "nic", force_polling=force_polling, **options),
            lambda: wait_for(
                lambda d: not not_ready(d), "c", "nic", force_polling=force_polling, **options
            ),
        ):
            seen.clear()
            timed_out(wait)
            # The file is looked at when the wait starts, and with inotify once more as soon as
            # it watches (a change in between is not missed); then only at the poll interval or
            # on an event, and the deadline comes first.
            assert seen == ([0] if force_polling else [0, 1])

    def test_a_wait_ready_at_once_makes_no_inotify_instance(self, tmp_path: Path) -> None:
        # inotify instances are limited per user across a node: one is made only when there
        # is something to wait for.
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com", "n")])
        before = inotify_descriptors()
        seen: list[int] = []

        def ready(_: object) -> None:
            seen.append(inotify_descriptors() - before)

        wait_until(ready, "c", "nic", root=tmp_path, timeout=LONG, force_polling=False)
        assert seen == [0]

    @pytest.mark.parametrize("force_polling", [True, False])
    def test_wait_for_network_data(self, tmp_path: Path, force_polling: bool) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        before = inotify_descriptors()
        seen: list[int] = []
        sampler = later(0.15, lambda: seen.append(inotify_descriptors() - before))
        options: dict[str, Any] = {"root": tmp_path, "timeout": 0.3, "poll_interval": LONG}
        timed_out(lambda: wait_for_network_data("c", "nic", force_polling=force_polling, **options))
        sampler.join()
        assert seen == [0 if force_polling else 1]


WAITS_FOR_NETWORK_DATA: dict[str, Callable[..., DeviceMetadata]] = {
    "wait_until": lambda **options: wait_until(
        lambda m: None if m.devices[0].network_data else "no network data", "c", "nic", **options
    ),
    "wait_for": lambda **options: wait_for(
        lambda device: device.network_data is not None, "c", "nic", **options
    ),
    "wait_for_network_data": lambda **options: wait_for_network_data("c", "nic", **options),
}


class TestProgress:
    def never_ready(self, root: Path, **options: Any) -> WaitTimeoutError:
        publish(root, "a.example.com", [nic("a0", "a.example.com")])
        error = timed_out(lambda: wait_until(lambda _: "waiting", "c", "nic", root=root, **options))
        assert error.reason == "waiting"
        return error

    def test_is_told_the_reason_once_per_interval(self, tmp_path: Path) -> None:
        told: list[str] = []
        self.never_ready(
            tmp_path,
            timeout=0.35,
            poll_interval=LONG,
            progress=told.append,
            progress_interval=0.1,
        )
        assert 1 <= len(told) <= 4  # at 0.1, 0.2 and 0.3 s
        assert set(told) == {"waiting"}

    def test_not_before_the_interval(self, tmp_path: Path) -> None:
        told: list[str] = []
        self.never_ready(tmp_path, timeout=SHORT, progress=told.append)
        assert told == []  # the default interval is 5 s

    def test_none_is_no_progress(self, tmp_path: Path) -> None:
        self.never_ready(tmp_path, timeout=0.1, progress=None, progress_interval=0.01)

    @pytest.mark.parametrize("interval", [0, 0.0, -1.0, float("nan")])
    def test_an_interval_that_is_not_positive_is_refused_at_the_call(
        self, tmp_path: Path, interval: float
    ) -> None:
        publish(tmp_path, "a.example.com", [nic("a0", "a.example.com")])
        started = time.monotonic()
        with pytest.raises(ValueError) as info:
            wait_until(
                lambda _: None, "c", "nic", root=tmp_path, timeout=60, progress_interval=interval
            )
        assert str(info.value) == f"progress_interval must be positive, not {interval!r}"
        assert time.monotonic() - started < 30  # refused, not waited for


@pytest.mark.parametrize(
    ("require", "message"),
    [
        (5, "require must be a field name (str) or an iterable of them, not int"),
        (None, "require must be a field name (str) or an iterable of them, not NoneType"),
        (b"ips", "require must be a field name (str) or an iterable of them, not bytes"),
        (
            bytearray(b"ips"),
            "require must be a field name (str) or an iterable of them, not bytearray",
        ),
        ([b"ips"], "require: each field name must be a str, not bytes"),
        (("ips", 1), "require: each field name must be a str, not int"),
    ],
)
def test_require_that_is_no_field_name_is_refused_at_the_call(
    tmp_path: Path, require: object, message: str
) -> None:
    with pytest.raises(TypeError) as raised:
        wait_for_network_data("c", "nic", root=tmp_path, timeout=SHORT, require=require)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_a_wait_reads_files_up_to_its_max_size(tmp_path: Path) -> None:
    path = publish(tmp_path, "nic.example.com", [nic("eth-a", "nic.example.com", "eth0")])
    size = path.stat().st_size
    ready = wait_for_network_data("c", "nic", root=tmp_path, timeout=LONG, max_size=size)
    assert ready.devices[0].network_data is not None
    with pytest.raises(MetadataTooLargeError) as raised:
        wait_for_network_data("c", "nic", root=tmp_path, timeout=LONG, max_size=size - 1)
    assert raised.value.path == path
    assert raised.value.limit == size - 1


class TestRequire:
    """require= of wait_for_network_data: a field name or several, nothing else."""

    @pytest.mark.parametrize("require", ["ips", ["ips"], ("interface_name", "ips")])
    def test_require_takes_a_name_or_names(self, require: object) -> None:
        ready = dra_metadata.wait_for_network_data(
            "fast-net",
            "vf",
            root=SAMPLE,
            timeout=30,
            require=require,  # type: ignore[arg-type]
        )
        assert ready.devices[0].network_data is not None

    @pytest.mark.parametrize("require", [5, b"ips", [b"ips"], None])
    def test_require_refuses_anything_else(self, require: object) -> None:
        with pytest.raises(TypeError, match="require"):
            dra_metadata.wait_for_network_data(
                "fast-net",
                "vf",
                root=SAMPLE,
                timeout=30,
                require=require,  # type: ignore[arg-type]
            )
