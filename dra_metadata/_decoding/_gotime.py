"""Go's time.Parse(time.RFC3339, ...), which Kubernetes uses for its timestamps.

Go tries a strict RFC 3339 parser first and falls back to its general layout parser, which is
more lenient; what either accepts is what the general parser accepts, so that is what this
module implements for the layout "2006-01-02T15:04:05Z07:00":

* a four-digit year (0000 to 9999), two-digit month, day, minute and second, and a one- or
  two-digit hour ("2006-01-02T3:04:05Z");
* after the seconds, a fraction with '.' or ',' and any number of digits (only the first nine
  count);
* "Z", or an offset "+hh:mm" / "-hh:mm" with hh up to 24 and mm up to 60;
* nothing else: no lower-case 't' or 'z', no leap second, no trailing text.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

_FIRST_DAY = datetime(1, 1, 1, tzinfo=timezone.utc)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class TimeFormatError(ValueError):
    """The text is not a time Go's RFC 3339 parser accepts (or Python cannot hold it)."""


def _is_digit(text: bytes, index: int) -> bool:
    return index < len(text) and 0x30 <= text[index] <= 0x39


def _two_digits(text: bytes, index: int, what: str) -> int:
    if not (_is_digit(text, index) and _is_digit(text, index + 1)):
        raise TimeFormatError(f"the {what} must be two digits")
    return (text[index] - 0x30) * 10 + text[index + 1] - 0x30


def _expect(text: bytes, index: int, char: bytes) -> None:
    if text[index : index + 1] != char:
        raise TimeFormatError(f"expected {char.decode()!r} at character {index + 1}")


def _days_before_year(year: int) -> int:
    """Days from 0001-01-01 to January 1st of ``year`` (negative for year 0)."""
    previous = year - 1
    return previous * 365 + previous // 4 - previous // 100 + previous // 400


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _date(text: bytes) -> tuple[int, int, int]:
    if len(text) < 4 or not all(_is_digit(text, index) for index in range(4)):
        raise TimeFormatError("the year must be four digits")
    _expect(text, 4, b"-")
    month = _two_digits(text, 5, "month")
    _expect(text, 7, b"-")
    day = _two_digits(text, 8, "day")
    _expect(text, 10, b"T")
    return int(text[:4]), month, day


def _clock(text: bytes, position: int) -> tuple[int, int, int, int, int]:
    """Hour (one or two digits), minute, second, nanoseconds, and where the zone starts."""
    if not _is_digit(text, position):
        raise TimeFormatError("the hour must be one or two digits")
    hour = text[position] - 0x30
    position += 1
    if _is_digit(text, position):
        hour = hour * 10 + text[position] - 0x30
        position += 1
    _expect(text, position, b":")
    minute = _two_digits(text, position + 1, "minute")
    _expect(text, position + 3, b":")
    second = _two_digits(text, position + 4, "second")
    position += 6
    nanoseconds = 0
    if text[position : position + 1] in {b".", b","} and _is_digit(text, position + 1):
        end = position + 1
        while _is_digit(text, end):
            end += 1
        digits = text[position + 1 : min(end, position + 10)]  # digits after the ninth are cut
        nanoseconds = int(digits) * 10 ** (9 - len(digits))
        position = end
    return hour, minute, second, nanoseconds, position


def _zone_offset(text: bytes, position: int) -> int:
    """The offset in seconds east of UTC of the zone at ``position``, which ends the text."""
    zone = text[position:]
    if zone == b"Z":
        return 0
    if len(zone) != 6 or zone[3:4] != b":":
        raise TimeFormatError('the time zone must be "Z" or an offset such as +01:00')
    hours = _two_digits(zone, 1, "offset hour")
    minutes = _two_digits(zone, 4, "offset minute")
    if zone[:1] not in {b"+", b"-"}:
        raise TimeFormatError("the offset must start with '+' or '-'")
    if hours > 24 or minutes > 60:  # Go allows 24 hours and 60 minutes
        raise TimeFormatError("time zone offset out of range")
    return (hours * 60 + minutes) * 60 * (-1 if zone[:1] == b"-" else 1)


def parse_rfc3339(value: str) -> datetime:
    """The instant ``value`` denotes, in UTC; raises TimeFormatError where Go's parser fails."""
    text = value.encode()  # a decoded JSON string: Go made any lone surrogate U+FFFD
    year, month, day = _date(text)
    hour, minute, second, nanoseconds, position = _clock(text, 11)
    offset = _zone_offset(text, position)
    for number, limit, what in ((month, 12, "month"), (hour, 23, "hour"), (minute, 59, "minute")):
        if number > limit or (what == "month" and number == 0):
            raise TimeFormatError(f"{what} out of range")
    if second > 59:
        raise TimeFormatError("second out of range")
    days_in_month = 29 if month == 2 and _is_leap(year) else _DAYS_IN_MONTH[month - 1]
    if not 1 <= day <= days_in_month:
        raise TimeFormatError("day out of range")
    days = _days_before_year(year) + sum(_DAYS_IN_MONTH[: month - 1]) + day - 1
    days += month > 2 and _is_leap(year)
    seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
    try:
        return _FIRST_DAY + timedelta(seconds=seconds, microseconds=nanoseconds // 1000)
    except OverflowError:
        raise TimeFormatError(
            "the time is outside the years 1 to 9999 that Python's datetime can hold"
        ) from None
