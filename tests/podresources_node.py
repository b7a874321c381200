"""The real node's kubelet for the PodResources tests: the ``kubelet`` fixture.

A real node is where ``DRA_METADATA_NODE_ASSETS`` names the node's assets (the real-node
harness) and the kubelet's PodResources socket ($DRA_METADATA_PODRESOURCES_SOCKET, else the
kubelet's default) answers; elsewhere the tests that use the fixture are skipped with the reason.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dra_metadata import podresources

ASSETS_VARIABLE = "DRA_METADATA_NODE_ASSETS"


def _socket() -> str:
    return os.environ.get(podresources.SOCKET_ENVIRONMENT_VARIABLE) or podresources.DEFAULT_SOCKET


@pytest.fixture(scope="module", name="kubelet")
def kubelet_fixture() -> str:
    """The socket of a running kubelet, or a skip saying what is missing."""
    if not os.environ.get(ASSETS_VARIABLE):
        pytest.skip(f"needs a real node: ${ASSETS_VARIABLE} is not set (the real-node harness)")
    socket = _socket()
    try:
        is_socket = stat.S_ISSOCK(Path(socket).stat().st_mode)
    except OSError as error:
        pytest.skip(f"no kubelet PodResources socket at {socket}: {error.strerror}")
    if not is_socket:
        pytest.skip(f"{socket} is no socket")
    try:
        podresources.list_pod_resources(socket=socket, timeout=10)
    except podresources.PodResourcesConnectionError as error:
        pytest.skip(f"no kubelet answers at {socket}: {error}")
    return socket
