"""What every stage's tests share: the Hypothesis profiles, the number of xdist workers, and a
clean DRA_METADATA_ROOT. Fixtures used by one stage only are in that folder's conftest.py;
what tests import is in helpers.py (conftest.py files are not imported by tests)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# Mutation testing (tools/mutation_score.py, --hypothesis-profile=mutation): the same examples in
# every run, no example database, and pytest.main run several times in one process.
settings.register_profile(
    "mutation",
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.differing_executors],
)


MOST_WORKERS = 6
"""Each worker starts its own kube-apiserver and etcd (and kube-controller-manager) when the
API tests run: more than a few would cost more than they save."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """What ``-n auto`` (pyproject.toml's addopts) starts: a worker more than the cores this
    process may run on, as most tests wait on subprocesses, files and sockets rather than
    compute (two workers on two cores kept them a third idle)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min((cores or 1) + 1, MOST_WORKERS)


@pytest.fixture(autouse=True)
def _no_root_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests name their root explicitly unless they set DRA_METADATA_ROOT themselves."""
    monkeypatch.delenv("DRA_METADATA_ROOT", raising=False)
