from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent
REPO = TESTS.parent
UPSTREAM = TESTS / "data" / "upstream"
SHARED_UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream"

# Mutation testing (tools/mutation_score.py, --hypothesis-profile=mutation): the same examples in
# every run, no example database, and pytest.main run several times in one process.
settings.register_profile(
    "mutation",
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.differing_executors],
)


@pytest.fixture
def head_fixture() -> bytes:
    return (UPSTREAM / "HEAD" / "metadata.json").read_bytes()


@pytest.fixture
def v136_fixture() -> bytes:
    return (UPSTREAM / "v1.36.0" / "metadata.json").read_bytes()


@pytest.fixture(autouse=True)
def _no_root_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests name their root explicitly unless they set DRA_METADATA_ROOT themselves."""
    monkeypatch.delenv("DRA_METADATA_ROOT", raising=False)


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
