"""decode_stream on streams of many small objects, against orjson.loads of the same objects.

    python benchmarks/bench_decode_streams.py [--quick]

The cost of a decode is proportional to the bytes it examines, whatever the number
of objects. The floor is orjson.loads of the same objects wrapped in one JSON array (what
parsing them can cost at best); target: at most 3x that floor. Each case runs in a fresh
interpreter:

* 125,000 objects of an unknown version, 4,000,000 bytes with no separator (was ~10 minutes);
* 1 MB of such objects, one per line, the last one with a non-ASCII character (was 19 s): in
  UTF-8, as a Latin-1 byte (not UTF-8: Go reads U+FFFD), and as garbage after the last object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import orjson

import dra_metadata

from _decode_cases import best_cpu_seconds, case_options, run_cases

TARGET = 3.0
SMALL = b'{"kind":"K","apiVersion":"x/v1"}'
PER_MEGABYTE = 1_000_000 // (len(SMALL) + 1)


def _unknown_objects() -> tuple[bytes, bytes]:
    return SMALL * 125_000, b"[" + b",".join([SMALL] * 125_000) + b"]"


def _megabyte(last: bytes, *, floor_last: bytes | None = None) -> tuple[bytes, bytes]:
    data = (SMALL + b"\n") * PER_MEGABYTE + last + b"\n"
    floor = b"[" + b",".join([SMALL] * PER_MEGABYTE + [floor_last or last]) + b"]"
    return data, floor


def _megabyte_then_garbage() -> tuple[bytes, bytes]:
    data = (SMALL + b"\n") * PER_MEGABYTE + "é".encode()
    return data, b"[" + b",".join([SMALL] * PER_MEGABYTE) + b"]"


CASES: dict[str, Callable[[], tuple[bytes, bytes]]] = {
    "125,000 unknown objects, 4 MB": _unknown_objects,
    "1 MB, last object with UTF-8 'é'": lambda: _megabyte(
        b'{"kind":"K","apiVersion":"x/v1","note":"\xc3\xa9"}'
    ),
    "1 MB, last object with Latin-1 'é'": lambda: _megabyte(
        b'{"kind":"K","apiVersion":"x/v1","note":"\xe9"}',
        floor_last=b'{"kind":"K","apiVersion":"x/v1","note":"\xef\xbf\xbd"}',
    ),
    "1 MB, then 'é' after the last object": _megabyte_then_garbage,
}


def _decode(data: bytes) -> str:
    try:
        dra_metadata.decode_stream(data)
    except dra_metadata.MetadataDecodeError as error:
        return type(error).__name__
    return "decoded"


def measure(name: str, quick: bool) -> dict[str, object]:
    data, wrapped = CASES[name]()
    outcome = _decode(data)
    number, rounds = (1, 1) if quick else (3, 7)
    best = best_cpu_seconds(
        {"floor": lambda: orjson.loads(wrapped), "decode": lambda: _decode(data)},
        number=number,
        rounds=rounds,
    )
    return {"case": name, "bytes": len(data), "outcome": outcome, **best}


def main() -> None:
    quick, case = case_options(__doc__, CASES)
    if case:
        print(json.dumps(measure(case, quick)))
        return
    print(f"decode_stream / floor (orjson.loads of the objects as one array); target <= {TARGET}x")
    for result in run_cases(Path(__file__), list(CASES), quick=quick):
        ratio = result["decode"] / result["floor"]  # type: ignore[operator]
        print(
            f"  {result['case']:38} {result['bytes']:8} B  floor "
            f"{result['floor'] * 1e3:7.1f} ms  decode {result['decode'] * 1e3:7.1f} ms"  # type: ignore[operator]
            f"  {ratio:5.2f}x  ({result['outcome']})"
        )


if __name__ == "__main__":
    main()
