"""Fixtures of the decoding tests: upstream's fixture streams, as bytes."""

from __future__ import annotations

import pytest

from helpers import UPSTREAM


@pytest.fixture
def head_fixture() -> bytes:
    return (UPSTREAM / "HEAD" / "metadata.json").read_bytes()


@pytest.fixture
def v136_fixture() -> bytes:
    return (UPSTREAM / "v1.36.0" / "metadata.json").read_bytes()
