"""Why a name is refused: the reasons of InvalidNameError, and the byte limits of names."""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_metadata import (
    InvalidNameError,
    metadata_file_name,
    read_claim_metadata,
    read_template_metadata,
    resource_claim_request_dir,
    resource_claim_template_request_dir,
)

INVALID_NAMES = [
    # call, argument, value, reason
    (lambda: resource_claim_request_dir("", "gpu"), "claim_name", "", "must not be empty"),
    (lambda: resource_claim_request_dir(".", "gpu"), "claim_name", ".", "'.' is not a name"),
    (lambda: resource_claim_request_dir("..", "gpu"), "claim_name", "..", "'..' is not a name"),
    (lambda: resource_claim_request_dir("a/b", "gpu"), "claim_name", "a/b", "must not contain '/'"),
    (
        lambda: resource_claim_request_dir("a\0b", "gpu"),
        "claim_name",
        "a\0b",
        "must not contain a NUL character",
    ),
    (
        lambda: resource_claim_request_dir(7, "gpu"),  # type: ignore[arg-type]
        "claim_name",
        7,
        "must be a str, not int",
    ),
    (
        lambda: resource_claim_request_dir("\ud800", "gpu"),
        "claim_name",
        "\ud800",
        "is not valid Unicode text",
    ),
    (
        lambda: resource_claim_request_dir("é" * 127, "gpu"),
        "claim_name",
        "é" * 127,
        "is 254 bytes long, at most 253 allowed",
    ),
    (
        lambda: resource_claim_template_request_dir("..", "gpu"),
        "pod_claim_name",
        "..",
        "'..' is not a name",
    ),
    (lambda: resource_claim_request_dir("c", ""), "request_name", "", "must not be empty"),
    (lambda: resource_claim_request_dir("c", "/sub"), "request_name", "/sub", "must not be empty"),
    (lambda: resource_claim_request_dir("c", "gpu/"), "request_name", "gpu/", "must not be empty"),
    (
        lambda: resource_claim_request_dir("c", "../sub"),
        "request_name",
        "../sub",
        "'..' is not a name",
    ),
    (
        lambda: resource_claim_request_dir("c", "gpu/."),
        "request_name",
        "gpu/.",
        "'.' is not a name",
    ),
    (
        lambda: resource_claim_request_dir("c", "gpu/a\0"),
        "request_name",
        "gpu/a\0",
        "must not contain a NUL character",
    ),
    (
        lambda: resource_claim_request_dir("c", "a/b/c"),
        "request_name",
        "a/b/c",
        "only one '/' (before the subrequest) is allowed",
    ),
    (
        lambda: resource_claim_request_dir("c", b"gpu"),  # type: ignore[arg-type]
        "request_name",
        b"gpu",
        "must be a str, not bytes",
    ),
    (
        lambda: resource_claim_request_dir("c", "g" * 254),
        "request_name",
        "g" * 254,
        "is 254 bytes long, at most 253 allowed",
    ),
    (lambda: metadata_file_name("a/b"), "driver", "a/b", "must not contain '/'"),
    (lambda: metadata_file_name(""), "driver", "", "must not be empty"),
    (
        lambda: read_claim_metadata("c", "gpu", driver="x\0"),
        "driver",
        "x\0",
        "must not contain a NUL character",
    ),
    (
        lambda: read_template_metadata("c", "a/b/c"),
        "request_name",
        "a/b/c",
        "only one '/' (before the subrequest) is allowed",
    ),
]


@pytest.mark.parametrize(("call", "argument", "value", "reason"), INVALID_NAMES)
def test_invalid_name_reasons(call: object, argument: str, value: object, reason: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        call()  # type: ignore[operator]
    error = info.value
    assert (error.argument, error.value, error.reason) == (argument, value, reason)
    assert error.path is None
    assert str(error) == f"invalid {argument} {value!r}: {reason}"


def test_253_bytes_pass_and_254_do_not() -> None:
    assert resource_claim_request_dir("c", "g" * 253).name == "g" * 253
    with pytest.raises(InvalidNameError) as info:
        resource_claim_request_dir("c", "g" * 254)
    assert info.value.reason == "is 254 bytes long, at most 253 allowed"
    with pytest.raises(InvalidNameError) as info:
        metadata_file_name("d" * 254)
    assert info.value.reason == "is 254 bytes long, at most 253 allowed"


def test_a_driver_file_name_fits_in_255_bytes() -> None:
    # A driver name of 253 bytes is a valid name, but its file name would not fit (NAME_MAX).
    assert metadata_file_name("d" * 241) == "d" * 241 + "-metadata.json"
    assert len(metadata_file_name("é" * 120 + "d").encode()) == 255
    for driver, size in (("d" * 242, 256), ("d" * 253, 267), ("é" * 121, 256)):
        with pytest.raises(InvalidNameError) as info:
            metadata_file_name(driver)
        assert (info.value.argument, info.value.value) == ("driver", driver)
        assert info.value.reason == (
            f"its file name {driver[:20]}...-metadata.json would be {size} bytes long, "
            "at most 255 allowed (241 bytes of driver name)"
        )


def test_a_host_directory_name_fits_in_255_bytes() -> None:
    from dra_metadata.writer import host_metadata_file_path  # noqa: PLC0415

    path = host_metadata_file_path("/p", "n" * 127, "c" * 127, "gpu/high-memory")
    assert path == Path("/p/dra-device-metadata") / f"{'n' * 127}_{'c' * 127}" / "gpu/metadata.json"
    with pytest.raises(InvalidNameError) as info:
        host_metadata_file_path("/p", "n" * 128, "c" * 127, "gpu")
    assert (info.value.argument, info.value.value) == ("claim_name", "c" * 127)
    assert info.value.reason == (
        "the directory name <namespace>_<claim_name> would be 256 bytes long, at most 255 allowed"
    )
