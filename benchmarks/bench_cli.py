"""End-to-end wall time of `dra-metadata show` on the sample tree, next to a bare import.

    python benchmarks/bench_cli.py [--quick]

Both commands start a fresh interpreter; medians of runs taken round-robin. Target:
`dra-metadata show` at most 1.3x `python -c "import pydantic, orjson"`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _common import process_seconds, python, quick_option

TREE = Path(__file__).parent.parent / "examples" / "tree"
COMMAND = str(Path(sys.executable).parent / "dra-metadata")


def main() -> None:
    quick = quick_option(__doc__)
    runs = 3 if quick else 31
    show = [COMMAND, "--root", str(TREE), "show", "training-gpus", "gpu"]
    seconds = process_seconds(
        {
            'python -c "import pydantic, orjson"': python("import pydantic, orjson"),
            "dra-metadata show training-gpus gpu (json)": show,
            "dra-metadata show ... -o table": [*show, "-o", "table"],
            "dra-metadata wait ... --for network-data": [
                COMMAND,
                "--root",
                str(TREE),
                "wait",
                "fast-net",
                "vf",
                "--for",
                "network-data",
            ],
        },
        runs=runs,
    )
    baseline = seconds['python -c "import pydantic, orjson"']
    print(f"median wall time over {runs} runs each, taken round-robin:")
    for name, value in seconds.items():
        print(f"  {name:45} {value * 1e3:7.1f} ms   {value / baseline:4.2f}x")


if __name__ == "__main__":
    main()
