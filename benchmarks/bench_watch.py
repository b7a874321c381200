"""Update-to-event latency of the watcher, and its idle CPU use, side by side in one run.

    python benchmarks/bench_watch.py [--quick]

A writer thread rewrites a metadata file in place (truncate + write, as the alpha writer does)
and waits until the update was seen before the next one. Measured: the inotify watcher, the
watcher forced to poll every 0.1 s, and the floor: a bare inotify_simple read loop woken by the
same writes (it decodes nothing). Then the CPU time a watcher uses in 10 s without changes.

Targets (issue #4): inotify p50 at most 2x (floor p50 + one decode), p99 at most 5 ms; idle CPU
at most 0.05 s per 10 s at the default poll interval; a watch ends within 100 ms of its
stop_event or timeout.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from inotify_simple import INotify, flags

import dra_metadata
from dra_metadata import DeviceMetadata, ObjectMeta
from dra_metadata.writer import encode_stream

from _common import best_seconds, quick_option

Observe = Callable[[Path, Callable[[int], None]], Iterator[None]]


def encoded(generation: int) -> bytes:
    base = dra_metadata.read_claim_metadata(
        "fast-net", "vf", root=Path(__file__).parent.parent / "examples" / "tree"
    )
    meta = ObjectMeta(name=base.name, namespace=base.namespace, uid=base.uid, generation=generation)
    return encode_stream(DeviceMetadata(metadata=meta, requests=base.requests))


def rewrite(path: Path, data: bytes) -> None:
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(data)


def measure(path: Path, updates: int, observe: Observe) -> list[float]:
    """Latency of each update: from the start of its write until ``observe`` reports it."""
    payloads = [encoded(generation) for generation in range(2, updates + 2)]
    seen = threading.Event()
    started: list[float] = []
    latencies: list[float] = []

    def writer() -> None:
        for payload in payloads:
            time.sleep(0.002)
            seen.clear()
            started.append(time.perf_counter())
            rewrite(path, payload)
            seen.wait(5)

    def on_generation(generation: int) -> None:
        if generation - 2 < len(started) and generation - 1 > len(latencies):
            latencies.append(time.perf_counter() - started[generation - 2])
            seen.set()

    path.write_bytes(encoded(1))
    thread = threading.Thread(target=writer)
    for _ in observe(path, on_generation):
        if thread.ident is None:
            thread.start()  # once the observer has started
        if len(latencies) == updates:
            break
    thread.join()
    return latencies


def watcher(force_polling: bool, poll_interval: float) -> Observe:
    def observe(path: Path, on_generation: Callable[[int], None]) -> Iterator[None]:
        events = dra_metadata.watch_metadata_file(
            path, force_polling=force_polling, poll_interval=poll_interval, timeout=600
        )
        for event in events:
            if event.metadata is not None:
                on_generation(event.metadata.generation)
            yield

    return observe


def floor(path: Path, on_generation: Callable[[int], None]) -> Iterator[None]:
    """A bare inotify read loop: wakes when a write completes, knows the generation unread."""
    generation = 1
    with INotify() as inotify:
        inotify.add_watch(path, flags.CLOSE_WRITE)
        yield  # started
        while True:
            for _ in inotify.read(timeout=1000):
                generation += 1
                on_generation(generation)
            yield


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def ending_latencies(path: Path, trials: int) -> dict[str, list[float]]:
    """How long after stop_event is set, or after its timeout, a watch actually ends."""
    results: dict[str, list[float]] = {"stop_event": [], "timeout": []}
    for trial in range(trials):
        stop = threading.Event()
        set_at: list[float] = []
        delay = 0.05 + 0.1 * trial / max(1, trials - 1)

        def set_stop(stop: threading.Event = stop, set_at: list[float] = set_at) -> None:
            set_at.append(time.perf_counter())
            stop.set()

        timer = threading.Timer(delay, set_stop)
        timer.start()
        for _ in dra_metadata.watch_metadata_file(path, poll_interval=60, stop_event=stop):
            pass
        results["stop_event"].append(time.perf_counter() - set_at[0])
        start = time.perf_counter()
        for _ in dra_metadata.watch_metadata_file(path, poll_interval=60, timeout=delay):
            pass
        results["timeout"].append(time.perf_counter() - start - delay)
    return results


def idle_cpu(path: Path, seconds: float) -> float:
    start = time.process_time()
    for _ in dra_metadata.watch_metadata_file(path, timeout=seconds):
        pass
    return time.process_time() - start


def main() -> None:
    quick = quick_option(__doc__)
    updates, polled_updates, idle_seconds = (20, 5, 1.0) if quick else (1000, 100, 10.0)

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "sriov.example.com-metadata.json"
        data = encoded(7)
        decode = best_seconds(lambda: dra_metadata.decode_stream(data), number=200)
        results = {
            "floor: bare inotify read loop": measure(path, updates, floor),
            "watch_metadata_file (inotify)": measure(path, updates, watcher(False, 1.0)),
            "watch_metadata_file (polling 0.1 s)": measure(
                path, polled_updates, watcher(True, 0.1)
            ),
        }
        cpu = idle_cpu(path, idle_seconds)
        endings = ending_latencies(path, 5 if quick else 20)

    print(f"update-to-event latency, {len(data)}-byte file rewritten in place:")
    for name, latencies in results.items():
        print(
            f"  {name:38} p50 {statistics.median(latencies) * 1e3:7.3f} ms   "
            f"p99 {percentile(latencies, 0.99) * 1e3:7.3f} ms   ({len(latencies)} updates)"
        )
    floor_p50 = statistics.median(results["floor: bare inotify read loop"])
    inotify_p50 = statistics.median(results["watch_metadata_file (inotify)"])
    budget = floor_p50 + decode
    print(f"  one decode_stream of the file: {decode * 1e3:.3f} ms")
    print(f"  inotify p50 / (floor p50 + one decode) = {inotify_p50 / budget:.2f}x (target <= 2x)")
    for name, delays in endings.items():
        print(
            f"  end of a watch after its {name}: max {max(delays) * 1e3:.1f} ms "
            f"over {len(delays)} tries (target <= 100 ms)"
        )
    print(
        f"idle CPU over {idle_seconds:g} s at the default poll interval: {cpu:.4f} s "
        f"({cpu * 10 / idle_seconds:.4f} s per 10 s; target <= 0.05 s)"
    )


if __name__ == "__main__":
    main()
