"""dra_metadata.strategies under Hypothesis' default settings, as a user's own test meets them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

from dra_metadata import strategies

# A plain @given test of one public strategy, with the default profile and a fresh, empty
# example database and Hypothesis directory, as in a user's CI: every health check applies
# (too_slow fails when the first ten draws take more than one second together). One process
# per strategy: work done once per process (Unicode tables, caches, Hypothesis' scan of the
# local modules for constants) must not be paid by an earlier case and hidden from a later one.
#
# Hypothesis times the draws (too_slow) and the test runs (deadline) with time.perf_counter:
# wall-clock time, which other processes' load stretches without limit (on a saturated machine a
# process may get an eighth of a core). The script puts Hypothesis on this process's CPU clock
# before importing it, so that the checks, with their own thresholds, measure what the strategy
# costs, as on an idle machine, and pass or fail alike however busy the machine is.
_SCRIPT = """
import time
time.perf_counter = time.process_time  # before Hypothesis is imported: it keeps references
import os
import sys
from hypothesis import given, settings
from dra_metadata import strategies

settings.load_profile("default")
assert settings().database is not None and settings().deadline is not None
# the fresh, empty storage directory the test gave is the one in use
storage = os.environ["HYPOTHESIS_STORAGE_DIRECTORY"]
assert str(getattr(settings().database, "path", "")).startswith(storage), settings().database
assert not os.path.exists(storage)

@given(eval(sys.argv[1], vars(strategies)))
def test(value):
    pass

test()
"""
# Every public factory (with arguments, they build the same strategies: device_metadata() draws
# from those with the sizes and drivers it needs).
_STRATEGIES = [
    "dns_labels()",
    "dns_subdomains()",
    "qualified_names()",
    "device_attributes()",
    "network_device_data()",
    "devices()",
    "device_metadata_requests()",
    "object_meta()",
    "device_metadata()",
    "device_metadata(full_object_meta=True)",
    "metadata_streams()",
]


def _run_under_default_settings(strategy: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        # in CI, Hypothesis loads its "ci" profile, which suppresses too_slow
        if key not in {"CI", "TF_BUILD"} and not key.startswith("HYPOTHESIS")
    }
    environment["HYPOTHESIS_STORAGE_DIRECTORY"] = str(tmp_path / ".hypothesis")
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", _SCRIPT, strategy],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("strategy", _STRATEGIES)
def test_passes_the_health_checks_with_default_settings(strategy: str, tmp_path: Path) -> None:
    result = _run_under_default_settings(strategy, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]


def test_a_strategy_too_slow_for_the_health_check_fails_it(tmp_path: Path) -> None:
    # Each draw sums 20 million integers: a few tenths of a second of CPU, more than a second
    # for the first draws together, on any machine and under any load.
    result = _run_under_default_settings(
        "st.integers().map(lambda n: n + 0 * sum(range(20_000_000)))", tmp_path
    )
    assert result.returncode == 1
    assert "FailedHealthCheck: Input generation is slow" in result.stderr, result.stderr[-3000:]


@settings(max_examples=50)
@given(strategies.dns_subdomains(63), strategies.dns_labels(5), strategies.qualified_names("d.io"))
def test_sizes_and_forms(subdomain: str, label: str, qualified: str) -> None:
    assert 1 <= len(subdomain) <= 63
    assert 1 <= len(label) <= 5
    assert "/" not in qualified or qualified.startswith("d.io/")
