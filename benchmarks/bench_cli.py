"""Start-up of every one-shot command on the sample tree, next to the interpreter's floor.

    python benchmarks/bench_cli.py [--quick] [--runs N] [--baseline PYTHON]

Each command starts a fresh interpreter; the runs are taken round-robin (every command once,
then again), so that a busy machine slows all of them alike and the ratios stay fair. Shown
per command: the median wall time and its ratio to the floor, ``python -c "import orjson"`` (a
read needs the interpreter and orjson; the rest is ours), the median CPU time of the process
(user + system, steadier than wall time on a busy machine), and the modules it has loaded at exit
(one more run).

Targets: ``import dra_metadata`` at most 1.3x the floor; ``show``, ``path``, ``env``,
``exec`` (up to its execve: it runs /bin/true), ``wait`` on a ready file, ``ls`` and
``validate`` at most 1.5x; ``--help`` and ``--version`` at most ``show``'s time. Probe mode
(``health --fail-on``) needs an API server: benchmarks/bench_health.py measures it against
``python -c "import ssl, orjson"`` (at most 2x, plus one request), and its row here says so.

With ``--baseline PYTHON`` (the interpreter of another virtual environment, say one of an
older commit) every row is also run with that environment's ``dra-metadata``, in the same
round-robin: its figures stand next to these.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TREE = Path(__file__).parent.parent / "examples" / "tree"
FLOOR = 'python -c "import orjson"'
PROBE_FLOOR = 'python -c "import ssl, orjson"'
PROBE_ELSEWHERE = "against an API server: benchmarks/bench_health.py (KUBEBUILDER_ASSETS)"


@dataclass(frozen=True)
class Row:
    name: str
    arguments: tuple[str, ...]
    """After the interpreter: ``-c CODE``, or the console script and its arguments."""
    target: str
    script: bool = True
    """Whether arguments[0] is replaced by the environment's ``dra-metadata``."""


def rows() -> list[Row]:
    tree = str(TREE)
    vf = ("fast-net", "vf")
    bus = ("--attribute", "resource.kubernetes.io/pciBusID=BUS")
    show = ("--root", tree, "show", "training-gpus", "gpu")
    read = f"import dra_metadata as d; d.read_claim_metadata('training-gpus', 'gpu', root={tree!r})"
    return [
        Row(FLOOR, ("-c", "import orjson"), "floor", script=False),
        Row(PROBE_FLOOR, ("-c", "import ssl, orjson"), "probe floor", script=False),
        Row('python -c "import dra_metadata"', ("-c", "import dra_metadata"), "1.3x", False),
        Row(
            "python: read_claim_metadata",
            ("-c", read),
            "1.5x",
            script=False,
        ),
        Row("show training-gpus gpu", ("dra-metadata", *show), "1.5x"),
        Row("show ... -o table", ("dra-metadata", *show, "-o", "table"), "1.5x"),
        Row(
            "path training-gpus gpu",
            ("dra-metadata", "--root", tree, "path", "training-gpus", "gpu"),
            "1.5x",
        ),
        Row(
            "env fast-net vf --attribute ...",
            ("dra-metadata", "--root", tree, "env", *vf, *bus),
            "1.5x",
        ),
        Row(
            "exec fast-net vf ... -- /bin/true",
            ("dra-metadata", "--root", tree, "exec", *vf, *bus, "--", "/bin/true"),
            "1.5x",
        ),
        Row(
            "wait fast-net vf --for network-data",
            ("dra-metadata", "--root", tree, "wait", *vf, "--for", "network-data"),
            "1.5x",
        ),
        Row("ls", ("dra-metadata", "--root", tree, "ls"), "1.5x"),
        Row("validate examples/tree", ("dra-metadata", "validate", tree), "1.5x"),
        Row("--help", ("dra-metadata", "--help"), "<= show"),
        Row("--version", ("dra-metadata", "--version"), "<= show"),
        Row("health --help (its parser only)", ("dra-metadata", "health", "--help"), "<= show"),
    ]


def command(python: str, row: Row) -> list[str]:
    if not row.script:
        return [python, *row.arguments]
    return [str(Path(python).parent / "dra-metadata"), *row.arguments[1:]]


def compile_package(python: str) -> None:
    """As after a pip install, the bytecode is compiled first (a machine that sets
    PYTHONDONTWRITEBYTECODE would otherwise compile it at every start)."""
    found = subprocess.run(
        [python, "-c", "import dra_metadata, os; print(os.path.dirname(dra_metadata.__file__))"],
        check=True,
        cwd="/",
        capture_output=True,
        text=True,
    )
    subprocess.run([python, "-m", "compileall", "-q", found.stdout.strip()], check=True)


def timed(arguments: list[str], environment: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run, which must succeed.

    Run in / : with ``-c`` the working directory comes first on sys.path, and a checkout's
    package would be imported instead of the environment's."""
    start = time.perf_counter()
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, env=environment, cwd="/")
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)} exited {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def module_count(python: str, row: Row, environment: dict[str, str]) -> str:
    """How many modules a run has loaded when it exits (``sys.modules``, one more run; the
    console script run as code, so that a hook can print them). ``-X importtime`` would miss
    what ``importlib.import_module`` loads."""
    with tempfile.TemporaryDirectory() as folder:
        listing = Path(folder, "modules")
        code = (
            "import atexit, sys\n"
            f"atexit.register(lambda: open({str(listing)!r}, 'w').write(str(len(sys.modules))))\n"
        )
        if row.script:
            script = command(python, row)[0]
            code += (
                f"sys.argv = [{script!r}, *{list(row.arguments[1:])!r}]\n"
                f"exec(compile(open({script!r}).read(), {script!r}, 'exec'))\n"
            )
        else:
            code += row.arguments[1]
        subprocess.run(
            [python, "-c", code], stdout=subprocess.DEVNULL, env=environment, cwd="/", check=False
        )
        # exec replaces the process before exit: no count
        return listing.read_text() if listing.exists() else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs each (a smoke test)")
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (21)")
    parser.add_argument("--baseline", metavar="PYTHON", help="also run another environment")
    options = parser.parse_args()
    runs = 3 if options.quick else options.runs
    pythons = {"": sys.executable}
    if options.baseline:
        pythons["baseline"] = options.baseline
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment.pop("DRA_METADATA_ROOT", None)
    for python in pythons.values():
        compile_package(python)
    table = rows()
    plan = [(label, python, row) for label, python in pythons.items() for row in table]
    walls: dict[tuple[str, str], list[float]] = {(label, row.name): [] for label, _, row in plan}
    cpus: dict[tuple[str, str], list[float]] = {key: [] for key in walls}
    load_before = os.getloadavg()
    for _ in range(runs):
        for label, python, row in plan:
            wall, cpu = timed(command(python, row), environment)
            walls[label, row.name].append(wall)
            cpus[label, row.name].append(cpu)
    load_after = os.getloadavg()
    print(
        f"median of {runs} fresh processes per row, round-robin; load average before "
        f"{load_before[0]:.1f}, after {load_after[0]:.1f} ({os.cpu_count()} CPUs)"
    )
    for label, python in pythons.items():
        median = {row.name: statistics.median(walls[label, row.name]) for row in table}
        cpu = {row.name: statistics.median(cpus[label, row.name]) for row in table}
        print(f"\n{label or 'this environment'} ({python}):")
        print(
            f"  {'command':38} {'wall ms':>8} {'x floor':>7} {'cpu ms':>7} {'x floor':>7} "
            f"{'modules':>7}  target"
        )
        for row in table:
            modules = module_count(python, row, environment)
            ratio = median[row.name] / median[FLOOR]
            cpu_ratio = cpu[row.name] / cpu[FLOOR]
            verdict = _verdict(row, ratio, median)
            print(
                f"  {row.name:38} {median[row.name] * 1e3:8.1f} {ratio:6.2f}x "
                f"{cpu[row.name] * 1e3:7.1f} {cpu_ratio:6.2f}x {modules:>7}  "
                f"{row.target} {verdict}"
            )
        print(f"  {'health --fail-on unhealthy (probe)':38} {PROBE_ELSEWHERE}")


def _verdict(row: Row, ratio: float, median: dict[str, float]) -> str:
    if row.target.endswith("x") and row.target[:-1].replace(".", "").isdigit():
        return "ok" if ratio <= float(row.target[:-1]) else "OVER"
    if row.target == "<= show":
        return "ok" if median[row.name] <= median["show training-gpus gpu"] else "OVER"
    return ""


if __name__ == "__main__":
    main()
