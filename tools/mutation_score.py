"""Mutation score of the modules that reading, decoding and waiting rest on.

    .venv/bin/python tools/mutation_score.py                  # every module: run, then score
    .venv/bin/python tools/mutation_score.py _paths _read     # some of them
    .venv/bin/python tools/mutation_score.py --report-only    # score the last run again
    .venv/bin/python tools/mutation_score.py --fail-under 90  # exit 1 below 90 % in a module

The modules are the ``only_mutate`` list of ``[tool.mutmut]`` in pyproject.toml, the tests the
``pytest_add_cli_args_test_selection`` there. mutmut copies the package into ``mutants/`` and
runs, for each mutant, the selected tests that call the mutated function. Each run starts from
an empty ``mutants/`` (mutmut would keep the verdicts of functions that did not change, even
when the tests did), one module after the other so that each module's time is measured, under
``nice`` and with ``--jobs`` workers (default 2).

Safety: a mutant can break the resolution of the root and make a test write to the container
default root (/var/run/kubernetes.io/dra-device-attributes) of the machine. Where it can (as
root, with ``unshare``), the script runs mutmut in a private mount namespace in which a
read-only tmpfs covers the deepest existing directory on the way to that root (/run, where
/var/run links to it; what it held stays reachable, and writable, through symlinks): a test
that a mutant makes write there fails (the mutant is killed) and leaves nothing behind for the
tests of the next mutants to find. Where it cannot, it says so, and it always checks after the
run that no such directory was left behind (it removes one the run made).

A mutant that survives is either a gap in the tests or equivalent: a change no test can see.
Equivalent mutants are listed in tools/mutation-equivalents.txt, one per line::

    <mutant name> <fingerprint> <why no test can tell it from the original>

The fingerprint is a hash of the mutant's diff (what ``mutmut show <name>`` prints, without its
header lines), so an entry stops applying when the code around the mutation changes; a
survivor's fingerprint is printed next to its name. The score of a module is the share of its
mutants that the tests kill (a timeout or a crash counts as killed), equivalent ones left out.

Entries whose reason starts "never active" are not equivalent: they mutate code that runs while
the module is imported, which mutmut never switches to the mutant, so the run cannot measure
them (applied by hand, the tests named in the reason kill them). They are left out of the score
as not measured, and reported in a column of their own, never counted as equivalent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
CONTAINER_ROOT = Path("/var/run/kubernetes.io/dra-device-attributes")
"""dra_metadata._reading._paths.CONTAINER_DIR, the root that a mutant may make a test write to
(a test of this script checks that they agree)."""
PURE_PYTHON_VARIABLE = "DRA_METADATA_PURE_PYTHON"
"""dra_metadata._decoding._convert.PURE_PYTHON_VARIABLE: mutation runs decode with the Python
code that mutmut mutates, not the compiled attribute check (a test of this script checks that
they agree)."""
EQUIVALENTS = PROJECT / "tools" / "mutation-equivalents.txt"
MUTANTS = PROJECT / "mutants"
MUTANT_SEPARATOR = "__mutmut_"

NEVER_ACTIVE = "never active"
"""How the reason of an entry that the run cannot measure starts (see the module docstring)."""

DETECTED = frozenset({"killed", "timeout", "segfault", "caught by type check"})
UNDETECTED = frozenset({"survived", "no tests", "suspicious"})
"""Every other status (not checked, skipped, interrupted) means the run did not finish."""


@dataclass(frozen=True)
class Equivalent:
    mutant: str
    fingerprint: str
    reason: str
    line: int

    @property
    def function(self) -> str:
        return function_of(self.mutant)

    @property
    def never_active(self) -> bool:
        """A mutant of import-time code: not measured by the run, not equivalent."""
        return self.reason.startswith(NEVER_ACTIVE)


@dataclass
class Module:
    name: str
    path: Path
    seconds: float | None = None
    statuses: dict[str, str] = field(default_factory=dict)
    equivalent: dict[str, Equivalent] = field(default_factory=dict)
    not_measured: dict[str, Equivalent] = field(default_factory=dict)
    """Mutants of import-time code (entries that start "never active"): not run, not scored."""
    survivors: dict[str, str] = field(default_factory=dict)
    """Undetected mutants that are not listed as equivalent, with their fingerprints."""

    def count(self, statuses: frozenset[str]) -> int:
        return sum(status in statuses for status in self.statuses.values())

    @property
    def score(self) -> float | None:
        counted = len(self.statuses) - len(self.equivalent) - len(self.not_measured)
        return None if counted <= 0 else 100 * self.count(DETECTED) / counted


def function_of(mutant: str) -> str:
    return mutant.partition(MUTANT_SEPARATOR)[0]


def fingerprint(diff: str) -> str:
    changed = [line for line in diff.splitlines() if not line.startswith(("---", "+++", "@@"))]
    return hashlib.sha256("\n".join(changed).encode()).hexdigest()[:12]


def load_equivalents(path: Path = EQUIVALENTS) -> list[Equivalent]:
    """The entries of the equivalents file; raises ValueError naming a malformed line."""
    entries = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = text.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(maxsplit=2)
        if len(parts) < 3 or MUTANT_SEPARATOR not in parts[0] or len(parts[1]) != 12:
            raise ValueError(
                f"{path}:{number}: expected '<mutant name> <12-digit fingerprint> <reason>', "
                f"got {line!r}"
            )
        entries.append(Equivalent(parts[0], parts[1], parts[2], number))
    return entries


def configured_modules() -> list[Module]:
    """The modules of ``only_mutate``, in its order (a pattern may name several files)."""
    from mutmut.configuration import config  # noqa: PLC0415 - reads pyproject.toml in the cwd

    modules: list[Module] = []
    for pattern in config().only_mutate:
        paths = sorted(Path().glob(pattern))
        if not paths:
            print(f"[tool.mutmut] only_mutate: {pattern!r} matches no file: not measured")
        modules.extend(Module(".".join(path.with_suffix("").parts), path) for path in paths)
    return modules


def select(modules: list[Module], names: Sequence[str]) -> list[Module]:
    if not names:
        return modules
    chosen = []
    for name in names:
        found = [m for m in modules if name in (m.name, m.name.rpartition(".")[2], str(m.path))]
        if not found:
            known = ", ".join(module.name for module in modules)
            sys.exit(f"no module {name!r} in [tool.mutmut] only_mutate ({known})")
        chosen.extend(found)
    return chosen


def run(module: Module, jobs: int) -> None:
    log = MUTANTS / f"run-{module.name}.log"
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs)]
    if shutil.which("nice"):
        command = ["nice", "-n", "10", *command]
    print(f"{module.name}: running mutmut (log: {log.relative_to(PROJECT)})", flush=True)
    start = time.monotonic()
    with log.open("wb") as output:
        result = subprocess.run(
            [*command, f"{module.name}.*"],
            env={**os.environ, PURE_PYTHON_VARIABLE: "1"},
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    module.seconds = time.monotonic() - start
    if result.returncode != 0:
        tail = log.read_bytes()[-3000:].decode(errors="replace")
        sys.exit(f"{tail}\nmutmut run failed for {module.name} (exit {result.returncode})")


def load_results(module: Module) -> None:
    from mutmut.stats import status_by_exit_code  # noqa: PLC0415 - mutmut's own verdicts

    meta = MUTANTS / f"{module.path}.meta"
    if not meta.is_file():
        sys.exit(f"no results for {module.name} ({meta} is missing): run without --report-only")
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    module.statuses = {name: status_by_exit_code[code] for name, code in codes.items()}


def judge(module: Module, equivalents: list[Equivalent], used: set[Equivalent]) -> None:
    """Sort the module's undetected mutants into equivalent ones and survivors."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant  # noqa: PLC0415

    listed: dict[tuple[str, str], list[Equivalent]] = {}
    for entry in equivalents:
        if entry not in used:
            listed.setdefault((entry.function, entry.fingerprint), []).append(entry)
    for mutant, status in sorted(module.statuses.items()):
        if status not in UNDETECTED:
            continue
        mark = fingerprint(get_diff_for_mutant(mutant, path=module.path))
        candidates = listed.get((function_of(mutant), mark))
        if candidates:  # the same change in the same function: one entry each
            entry = candidates.pop(0)
            used.add(entry)
            if entry.never_active:
                module.not_measured[mutant] = entry
            else:
                module.equivalent[mutant] = entry
        else:
            module.survivors[mutant] = mark


def summary(mutant: str, path: Path) -> str:
    from mutmut.mutation.diff_apply import get_diff_for_mutant  # noqa: PLC0415

    diff = get_diff_for_mutant(mutant, path=path)
    changed = [
        line
        for line in diff.splitlines()
        if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))
    ]
    return " | ".join(" ".join(line.split()) for line in changed)


def report(modules: list[Module], *, show: bool) -> None:
    header = f"{'module':<28}{'mutants':>8}{'killed':>8}{'survived':>9}{'equiv.':>8}"
    print(f"\n{header}{'not run':>9}{'score':>8}{'time':>9}")
    for module in modules:
        unfinished = len(module.statuses) - module.count(DETECTED | UNDETECTED)
        score = "-" if module.score is None else f"{module.score:.1f}%"
        seconds = "-" if module.seconds is None else f"{module.seconds:.0f} s"
        print(
            f"{module.name:<28}{len(module.statuses):>8}{module.count(DETECTED):>8}"
            f"{len(module.survivors):>9}{len(module.equivalent):>8}"
            f"{len(module.not_measured):>9}{score:>8}{seconds:>9}"
            + (f"  ({unfinished} not checked: the run did not finish)" if unfinished else "")
        )
    if any(module.not_measured for module in modules):
        print(
            "not run: mutants of code that runs at import, which mutmut never switches on; "
            "not measured, left out of the score (not equivalent: the tests named in "
            f"{EQUIVALENTS.name} kill them when applied by hand)"
        )
    for module in modules:
        if module.survivors:
            print(f"\nSurvivors in {module.path} (`mutmut show NAME`; a test, or an equivalent):")
        for mutant, mark in module.survivors.items():
            print(f"  {mutant} {mark} [{module.statuses[mutant]}]")
            if show:
                print("    " + summary(mutant, module.path))


def guarded_directory(root: Path = CONTAINER_ROOT) -> Path:
    """The directory the private tmpfs covers: the deepest existing one on the way to ``root``,
    symlinks resolved (/run for /var/run/kubernetes.io/... where /var/run links to /run)."""
    directory = Path(os.path.realpath(root))
    while not directory.is_dir():
        directory = directory.parent
    return directory


def first_missing(root: Path = CONTAINER_ROOT) -> Path | None:
    """The first directory on the way to ``root`` (symlinks resolved) that does not exist."""
    resolved = Path(os.path.realpath(root))
    for directory in (*reversed(resolved.parents), resolved):
        if not directory.exists():
            return directory
    return None


def private_namespace_prefix(directory: Path) -> list[str] | str:
    """The command prefix that runs a command in a private mount namespace, or why there is
    none on this machine."""
    unshare = shutil.which("unshare")
    if directory == Path("/"):
        return "nothing on the way to the container root exists but /, which a tmpfs cannot cover"
    if os.geteuid() != 0:
        return "not root: mounting a tmpfs needs root"
    if unshare is None or shutil.which("mount") is None:
        return "no unshare or mount command"
    prefix = [unshare, "--mount", "--propagation", "private"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"unshare --mount failed: {probe.stderr.strip() or probe.returncode}"
    return prefix


def cover_with_tmpfs(directory: Path, original: Path) -> None:
    """In the private mount namespace: a read-only tmpfs over ``directory``, in which each of
    its entries is a symlink to the entry itself, kept reachable at ``original`` (a bind
    mount)."""
    mount = shutil.which("mount") or "/bin/mount"
    device = directory.stat().st_dev
    subprocess.run([mount, "--rbind", str(directory), str(original)], check=True)
    tmpfs = ["-t", "tmpfs", "-o", "mode=0755", "dra-mutation-run", str(directory)]
    subprocess.run([mount, *tmpfs], check=True)
    for name in os.listdir(original):
        (directory / name).symlink_to(original / name)
    subprocess.run([mount, "-o", "remount,ro", str(directory)], check=True)
    if directory.stat().st_dev == device or not os.statvfs(directory).f_flag & os.ST_RDONLY:
        sys.exit(f"{directory} is not covered by a read-only tmpfs: refusing to run mutants")


def run_in_private_namespace(arguments: Sequence[str]) -> int | None:
    """Run this script again in a private mount namespace; its exit status, or None (after
    saying why) when this machine does not allow it."""
    directory = guarded_directory()
    prefix = private_namespace_prefix(directory)
    if isinstance(prefix, str):
        print(
            f"WARNING: mutants run WITHOUT a private mount namespace ({prefix}): a mutant that "
            f"breaks root resolution can make a test write to {CONTAINER_ROOT} on this machine",
            flush=True,
        )
        return None
    print(
        f"Mutants run in a private mount namespace: a read-only tmpfs covers {directory} there, "
        f"so no test can write to {CONTAINER_ROOT} on this machine",
        flush=True,
    )
    original = Path(tempfile.mkdtemp(prefix="dra-mutation-original-"))
    command = [sys.executable, str(Path(__file__).resolve()), *arguments]
    try:
        return subprocess.run(
            [*prefix, *command, "--private-tmpfs", f"{directory}:{original}"], check=False
        ).returncode
    finally:
        original.rmdir()  # the mount point of the namespace, gone with it


def check_container_root(missing: Path | None) -> None:
    """Remove what the run made on the way to the container root (``missing`` did not exist
    before the run), saying so."""
    if missing is not None and missing.exists():
        print(f"WARNING: the mutation run made {missing} on this machine: removed")
        shutil.rmtree(missing)


def main(arguments: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument(
        "modules", nargs="*", help="_paths, dra_metadata._reading._read, ... (default all)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="mutmut workers (default 2)")
    parser.add_argument("--report-only", action="store_true", help="score the last run")
    parser.add_argument("--show", action="store_true", help="print the change of each survivor")
    parser.add_argument("--fail-under", type=float, help="exit 1 if a module scores below this")
    parser.add_argument("--private-tmpfs", help=argparse.SUPPRESS)  # DIRECTORY:ORIGINAL
    given = sys.argv[1:] if arguments is None else list(arguments)
    options = parser.parse_args(given)
    os.chdir(PROJECT)
    modules = select(configured_modules(), options.modules)
    equivalents = load_equivalents()
    if not options.report_only and options.private_tmpfs is None:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up when ended too
        missing = first_missing()
        try:
            status = run_in_private_namespace(given)
            if status is None:
                status = score(modules, equivalents, options)
        finally:
            check_container_root(missing)
        return status
    if options.private_tmpfs is not None:
        directory, _, original = options.private_tmpfs.partition(":")
        cover_with_tmpfs(Path(directory), Path(original))
    return score(modules, equivalents, options)


def score(modules: list[Module], equivalents: list[Equivalent], options: argparse.Namespace) -> int:
    """Run mutmut on each module (unless --report-only), then report the scores."""
    if not options.report_only:
        shutil.rmtree(MUTANTS, ignore_errors=True)
        MUTANTS.mkdir()
        for module in modules:
            run(module, options.jobs)
    used: set[Equivalent] = set()
    for module in modules:
        load_results(module)
        judge(module, equivalents, used)
    report(modules, show=options.show)
    names = {module.name for module in modules}
    stale = [
        entry
        for entry in equivalents
        if entry not in used and function_of(entry.mutant).rpartition(".")[0] in names
    ]
    for entry in stale:
        print(
            f"{EQUIVALENTS.name}:{entry.line}: {entry.mutant} {entry.fingerprint} matches no "
            "surviving mutant (the code changed, or a test kills it now): check it, then "
            "update or delete the entry"
        )
    if options.fail_under is None:
        return 0
    return 1 if any((module.score or 0) < options.fail_under for module in modules) else 0


if __name__ == "__main__":
    sys.exit(main())
