"""Error messages that list names stay short: at most ten names, then how many more.

Every such message goes through `_errors.shown_names`; each test below feeds one of them far
more names than it shows and checks what the reader gets: the first names, the count of the
rest, and a message whose length does not grow with the input.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_metadata import (
    AttributeNotFoundError,
    DeviceMetadata,
    MetadataConflictError,
    MetadataNotFoundError,
    NoCompatibleVersionError,
    decode_stream,
    read_claim_metadata,
    resource_claim_request_dir,
)
from dra_metadata._model._errors import LISTED_AT_MOST, shown_names
from dra_metadata.writer import encode_stream

from helpers import stream, wire_object

MANY = 2000


def test_the_helper_shows_ten_names_and_counts_the_rest() -> None:
    assert LISTED_AT_MOST == 10
    assert shown_names([]) == ""
    assert shown_names(["a"]) == "a"
    ten = [f"n{index}" for index in range(10)]
    assert shown_names(ten) == ", ".join(ten)
    assert shown_names([*ten, "x"]) == ", ".join(ten) + ", and 1 more"
    assert shown_names([*ten, "x", "y"], " or ") == " or ".join(ten) + ", and 2 more"
    assert shown_names(tuple(ten)) == ", ".join(ten)


def test_a_conflict_over_thousands_of_files_names_ten(tmp_path: Path) -> None:
    directory = resource_claim_request_dir("c", "gpu", root=tmp_path)
    directory.mkdir(parents=True)
    for index in range(MANY):
        meta = {"name": "c", "namespace": "default", "uid": f"uid-{index:04d}"}
        (directory / f"d{index:04d}-metadata.json").write_bytes(stream(wire_object(metadata=meta)))
    with pytest.raises(MetadataConflictError) as info:
        read_claim_metadata("c", "gpu", root=tmp_path, validate=True)
    message = str(info.value)
    assert (
        "disagree about the claim's uid (d0000-metadata.json: 'uid-0000', "
        "d0001-metadata.json: 'uid-0001', "
    ) in message
    assert "d0009-metadata.json: 'uid-0009', and 1990 more); the merged uid is empty" in message
    assert "d0010-metadata.json" not in message
    assert len(message) < 1000
    assert len(info.value.values) == MANY  # the whole list stays on the exception


def test_unknown_versions_are_named_ten_at_most() -> None:
    versions = [f"example.com/v{index}" for index in range(25)]
    data = b"".join(stream(wire_object(version)) for version in versions)
    with pytest.raises(NoCompatibleVersionError) as info:
        decode_stream(data)
    assert f"(unknown versions: {', '.join(versions[:10])}, and 15 more)" in str(info.value)
    assert info.value.unknown_versions == tuple(versions)


def test_a_short_name_found_under_many_domains_suggests_ten() -> None:
    domains = [f"d{index:02d}.example.com/numa" for index in range(30)]
    attributes = {domain: {"int": 0} for domain in domains}
    wire = {"driver": "gpu.example.com", "pool": "p", "name": "n", "attributes": attributes}
    decoded = decode_stream(stream(wire_object(requests=[{"name": "r", "devices": [wire]}])))
    device = decoded.metadata.devices[0]
    with pytest.raises(AttributeNotFoundError) as info:
        device.attribute("numa")
    assert str(info.value).endswith(f"did you mean {' or '.join(domains[:10])}, and 20 more?")
    assert info.value.suggestions == tuple(domains)


def test_many_allocated_subrequests_are_named_ten_at_most(tmp_path: Path) -> None:
    names = [f"gpu/s{index:02d}" for index in range(12)]
    requests = [{"name": name, "devices": []} for name in names]
    path = tmp_path / "resourceclaims" / "c" / "gpu" / "d-metadata.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(stream(wire_object(requests=requests)))
    with pytest.raises(MetadataNotFoundError) as info:
        read_claim_metadata("c", "gpu/other", root=tmp_path)
    assert f"was allocated as {' and '.join(names[:10])}, and 2 more, not as gpu/other" in str(
        info.value
    )


def test_repeated_versions_are_named_ten_at_most() -> None:
    version = "metadata.resource.k8s.io/v1alpha1"
    with pytest.raises(ValueError, match="must not repeat") as info:
        encode_stream(DeviceMetadata(), versions=[version] * 1000)
    assert str(info.value).endswith(f"{', '.join([version] * 10)}, and 990 more")


def test_a_claim_status_of_many_requests_names_ten() -> None:
    from dra_metadata.kube import ClaimStatus  # noqa: PLC0415 - the kube extra

    requests = [f"r{index}" for index in range(MANY)]
    status = ClaimStatus(name="c", namespace="ns", uid="u", resource_version="1", requests=requests)
    with pytest.raises(MetadataNotFoundError) as caught:
        status.to_metadata("missing")
    message = str(caught.value)
    assert message.endswith(f"its requests: {', '.join(requests[:10])}, and {MANY - 10} more")
    assert len(message) < 300


def test_the_stale_report_of_many_files_names_ten(capsys: pytest.CaptureFixture[str]) -> None:
    from dra_metadata.cli._exit import EXIT_STALE, report_stale  # noqa: PLC0415

    paths = [Path(f"/m/f{index}-metadata.json") for index in range(MANY)]
    assert report_stale(paths) == EXIT_STALE
    message = capsys.readouterr().err
    assert "/m/f9-metadata.json, and 1990 more" in message
    assert "/m/f10-metadata.json" not in message
    assert len(message) < 1000
