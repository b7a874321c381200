"""Go's JSON rules on both decoding paths, checked by their results and messages.

The decoder reads what writers write with orjson (the fast path) and anything else with an
exact parser of Go's rules. Only the public API is used: an object whose ``kind`` key is
spelled ``KIND`` (which Go finds case-insensitively) takes the exact path, the same object with
``kind`` the fast one, so each fact is checked on both where both can meet it.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_metadata import MetadataDecodeError, decode_stream

from helpers import V1ALPHA1

PATHS = ["fast", "exact"]
TRUNCATED_HINT = " (the stream is truncated: the file may be in the middle of being written)"


def known(body: str | bytes, path: str = "fast") -> bytes:
    """A v1alpha1 object with ``body`` after its type fields, read on ``path``."""
    kind = "kind" if path == "fast" else "KIND"
    head = f'{{"{kind}":"DeviceMetadata","apiVersion":"{V1ALPHA1}"'.encode()
    if isinstance(body, str):
        body = body.encode()
    return head + (b"," + body if body else b"") + b"}"


def field_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    assert info.value.api_version == V1ALPHA1
    assert info.value.object_index == 1
    assert info.value.truncated is False
    return info.value


def assert_field_error(data: bytes, field: str, problem: str) -> None:
    error = field_error(data)
    assert error.field == field
    assert str(error) == f"decode {V1ALPHA1}: object 1, field {field}: {problem}"


def syntax_error(data: bytes) -> MetadataDecodeError:
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    error = info.value
    assert (error.api_version, error.field, error.object_index) == (None, None, 1)
    return error


# Times: Go's time.Parse(time.RFC3339, ...).


def timestamp(text: str, path: str) -> datetime | None:
    data = known(f'"metadata":{{"creationTimestamp":"{text}"}}', path)
    return decode_stream(data).metadata.metadata.creation_timestamp


def utc(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=timezone.utc)  # type: ignore[misc]


ZONE = 'the time zone must be "Z" or an offset such as +01:00'
OUT_OF_PYTHON = "the time is outside the years 1 to 9999 that Python's datetime can hold"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("yesterday", "the year must be four digits"),
        ("200", "the year must be four digits"),
        ("208-01-02T03:04:05Z", "the year must be four digits"),
        ("2008", "expected '-' at character 5"),
        ("2008/01-02T03:04:05Z", "expected '-' at character 5"),
        ("2008-1-02T03:04:05Z", "the month must be two digits"),
        ("2008-0", "the month must be two digits"),
        ("2008-01/02T03:04:05Z", "expected '-' at character 8"),
        ("2008-01-2T03:04:05Z", "the day must be two digits"),
        ("2008-01-02t03:04:05Z", "expected 'T' at character 11"),
        ("2008-01-02 03:04:05Z", "expected 'T' at character 11"),
        ("2008-01-02", "expected 'T' at character 11"),
        ("2008-01-02TZ", "the hour must be one or two digits"),
        ("2008-01-02T", "the hour must be one or two digits"),
        ("2008-01-02T003:04:05Z", "expected ':' at character 14"),
        ("2008-01-02T3-04:05Z", "expected ':' at character 13"),
        ("2008-01-02T03:4:05Z", "the minute must be two digits"),
        ("2008-01-02T03:04-05Z", "expected ':' at character 17"),
        ("2008-01-02T3:04-05Z", "expected ':' at character 16"),
        ("2008-01-02T03:04:5Z", "the second must be two digits"),
        ("2008-01-02T03:04:0", "the second must be two digits"),
        ("2008-01-02T03:04:05", ZONE),
        ("2008-01-02T03:04:05z", ZONE),
        ("2008-01-02T03:04:05.Z", ZONE),
        ("2008-01-02T03:04:05Z ", ZONE),
        ("2008-01-02T03:04:05+0100", ZONE),
        ("2008-01-02T03:04:05+01:000", ZONE),
        ("2008-01-02T03:04:05+01-00", ZONE),
        ("2008-01-02T03:04:05+x1:00", "the offset hour must be two digits"),
        ("2008-01-02T03:04:05+1x:00", "the offset hour must be two digits"),
        ("2008-01-02T03:04:05+01:x0", "the offset minute must be two digits"),
        ("2008-01-02T03:04:05+01:0x", "the offset minute must be two digits"),
        ("2008-01-02T03:04:05 01:00", "the offset must start with '+' or '-'"),
        ("2008-01-02T03:04:05+25:00", "time zone offset out of range"),
        ("2008-01-02T03:04:05-00:61", "time zone offset out of range"),
        ("2008-00-02T03:04:05Z", "month out of range"),
        ("2008-13-02T03:04:05Z", "month out of range"),
        ("2008-01-02T24:04:05Z", "hour out of range"),
        ("2008-01-02T23:60:05Z", "minute out of range"),
        ("2008-01-02T23:59:60Z", "second out of range"),
        ("2008-01-00T03:04:05Z", "day out of range"),
        ("2008-01-32T03:04:05Z", "day out of range"),
        ("2008-04-31T03:04:05Z", "day out of range"),
        ("2008-02-30T03:04:05Z", "day out of range"),
        ("2007-02-29T03:04:05Z", "day out of range"),
        ("1900-02-29T03:04:05Z", "day out of range"),
        ("0000-01-01T00:00:00Z", OUT_OF_PYTHON),
        ("0001-01-01T00:00:00+01:00", OUT_OF_PYTHON),
        ("9999-12-31T23:59:59-01:00", OUT_OF_PYTHON),
        ("9999-12-31T23:00:00-24:60", OUT_OF_PYTHON),
    ],
)
def test_a_time_go_refuses_says_why(text: str, reason: str, path: str) -> None:
    data = known(f'"metadata":{{"creationTimestamp":"{text}"}}', path)
    problem = f"not an RFC 3339 time ({reason}): {text!r}"
    assert_field_error(data, "metadata.creationTimestamp", problem)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2000-02-29T00:00:00Z", utc(2000, 2, 29)),
        ("2004-02-29T23:59:59Z", utc(2004, 2, 29, 23, 59, 59)),
        ("2008-03-01T00:00:00Z", utc(2008, 3, 1)),
        ("2007-03-01T00:00:00Z", utc(2007, 3, 1)),
        ("1900-03-01T00:00:00Z", utc(1900, 3, 1)),
        ("2008-12-31T23:59:59Z", utc(2008, 12, 31, 23, 59, 59)),
        ("2008-01-02T3:04:05Z", utc(2008, 1, 2, 3, 4, 5)),
        ("2008-01-02T03:04:05,5Z", utc(2008, 1, 2, 3, 4, 5, 500000)),
        ("2008-01-02T03:04:05.0000019Z", utc(2008, 1, 2, 3, 4, 5, 1)),
        ("2008-01-02T03:04:05.123456789999Z", utc(2008, 1, 2, 3, 4, 5, 123456)),
        ("2008-01-02T03:04:05.9+00:00", utc(2008, 1, 2, 3, 4, 5, 900000)),
        ("2008-01-02T03:04:05+24:00", utc(2008, 1, 1, 3, 4, 5)),
        ("2008-01-02T03:04:05-24:60", utc(2008, 1, 3, 4, 4, 5)),
        ("2008-01-02T03:04:05+00:60", utc(2008, 1, 2, 2, 4, 5)),
        ("0001-01-01T00:00:01Z", utc(1, 1, 1, 0, 0, 1)),
        ("0001-01-01T00:00:00Z", None),  # Go's zero time: unset
        ("0000-12-31T23:00:00-01:00", None),  # the same instant
        ("9999-12-31T23:59:59.999999999Z", utc(9999, 12, 31, 23, 59, 59, 999999)),
        ("9999-12-31T23:59:59+01:00", utc(9999, 12, 31, 22, 59, 59)),
    ],
)
def test_a_time_go_accepts(text: str, expected: datetime | None, path: str) -> None:
    assert timestamp(text, path) == expected


FIRST_DAYS = datetime(1, 1, 3)  # noqa: DTZ001 - hypothesis draws naive datetimes, read as UTC
LAST_DAYS = datetime(9999, 12, 29)  # noqa: DTZ001


@settings(max_examples=150, deadline=None)
@given(
    instant=st.datetimes(min_value=FIRST_DAYS, max_value=LAST_DAYS),
    west=st.booleans(),
    hours=st.integers(min_value=0, max_value=24),
    minutes=st.integers(min_value=0, max_value=60),  # Go takes up to 24:60
    comma=st.booleans(),
)
def test_any_time_is_the_instant_it_names(
    instant: datetime, west: bool, hours: int, minutes: int, comma: bool
) -> None:
    zone = f"{'-' if west else '+'}{hours:02d}:{minutes:02d}"
    fraction = f"{',' if comma else '.'}{instant.microsecond:06d}" if instant.microsecond else ""
    text = f"{instant.year:04d}{instant.strftime('-%m-%dT%H:%M:%S')}{fraction}{zone}"
    offset = timedelta(hours=hours, minutes=minutes) * (-1 if west else 1)
    expected = instant.replace(tzinfo=timezone.utc) - offset
    assert timestamp(text, "fast") == expected


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("5", "the number 5"),
        ("true", "true"),
        ("[]", "an array"),
        ("{}", "an object"),
    ],
)
def test_a_time_of_another_type(value: str, shown: str, path: str) -> None:
    data = known(f'"metadata":{{"managedFields":[{{"time":{value}}}]}}', path)
    problem = f"expected an RFC 3339 time string, got {shown}"
    assert_field_error(data, "metadata.managedFields[0].time", problem)


# Syntax: Go's scanner messages and byte offsets.


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"kind": x}', "invalid character 'x' looking for beginning of value at byte 9"),
        (b'  \n{"a":x}', "invalid character 'x' looking for beginning of value at byte 8"),
        (b'{"a" 1}', "invalid character '1' after object key at byte 5"),
        (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair at byte 7"),
        (b'{"a":[1 2]}', "invalid character '2' after array element at byte 8"),
        (b"{1}", "invalid character '1' looking for beginning of object key string at byte 1"),
        (b'{"a":1,}', "invalid character '}' looking for beginning of object key string at byte 7"),
        (b'{"a":[1,]}', "invalid character ']' looking for beginning of value at byte 8"),
        (b'{"a":]}', "invalid character ']' looking for beginning of value at byte 5"),
        (b'{"a":\n\t\r}', "invalid character '}' looking for beginning of value at byte 8"),
        (b'{"a":"x\x01"}', "invalid character '\\x01' in string literal at byte 7"),
        (b'{"a":"x\\n\x1f"}', "invalid character '\\x1f' in string literal at byte 9"),
        (b'{"a":"x\n"}', "invalid character '\\n' in string literal at byte 7"),
        (b'{"a":"x\r"}', "invalid character '\\r' in string literal at byte 7"),
        (b'{"a":"\tx"}', "invalid character '\\t' in string literal at byte 6"),
        (b'{"a":"\\q"}', "invalid character 'q' in string escape code at byte 7"),
        (
            b'{"a":"\\u12g4"}',
            "invalid character 'g' in \\u hexadecimal character escape at byte 10",
        ),
        (b'{"a":"\\u1234\\x"}', "invalid character 'x' in string escape code at byte 13"),
        (
            b'{"a":"\\ug123"}',
            "invalid character 'g' in \\u hexadecimal character escape at byte 8",
        ),
        (
            b'{"a":"\\u12X4"}',
            "invalid character 'X' in \\u hexadecimal character escape at byte 10",
        ),
        (b'{"a":"\\uabcd\\uABCD\\q"}', "invalid character 'q' in string escape code at byte 19"),
        (b'{"a":"\\X"}', "invalid character 'X' in string escape code at byte 7"),
        (b'{"a":"x y\x01"}', "invalid character '\\x01' in string literal at byte 9"),
        (b'{"a":\n"x\x01"}', "invalid character '\\x01' in string literal at byte 8"),
        (b'{"a":-x}', "invalid character 'x' in numeric literal at byte 6"),
        (b'{"a":-}', "invalid character '}' in numeric literal at byte 6"),
        (b'{"a":-:}', "invalid character ':' in numeric literal at byte 6"),
        (b'{"a":-9.}', "invalid character '}' after decimal point in numeric literal at byte 8"),
        (b'{"a":109.x}', "invalid character 'x' after decimal point in numeric literal at byte 9"),
        (b'{"a":1.:}', "invalid character ':' after decimal point in numeric literal at byte 7"),
        (b'{"a":1.x}', "invalid character 'x' after decimal point in numeric literal at byte 7"),
        (b'{"a":12.}', "invalid character '}' after decimal point in numeric literal at byte 8"),
        (b'{"a":1ex}', "invalid character 'x' in exponent of numeric literal at byte 7"),
        (b'{"a":1e+}', "invalid character '}' in exponent of numeric literal at byte 8"),
        (b'{"a":1E-x}', "invalid character 'x' in exponent of numeric literal at byte 8"),
        (b'{"a":1.5e}', "invalid character '}' in exponent of numeric literal at byte 9"),
        (b'{"a":-0.5E}', "invalid character '}' in exponent of numeric literal at byte 10"),
        (b'{"a":1.0e}', "invalid character '}' in exponent of numeric literal at byte 9"),
        (b'{"a":1.9e}', "invalid character '}' in exponent of numeric literal at byte 9"),
        (b'{"a":01}', "invalid character '1' after object key:value pair at byte 6"),
        (b'{"a":-01}', "invalid character '1' after object key:value pair at byte 7"),
        (b'{"a":1.5.3}', "invalid character '.' after object key:value pair at byte 8"),
        (b'{"a":1e5e}', "invalid character 'e' after object key:value pair at byte 8"),
        (b'{"a":1E5.0}', "invalid character '.' after object key:value pair at byte 8"),
        (b'{"a":[1.5E3.0]}', "invalid character '.' after array element at byte 11"),
        (b'{"a":tru}', "invalid character '}' in literal true (expecting 'e') at byte 8"),
        (b'{"a":txue}', "invalid character 'x' in literal true (expecting 'r') at byte 6"),
        (b'{"a":fals e}', "invalid character ' ' in literal false (expecting 'e') at byte 9"),
        (b'{"a":fxlse}', "invalid character 'x' in literal false (expecting 'a') at byte 6"),
        (b'{"a":nulL}', "invalid character 'L' in literal null (expecting 'l') at byte 8"),
        (b'{"a":[nUll]}', "invalid character 'U' in literal null (expecting 'u') at byte 7"),
        (
            b"{'a':1}",
            "invalid character '\\'' looking for beginning of object key string at byte 1",
        ),
        (b'{"a":"b"\'}', "invalid character '\\'' after object key:value pair at byte 8"),
        (b'{"a":\\}', "invalid character '\\\\' looking for beginning of value at byte 5"),
        (b'{"a":\x00}', "invalid character '\\x00' looking for beginning of value at byte 5"),
        (b'{"a":\x7f}', "invalid character '\\x7f' looking for beginning of value at byte 5"),
        (b'{"a":\x80}', "invalid character '\\u0080' looking for beginning of value at byte 5"),
        (b'{"a":\x85}', "invalid character '\\u0085' looking for beginning of value at byte 5"),
        (b'{"a":#}', "invalid character '#' looking for beginning of value at byte 5"),
        (b'{"a":X}', "invalid character 'X' looking for beginning of value at byte 5"),
        (b'{"a":\xff}', "invalid character '\xff' looking for beginning of value at byte 5"),
        (b'{"a":\x07}', "invalid character '\\a' looking for beginning of value at byte 5"),
        (b'{"a":\x08}', "invalid character '\\b' looking for beginning of value at byte 5"),
        (b'{"a":\x0b}', "invalid character '\\v' looking for beginning of value at byte 5"),
        (b'{"a":\x0c}', "invalid character '\\f' looking for beginning of value at byte 5"),
        (b'{"a":[1,\n]}', "invalid character ']' looking for beginning of value at byte 9"),
        (
            b'{"a":{"b":[{"c":nul}]}}',
            "invalid character '}' in literal null (expecting 'l') at byte 19",
        ),
        (b'{"a":{"b" "c"}}', "invalid character '\"' after object key at byte 10"),
        (b'{"a":["b":1]}', "invalid character ':' after array element at byte 9"),
        (b'{"a":{"b":1]}', "invalid character ']' after object key:value pair at byte 11"),
        (b'{"a":[1}', "invalid character '}' after array element at byte 7"),
        (b'{"a"::1}', "invalid character ':' looking for beginning of value at byte 5"),
        (b"{,}", "invalid character ',' looking for beginning of object key string at byte 1"),
        (b'{"a":[,]}', "invalid character ',' looking for beginning of value at byte 6"),
        (b'{"a",1}', "invalid character ',' after object key at byte 4"),
        (b'{"a":"b":1}', "invalid character ':' after object key:value pair at byte 8"),
    ],
)
def test_a_syntax_error_in_go_s_words(data: bytes, message: str) -> None:
    error = syntax_error(data)
    assert error.truncated is False
    assert str(error) == f"read metadata object from stream: object 1: {message}"


@pytest.mark.parametrize(
    "data",
    [
        b"{",
        b'{"a"',
        b'{"a":',
        b'{"a":"abc',
        b'{"a":"\\',
        b'{"a":"\\u12',
        b'{"a":1',
        b'{"a":-',
        b'{"a":1.',
        b'{"a":1e',
        b'{"a":1e-',
        b'{"a":nul',
        b'{"a":t',
        b'{"a":[',
        b'{"a":[1',
        b'{"a":[1,',
        b'{"a":{"b":[{"c":1}',
    ],
)
def test_data_that_ends_inside_the_object_is_truncated(data: bytes) -> None:
    error = syntax_error(data)
    assert error.truncated is True
    assert str(error) == (
        "read metadata object from stream: object 1: unexpected end of JSON input "
        f"at byte {len(data)}{TRUNCATED_HINT}"
    )


def test_a_byte_order_mark_is_named() -> None:
    error = syntax_error(b"\xef\xbb\xbf{}")
    assert str(error) == (
        "read metadata object from stream: object 1: invalid character '\xef' looking for "
        "beginning of value at byte 0 (a UTF-8 byte order mark, which JSON does not allow)"
    )


def test_nesting_deeper_than_10000_levels() -> None:
    data = b'{"a":' + b"[" * 10000
    error = syntax_error(data)
    assert str(error) == (
        "read metadata object from stream: object 1: invalid character '[' exceeded max depth "
        "at byte 10004"
    )
    assert error.truncated is False


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        (b"7", "the number 7"),
        (b'"s"', "a string ('s')"),
        (b"[1]", "an array"),
        (b"null", "null"),
        (b"true", "true"),
        (b"false", "false"),
        (b'"s\xff"', "a string ('s\ufffd')"),  # exact path: orjson refuses the byte
        (b"[1e400]", "an array"),
        (b"1" * 400, "the number " + "1" * 400),
    ],
)
def test_a_value_that_is_no_object(data: bytes, shown: str) -> None:
    error = syntax_error(data)
    assert str(error) == f"decode metadata object: object 1 is {shown}, not a JSON object"


# Values as the exact parser reads them, seen through fieldsV1 (kept whole) and strings.


def fields_v1(value: str) -> Any:
    data = known(f'"metadata":{{"managedFields":[{{"fieldsV1":{value}}}]}}', "exact")
    (entry,) = decode_stream(data).metadata.metadata.managed_fields
    return entry.fields_v1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"a":1,"b":[true,false,null],"c":{}}', {"a": 1, "b": [True, False, None], "c": {}}),
        ('{"b":1,"a":2,"b":3}', {"b": 3, "a": 2}),  # a duplicate keeps its place, the last value
        ("[1.5, -0, 1e2, -2E-2, 0.0]", [1.5, 0, 100.0, -0.02, 0.0]),
        (f"[{10**30}, {-(2**70)}]", [10**30, -(2**70)]),
        ('[[[]],{"a":[{"b":{}}]}]', [[[]], {"a": [{"b": {}}]}]),
        ('"text"', "text"),
        ("7", 7),
        ("-7.25", -7.25),
        ("true", True),
        (" [ 1 , 2 ] ", [1, 2]),
    ],
)
def test_values_kept_whole(value: str, expected: Any) -> None:
    result = fields_v1(value)
    assert result == expected
    assert [type(item) for item in _leaves(result)] == [type(item) for item in _leaves(expected)]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("escaped", "text"),
    [
        ('\\"\\\\\\/\\b\\f\\n\\r\\t', '"\\/\b\f\n\r\t'),
        ("\\u00e9\\u00E9", "éé"),
        ("\\uD83D\\uDE00", "\U0001f600"),
        ("\\ud83d\\ude00x", "\U0001f600x"),
        ("\\ud800", "\ufffd"),
        ("\\udfff\\ud800", "\ufffd\ufffd"),
        ("\\ud800\\u0041", "\ufffdA"),
        ("\\uDBFF\\uDFFF", "\U0010ffff"),
        ("\\ud7ff\\ue000\\uE000", "\ud7ff\ue000\ue000"),
        ("a\\u0000b", "a\x00b"),
        ("\\\\u0041", "\\u0041"),
    ],
)
def test_string_escapes(escaped: str, text: str, path: str) -> None:
    data = known(f'"metadata":{{"name":"{escaped}"}}', path)
    assert decode_stream(data).metadata.name == text


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"a\xffb", "a\ufffdb"),
        (b"\xe2\x82", "\ufffd\ufffd"),
        (b"\xc3\xa9\xff\\n", "\xe9\ufffd\n"),
        (b"\\u00e9\xfe", "\xe9\ufffd"),
    ],
)
def test_invalid_utf8_in_strings(raw: bytes, text: str) -> None:
    data = known(b'"metadata":{"name":"' + raw + b'"}')
    assert decode_stream(data).metadata.name == text


# Go's replacements in a run of small objects, which is read in one go after eight skipped ones.


def test_replacements_in_a_run_of_small_objects_read_at_once() -> None:
    skipped = [b'{"kind":"K","apiVersion":"x/v1"}'] * 8
    run = [
        b'{"kind":"K","apiVersion":"a\xff/v9"}',  # invalid UTF-8
        b'{"kind":"K","apiVersion":"b\\ud800/v9"}',  # an escaped lone surrogate
        b'{"kind":"K","apiVersion":"c\\/v9"}',  # other escapes stay as they are
        b'{"kind":"K","apiVersion":"d\\ud83d\\ude00/v9"}',
    ]
    last = b'{"kind":"DeviceMetadata","apiVersion":"%s","podClaimName":"p"}' % V1ALPHA1.encode()
    result = decode_stream(b"\n".join([*skipped, *run, last]))
    assert result.skipped_versions == (
        *["x/v1"] * 8,
        "a\ufffd/v9",
        "b\ufffd/v9",
        "c/v9",
        "d\U0001f600/v9",
    )
    assert (result.api_version, result.metadata.pod_claim_name) == (V1ALPHA1, "p")
