"""Path constants and builders (spec §1) and the name checks that keep paths below the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dra_metadata
from dra_metadata import (
    CONTAINER_DIR,
    KNOWN_API_VERSIONS,
    METADATA_FILE_SUFFIX,
    RESOURCE_CLAIM_TEMPLATES_SUBDIR,
    RESOURCE_CLAIMS_SUBDIR,
    InvalidNameError,
    default_root,
    metadata_file_name,
    resource_claim_file_path,
    resource_claim_request_dir,
    resource_claim_template_file_path,
    resource_claim_template_request_dir,
)


def test_constants() -> None:
    assert CONTAINER_DIR == "/var/run/kubernetes.io/dra-device-attributes"
    assert RESOURCE_CLAIMS_SUBDIR == "resourceclaims"
    assert RESOURCE_CLAIM_TEMPLATES_SUBDIR == "resourceclaimtemplates"
    assert METADATA_FILE_SUFFIX == "-metadata.json"
    assert KNOWN_API_VERSIONS == (
        "metadata.resource.k8s.io/v1beta1",
        "metadata.resource.k8s.io/v1alpha1",
    )


def test_default_paths() -> None:
    assert metadata_file_name("gpu.example.com") == "gpu.example.com-metadata.json"
    assert resource_claim_file_path("gpu.example.com", "my-claim", "gpu") == Path(
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/my-claim/gpu/"
        "gpu.example.com-metadata.json"
    )
    assert resource_claim_template_file_path("gpu.example.com", "my-gpu", "gpu") == Path(
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/my-gpu/gpu/"
        "gpu.example.com-metadata.json"
    )
    assert resource_claim_request_dir("c", "r") == Path(CONTAINER_DIR, "resourceclaims", "c", "r")
    assert resource_claim_template_request_dir("c", "r") == Path(
        CONTAINER_DIR, "resourceclaimtemplates", "c", "r"
    )


def test_subrequest_maps_to_the_request_directory(tmp_path: Path) -> None:
    assert resource_claim_file_path("d", "c", "gpu/high-memory", root=tmp_path) == (
        tmp_path / "resourceclaims" / "c" / "gpu" / "d-metadata.json"
    )
    assert resource_claim_template_request_dir("c", "gpu/high-memory", root=str(tmp_path)) == (
        tmp_path / "resourceclaimtemplates" / "c" / "gpu"
    )


def test_root_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_root() == Path(CONTAINER_DIR)
    monkeypatch.setenv("DRA_METADATA_ROOT", str(tmp_path / "env"))
    assert default_root() == tmp_path / "env"
    assert resource_claim_request_dir("c", "r") == tmp_path / "env" / "resourceclaims" / "c" / "r"
    # The argument wins over the environment.
    assert resource_claim_request_dir("c", "r", root=tmp_path) == tmp_path / "resourceclaims/c/r"
    monkeypatch.setenv("DRA_METADATA_ROOT", "")
    assert default_root() == Path(CONTAINER_DIR)


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: resource_claim_request_dir("", "gpu"), "claim_name"),
        (lambda: resource_claim_request_dir(".", "gpu"), "claim_name"),
        (lambda: resource_claim_request_dir("..", "gpu"), "claim_name"),
        (lambda: resource_claim_request_dir("a/b", "gpu"), "claim_name"),
        (lambda: resource_claim_request_dir("a\0b", "gpu"), "claim_name"),
        (lambda: resource_claim_request_dir("a" * 254, "gpu"), "claim_name"),
        (lambda: resource_claim_template_request_dir("..", "gpu"), "pod_claim_name"),
        (lambda: resource_claim_request_dir("c", ""), "request_name"),
        (lambda: resource_claim_request_dir("c", "/sub"), "request_name"),
        (lambda: resource_claim_request_dir("c", "gpu/"), "request_name"),
        (lambda: resource_claim_request_dir("c", "gpu/.."), "request_name"),
        (lambda: resource_claim_request_dir("c", "../x"), "request_name"),
        (lambda: resource_claim_request_dir("c", "a/b/c"), "request_name"),
        (lambda: resource_claim_request_dir("c", "g" * 250 + "/abc"), "request_name"),
        (lambda: metadata_file_name("a/b"), "driver"),
        (lambda: metadata_file_name(""), "driver"),
        (lambda: metadata_file_name(".."), "driver"),
        (lambda: resource_claim_file_path("..", "c", "r"), "driver"),
        (lambda: resource_claim_request_dir(7, "gpu"), "claim_name"),  # type: ignore[arg-type]
        (lambda: resource_claim_request_dir("\ud800", "gpu"), "claim_name"),
    ],
)
def test_invalid_names(call: object, argument: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        call()  # type: ignore[operator]
    assert info.value.argument == argument
    assert isinstance(info.value, ValueError)
    assert argument in str(info.value)


def test_253_bytes_is_the_limit() -> None:
    assert resource_claim_request_dir("a" * 253, "r").name == "r"
    with pytest.raises(InvalidNameError, match="254 bytes"):
        resource_claim_request_dir("é" * 127, "r")


_NAMES = st.one_of(
    st.text(),
    st.text(alphabet="./\0ab-", max_size=8),
    st.sampled_from(["", ".", "..", "/", "a/..", "../a", "a/b", "a/b/c", "a/."]),
)


@given(claim=_NAMES, request=_NAMES, driver=_NAMES, template=st.booleans())
def test_no_name_leaves_the_root(claim: str, request: str, driver: str, template: bool) -> None:
    root = Path("/r/o/o/t")
    build = resource_claim_template_file_path if template else resource_claim_file_path
    try:
        path = build(driver, claim, request, root=root)
    except InvalidNameError:
        return
    resolved = Path(os.path.normpath(path))
    assert resolved.is_relative_to(
        root / (RESOURCE_CLAIM_TEMPLATES_SUBDIR if template else RESOURCE_CLAIMS_SUBDIR)
    )
    assert len(resolved.relative_to(root).parts) == 4
    assert resolved == path


def test_invalid_name_error_is_public() -> None:
    assert dra_metadata.InvalidNameError.__module__ == "dra_metadata"
