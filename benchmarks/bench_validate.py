"""validate() on the realistic stream, side by side with the orjson floor of bench_decode.

    python benchmarks/bench_validate.py [--quick]

Target: validation ("metadata" profile) costs at most 1x the floor, i.e. at most the
time of orjson.loads of the first object's bytes.
"""

from __future__ import annotations

import orjson

import dra_metadata

from _common import interleaved_best, quick_option, realistic_stream


def main() -> None:
    quick = quick_option(__doc__)
    number, rounds = (20, 2) if quick else (2000, 9)

    data = realistic_stream()
    first = data[: data.index(b"}\n{") + 1]
    metadata = dra_metadata.decode_stream(data).metadata
    untouched = dra_metadata.decode_stream(data).metadata  # attributes never accessed
    assert dra_metadata.validate(metadata) == ()
    best = interleaved_best(
        {
            "floor: orjson.loads(first object)": lambda: orjson.loads(first),
            "validate(metadata)": lambda: dra_metadata.validate(untouched),
            "validate(metadata, profile='strict')": lambda: dra_metadata.validate(
                metadata, profile="strict"
            ),
            "decode_stream(stream, validate=True)": lambda: dra_metadata.decode_stream(
                data, validate=True
            ),
        },
        number=number,
        rounds=rounds,
    )
    floor = best["floor: orjson.loads(first object)"]
    print(f"stream: {len(data)} bytes, 8 devices x 32 attributes")
    for name, seconds in best.items():
        print(f"  {name:40} {seconds * 1e6:9.1f} us   {seconds / floor:5.2f}x floor")


if __name__ == "__main__":
    main()
