"""Data that is not JSON at all: Go's syntax error, then that it is not JSON and how it begins.

The preview is the first 24 characters of the first value, escaped as Python writes a string
(bytes that are not UTF-8 as ``\\xff``), with ``...`` when more follows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import dra_metadata
from dra_metadata import MetadataDecodeError

PREFIX = "read metadata object from stream: object 1: "


def _message(data: bytes) -> str:
    with pytest.raises(MetadataDecodeError) as caught:
        dra_metadata.decode_stream(data)
    return str(caught.value)


def test_a_text_keeps_go_s_words_and_says_it_is_not_json() -> None:
    assert _message(b"not json at all") == (
        f"{PREFIX}invalid character 'o' in literal null (expecting 'u') at byte 1 "
        "(the data is not JSON: it begins with 'not json at all')"
    )


def test_a_file_is_named_and_called_a_file(tmp_path: Path) -> None:
    path = tmp_path / "gpu.example.com-metadata.json"
    path.write_bytes(b"not json at all\n")
    with pytest.raises(MetadataDecodeError) as caught:
        dra_metadata.read_metadata_file(path)
    assert caught.value.path == path
    assert caught.value.object_index == 1
    assert not caught.value.truncated
    assert str(caught.value) == (
        f"{path}: {PREFIX}invalid character 'o' in literal null (expecting 'u') at byte 1 "
        "(the file is not JSON: it begins with 'not json at all\\n')"
    )


def test_the_preview_starts_where_the_value_does() -> None:
    assert _message(b"  \n kind: DeviceMetadata\n") == (
        f"{PREFIX}invalid character 'k' looking for beginning of value at byte 4 "
        "(the data is not JSON: it begins with 'kind: DeviceMetadata\\n')"
    )


def test_the_preview_escapes_what_a_terminal_would_act_on() -> None:
    data = b"\x00\x1b[2J\x80\xff\\'\"\t\xc3\xa9\xe2\x80\xae"
    assert _message(data) == (
        f"{PREFIX}invalid character '\\x00' looking for beginning of value at byte 0 "
        "(the data is not JSON: it begins with '\\x00\\x1b[2J\\x80\\xff\\\\'\"\\t\u00e9\\u202e')"
    )


@pytest.mark.parametrize(
    ("data", "preview"),
    [
        (b"x" * 24, "'" + "x" * 24 + "'"),
        (b"x" * 25, "'" + "x" * 24 + "'..."),
        ("\u00e9".encode() * 30, "'" + "\u00e9" * 24 + "'..."),
        ("\U0001f600".encode() * 24, "'" + "\U0001f600" * 24 + "'"),
        ("\U0001f600".encode() * 25, "'" + "\U0001f600" * 24 + "'..."),
    ],
)
def test_the_preview_is_24_characters_and_says_when_more_follows(data: bytes, preview: str) -> None:
    assert _message(data).endswith(f" (the data is not JSON: it begins with {preview})")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"kind": x}', "invalid character 'x' looking for beginning of value at byte 9"),
        (b"[1, x]", "invalid character 'x' looking for beginning of value at byte 4"),
        (
            b"nul",
            (
                "unexpected end of JSON input at byte 3 (the stream is truncated: the file may be "
                "in the middle of being written)"
            ),
        ),
        (
            b"\xef\xbb\xbf{}",
            (
                "invalid character '\u00ef' looking for beginning of value at byte 0 (a UTF-8 byte "
                "order mark, which JSON does not allow)"
            ),
        ),
    ],
)
def test_json_that_is_broken_is_not_called_not_json(data: bytes, message: str) -> None:
    assert _message(data) == PREFIX + message


def test_only_the_first_value_can_make_the_data_not_json() -> None:
    skipped = b'{"kind": "DeviceMetadata", "apiVersion": "metadata.resource.k8s.io/v9"}\n'
    assert _message(skipped + b"nope") == (
        "read metadata object from stream: object 2: invalid character 'o' in literal null "
        f"(expecting 'u') at byte {len(skipped) + 1}"
    )
