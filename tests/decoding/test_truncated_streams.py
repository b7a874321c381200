"""A stream cut inside a UTF-8 character is truncated, with the hint; other bad bytes are not.

Only the public API is used, so that rewrites of the decoder keep these tests valid.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_metadata import (
    MetadataDecodeError,
    decode_stream,
    read_metadata_file,
)

from helpers import V1ALPHA1, stream, wire_object

TRUNCATED_HINT = "(the stream is truncated: the file may be in the middle of being written)"


def decode_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    return info.value


def cut(data: bytes, character: str, keep: int) -> tuple[bytes, int]:
    """``data`` cut after ``keep`` bytes of the first ``character``; and where it starts."""
    start = data.index(character.encode())
    return data[: start + keep], start


class TestStreamCutInsideACharacter:
    @pytest.mark.parametrize(
        ("character", "keep"), [("ü", 1), ("✓", 1), ("✓", 2), ("🚀", 1), ("🚀", 3)]
    )
    def test_is_truncated_with_the_hint(self, character: str, keep: int) -> None:
        # The bytes of the cut character are a string's content, which Go takes whatever they
        # are: the stream ends inside the string, at its last byte (Go's offset).
        data, _ = cut(stream(wire_object(podClaimName=f"gr{character}ße")), character, keep)
        error = decode_error(data)
        assert error.truncated is True
        assert error.object_index == 1
        assert error.api_version is None
        assert error.field is None
        assert str(error) == (
            "read metadata object from stream: object 1: unexpected end of JSON input "
            f"at byte {len(data)} {TRUNCATED_HINT}"
        )

    def test_in_a_later_object(self) -> None:
        unknown = {"apiVersion": "example.com/v1", "kind": "Ünknown"}
        data, _ = cut(stream(unknown, wire_object(podClaimName="grüße")), "ü", 1)
        error = decode_error(data)
        assert error.truncated is True
        assert error.object_index == 2
        assert str(error) == (
            "read metadata object from stream: object 2: unexpected end of JSON input "
            f"at byte {len(data)} {TRUNCATED_HINT}"
        )

    def test_cut_just_after_a_character(self) -> None:
        data, _ = cut(stream(wire_object(podClaimName="grüße")), "ü", 2)
        error = decode_error(data)
        assert error.truncated is True
        assert f" at byte {len(data)} " in str(error)
        assert str(error).endswith(TRUNCATED_HINT)

    def test_an_invalid_byte_that_is_not_at_the_end_is_replaced(self) -> None:
        # Inside a string, each byte that is not part of valid UTF-8 becomes U+FFFD (spec §3.3).
        whole = stream(wire_object(podClaimName="grüße"))
        data, _ = cut(whole, "ü", 1)
        result = decode_stream(data + b"x" + whole[len(data) + 1 :])
        assert result.metadata.pod_claim_name == "gr\ufffdxße"  # ü (c3 bc) with x for bc
        assert result.api_version == V1ALPHA1

    @pytest.mark.parametrize(
        ("data", "offset"),
        [(b'{"kind": x}', 9), (b'{"kind": "DeviceMetadata" "apiVersion"}  ', 26)],
    )
    def test_a_syntax_error_is_not_truncation(self, data: bytes, offset: int) -> None:
        error = decode_error(data)
        assert error.truncated is False
        assert error.object_index == 1
        message = str(error)
        assert message.startswith("read metadata object from stream: object 1: ")
        assert message.endswith(f" at byte {offset}")

    def test_a_file_cut_inside_a_character(self, tmp_path: Path) -> None:
        data, _ = cut(stream(wire_object(podClaimName="grüße")), "ü", 1)
        path = tmp_path / "a-metadata.json"
        path.write_bytes(data)
        with pytest.raises(MetadataDecodeError) as info:
            read_metadata_file(path)
        assert info.value.truncated is True
        assert info.value.path == path
        assert str(info.value).startswith(f"{path}: read metadata object from stream: object 1:")
        assert str(info.value).endswith(TRUNCATED_HINT)
