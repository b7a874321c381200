"""encode_stream against orjson.dumps of the same object (OPT_INDENT_2), side by side.

    python benchmarks/bench_encode.py [--quick]

The floor is orjson.dumps(OPT_INDENT_2) of the object's wire dictionary, built beforehand: pure
serialization. encode_stream must also turn the model into that dictionary (Go's key order,
omitted empty fields, sorted attribute keys) and apply Go's escaping. Target: at most
2x the floor.
"""

from __future__ import annotations

import orjson

import dra_metadata
from dra_metadata._model._wire import _wire_object
from dra_metadata.writer import encode_stream

from _common import interleaved_best, quick_option, realistic_metadata, realistic_stream

V1BETA1, V1ALPHA1 = dra_metadata.KNOWN_API_VERSIONS


def main() -> None:
    quick = quick_option(__doc__)
    number, rounds = (20, 2) if quick else (1000, 9)

    built = realistic_metadata()
    decoded = dra_metadata.decode_stream(realistic_stream()).metadata
    wire = _wire_object(built, V1BETA1)
    one = orjson.dumps(wire, option=orjson.OPT_INDENT_2)
    assert encode_stream(built, versions=[V1BETA1]) == one + b"\n"
    assert encode_stream(decoded) == encode_stream(built) == realistic_stream()

    best = interleaved_best(
        {
            "floor: orjson.dumps(wire dict, INDENT_2)": lambda: orjson.dumps(
                wire, option=orjson.OPT_INDENT_2
            ),
            "encode_stream(decoded, 1 version)": lambda: encode_stream(decoded, versions=[V1BETA1]),
            "encode_stream(decoded, 2 versions)": lambda: encode_stream(decoded),
            "encode_stream(built by hand, 1 version)": lambda: encode_stream(
                built, versions=[V1BETA1]
            ),
            "encode_stream(built by hand, 2 versions)": lambda: encode_stream(built),
        },
        number=number,
        rounds=rounds,
    )
    floor = best["floor: orjson.dumps(wire dict, INDENT_2)"]
    print(f"object: {len(one)} bytes encoded, 8 devices x 32 attributes")
    for name, seconds in best.items():
        print(f"  {name:42} {seconds * 1e6:9.1f} us   {seconds / floor:5.2f}x floor")
    print(
        "  (a two-version stream holds two objects: its natural floor is two dumps, "
        f"{2 * floor * 1e6:.1f} us)"
    )


if __name__ == "__main__":
    main()
