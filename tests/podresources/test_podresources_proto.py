"""The project's own api.proto says what the published PodResources v1 API says (package,
service, methods, every message's fields and numbers), and the committed generated modules
are what protoc makes of it today."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dra_metadata.podresources import _client
from dra_metadata.podresources._proto import api_pb2

from helpers import REPO

FACTS = json.loads((REPO / "tests" / "data" / "node" / "podresources-proto.json").read_text())
TOOL = REPO / "tools" / "generate_podresources.py"


def _pinned_generator() -> str:
    """The grpcio-tools release the dev extra pins (pyproject.toml)."""
    text = (REPO / "pyproject.toml").read_text()
    match = re.search(r'"grpcio-tools==([\d.]+)"', text)
    assert match is not None, "the dev extra pins grpcio-tools"
    return match.group(1)


def test_the_committed_messages_are_what_protoc_generates(tmp_path: Path) -> None:
    try:
        installed = importlib.metadata.version("grpcio-tools")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(
            "needs the dev extra's grpcio-tools, the generator (the README's test command "
            "installs it; nox's test sessions install the test extra only)"
        )
    assert installed == _pinned_generator(), (
        f"grpcio-tools {installed} is installed; the dev extra pins {_pinned_generator()}, "
        "whose protoc generated the committed modules: pip install -e '.[dev]'"
    )
    result = subprocess.run(
        [sys.executable, str(TOOL), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    generated = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*_pb2.py*"))
    assert [str(path) for path in generated] == [
        "dra_metadata/podresources/_proto/api_pb2.py",
        "dra_metadata/podresources/_proto/api_pb2.pyi",
    ]
    for path in generated:
        assert (tmp_path / path).read_bytes() == (REPO / path).read_bytes(), (
            f"{path} drifted from api.proto: run `python tools/generate_podresources.py`"
        )


def test_the_proto_has_the_package_service_and_methods_of_the_api() -> None:
    descriptor = api_pb2.DESCRIPTOR
    assert descriptor.package == FACTS["package"]
    services = {
        service.full_name: [method.name for method in service.methods]
        for service in descriptor.services_by_name.values()
    }
    assert services == FACTS["services"]
    assert _client.SERVICE in services
    for method in (_client.LIST, _client.GET, _client.ALLOCATABLE):
        found = descriptor.services_by_name["PodResourcesLister"].methods_by_name[method.name]
        assert found.input_type.name == method.request
        assert found.output_type.name == method.response


def test_every_message_has_the_fields_and_numbers_of_the_api() -> None:
    messages = {
        name: {field.name: field.number for field in message.fields}
        for name, message in api_pb2.DESCRIPTOR.message_types_by_name.items()
    }
    assert messages == FACTS["messages"]


def test_the_retired_field_number_stays_reserved() -> None:
    """DynamicResource's 1 (a class name until Kubernetes 1.31) must not be reused."""
    proto = (REPO / "dra_metadata" / "podresources" / "_proto" / "api.proto").read_text()
    assert re.search(r"message DynamicResource \{\s*reserved 1;", proto)


def test_share_id_has_presence_as_in_the_api() -> None:
    field = api_pb2.ClaimResource.DESCRIPTOR.fields_by_name["share_id"]
    assert field.has_presence
    assert not api_pb2.ClaimResource().HasField("share_id")


def test_the_messages_load_with_the_declared_protobuf_floor() -> None:
    """The generated module checks the runtime at import: its gencode version is the floor
    the podresources extra declares."""
    generated = (REPO / "dra_metadata/podresources/_proto/api_pb2.py").read_text()
    match = re.search(r"# Protobuf Python Version: ([\d.]+)", generated)
    assert match is not None
    extra = (REPO / "pyproject.toml").read_text()
    assert f'"protobuf>={match.group(1)},<8"' in extra
