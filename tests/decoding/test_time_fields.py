"""Time fields as Go reads them: offsets, fractions, the zero time, impossible dates, UTC.

Only the public API is used, so that rewrites of the decoder keep these tests valid.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest

from dra_metadata import (
    MetadataDecodeError,
    decode_stream,
)

from helpers import V1ALPHA1, stream, wire_object


def decode_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    return info.value


def creation_timestamp(value: str) -> datetime | None:
    obj = wire_object(metadata={"name": "x", "creationTimestamp": value})
    return decode_stream(stream(obj)).metadata.metadata.creation_timestamp


def utc(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=timezone.utc)  # type: ignore[misc]


class TestTimeFields:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("2008-01-01T01:01:01-07:30", utc(2008, 1, 1, 8, 31, 1)),
            ("2008-12-31T23:30:00-01:00", utc(2009, 1, 1, 0, 30, 0)),
            ("2008-01-01T00:30:00+01:00", utc(2007, 12, 31, 23, 30, 0)),
            ("2008-01-01T01:01:01+00:00", utc(2008, 1, 1, 1, 1, 1)),
            ("2008-01-01T01:01:01-00:00", utc(2008, 1, 1, 1, 1, 1)),
        ],
    )
    def test_utc_offsets(self, value: str, expected: datetime) -> None:
        parsed = creation_timestamp(value)
        assert parsed == expected
        assert parsed is not None
        assert parsed.utcoffset() is not None
        assert parsed.utcoffset().total_seconds() == 0  # type: ignore[union-attr]

    @pytest.mark.parametrize(
        ("fraction", "microseconds"),
        [
            ("1", 100000),
            ("12", 120000),
            ("123", 123000),
            ("1234", 123400),
            ("12345", 123450),
            ("123456", 123456),
            ("1234567", 123456),
            ("12345678", 123456),
            ("05", 50000),
            ("000001", 1),
            ("0", 0),
        ],
    )
    def test_fractions(self, fraction: str, microseconds: int) -> None:
        parsed = creation_timestamp(f"2008-01-01T01:01:01.{fraction}Z")
        assert parsed == utc(2008, 1, 1, 1, 1, 1, microseconds)

    def test_fractions_are_truncated_not_rounded(self) -> None:
        # Rounding .9999999 would carry into the next second, day and year.
        assert creation_timestamp("2008-12-31T23:59:59.9999999Z") == utc(
            2008, 12, 31, 23, 59, 59, 999999
        )

    def test_a_fraction_with_an_offset(self) -> None:
        assert creation_timestamp("2008-01-01T01:01:01.5-02:00") == utc(2008, 1, 1, 3, 1, 1, 500000)

    @pytest.mark.parametrize(
        "value",
        ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z", "0001-01-01T01:00:00+01:00"],
    )
    def test_go_zero_time_is_unset(self, value: str) -> None:
        meta = {
            "name": "x",
            "creationTimestamp": value,
            "deletionTimestamp": value,
            "managedFields": [{"manager": "m", "time": value}],
        }
        decoded = decode_stream(stream(wire_object(metadata=meta))).metadata.metadata
        assert decoded.creation_timestamp is None
        assert decoded.deletion_timestamp is None
        assert decoded.managed_fields[0].time is None
        assert decoded.managed_fields[0].manager == "m"

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("0001-01-01T00:00:01Z", utc(1, 1, 1, 0, 0, 1)),
            ("0001-01-01T00:00:00.000001Z", utc(1, 1, 1, 0, 0, 0, 1)),
            ("0001-01-02T00:00:00Z", utc(1, 1, 2)),
        ],
    )
    def test_just_after_the_zero_time_is_a_time(self, value: str, expected: datetime) -> None:
        assert creation_timestamp(value) == expected

    @pytest.mark.parametrize(
        "value", ["2008-01-01T01:01:01.Z", "2008-01-01T01:01:01+0100", "2008-02-30T01:01:01Z"]
    )
    def test_not_a_time(self, value: str) -> None:
        obj = wire_object(metadata={"name": "x", "managedFields": [{"time": value}]})
        error = decode_error(stream(obj))
        assert error.field == "metadata.managedFields[0].time"
        assert error.api_version == V1ALPHA1
        assert error.object_index == 1
        assert repr(value) in str(error)


def edited(edit: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    """The upstream test object, changed in place by ``edit``."""
    obj = wire_object()
    edit(obj)
    return obj


def meta_field(**fields: object) -> Callable[[dict[str, Any]], object]:
    return lambda obj: obj.update(metadata={"name": "n", **fields})


def test_an_impossible_date_says_why() -> None:
    error = decode_error(stream(edited(meta_field(creationTimestamp="2008-02-30T01:01:01Z"))))
    assert error.field == "metadata.creationTimestamp"
    assert str(error) == (
        f"decode {V1ALPHA1}: object 1, field metadata.creationTimestamp: "
        "not an RFC 3339 time (day out of range): '2008-02-30T01:01:01Z'"
    )


def test_times_are_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        parsed = creation_timestamp("2008-01-01T01:01:01+02:00")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert parsed == utc(2007, 12, 31, 23, 1, 1)
    assert parsed is not None
    assert parsed.tzinfo is timezone.utc
