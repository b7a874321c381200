"""Inputs and timing for the decode benchmarks: realistic stream shapes and hostile streams.

Each case is measured in a fresh interpreter (``python bench_*.py --case NAME``), so that one
case's garbage and caches do not weigh on the next. Times are the CPU time of the benchmark
process (``time.process_time``): other processes on a busy machine do not count.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dra_metadata import KNOWN_API_VERSIONS
from dra_metadata.writer import encode_stream

from _common import realistic_metadata


def shape_stream(*, versions: int = 2, **shape: Any) -> bytes:
    """A stream as the upstream writer writes it, of the given shape (`realistic_metadata`)."""
    return encode_stream(realistic_metadata(**shape), versions=KNOWN_API_VERSIONS[:versions])


def case_options(description: str | None, cases: Iterable[str]) -> tuple[bool, str | None]:
    """The options of a benchmark of cases: --quick, and the case a fresh interpreter runs."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke test)")
    parser.add_argument("--case", choices=list(cases), help=argparse.SUPPRESS)
    options = parser.parse_args()
    return options.quick, options.case


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


def run_cases(
    script: Path, cases: list[str], *, quick: bool, environment: dict[str, str] | None = None
) -> list[dict[str, object]]:
    """Run each case of ``script`` in a fresh interpreter, with ``environment`` added to this
    one's; each prints one JSON line."""
    results = []
    for case in cases:
        command = [sys.executable, str(script), "--case", case, *(["--quick"] if quick else [])]
        output = subprocess.run(
            command,
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, **(environment or {})},
        ).stdout
        results.append(json.loads(output.splitlines()[-1]))
    return results
