"""Version: the value of a ``version`` attribute, a str ordered as a semantic version.

Drivers publish versions (``driverVersion``, firmware, CUDA runtime) as semantic versions
(semver 2.0.0), which the API server checks in ResourceSlices. Compared as strings they sort
wrongly (``"1.10.0" < "1.9.0"``); a Version compares by semantic-version precedence and stays
a str for everything else (printing, JSON, equality with a plain string).
"""

from __future__ import annotations

from functools import lru_cache

_IDENTIFIER = r"(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
SEMVER_PATTERN = (
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    rf"(?:-({_IDENTIFIER}(?:\.{_IDENTIFIER})*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
"""Semver 2.0.0 (the pattern the API server uses), groups: major, minor, patch, pre-release,
build metadata. `semver_groups` spells it out (compiling it costs more than a read's whole
decode); a test holds the two to the same answers."""

_DIGITS = frozenset("0123456789")
_IDENTIFIER_CHARACTERS = _DIGITS | frozenset(
    "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def _is_number(text: str) -> bool:
    """``0|[1-9][0-9]*``."""
    return text[:1] in _DIGITS and _DIGITS.issuperset(text) and (text == "0" or text[0] != "0")


def _are_identifiers(text: str, *, numbers_without_zeros: bool) -> bool:
    """Dot-separated non-empty identifiers of ``[0-9a-zA-Z-]``; with ``numbers_without_zeros``
    (a pre-release), one of digits alone has no leading zero."""
    for identifier in text.split("."):
        if not identifier or not _IDENTIFIER_CHARACTERS.issuperset(identifier):
            return False
        if numbers_without_zeros and _DIGITS.issuperset(identifier) and not _is_number(identifier):
            return False
    return True


def semver_groups(text: str) -> tuple[str, str, str, str | None, str | None] | None:
    """What ``re.fullmatch(SEMVER_PATTERN, text).groups()`` gives, or None where it would not
    match: major, minor, patch, pre-release and build metadata."""
    rest, plus, build = text.partition("+")
    if plus and not _are_identifiers(build, numbers_without_zeros=False):
        return None
    core, minus, prerelease = rest.partition("-")  # the core holds digits and dots only
    if minus and not _are_identifiers(prerelease, numbers_without_zeros=True):
        return None
    numbers = core.split(".")
    if len(numbers) != 3 or not all(map(_is_number, numbers)):
        return None
    major, minor, patch = numbers
    return major, minor, patch, prerelease if minus else None, build if plus else None


_PrecedenceKey = tuple[int, int, int, int, tuple[tuple[int, int, str], ...], str]


class _Parts:
    """The parts of a semantic version, and the key that orders versions by precedence."""

    __slots__ = ("build", "key", "major", "minor", "patch", "prerelease")

    def __init__(
        self,
        major: int,
        minor: int,
        patch: int,
        prerelease: str | None,
        build: str | None,
        key: _PrecedenceKey,
    ) -> None:
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
        self.build = build
        self.key = key


@lru_cache(maxsize=4096)
def _parse(text: str) -> _Parts | None:
    """The parts of a semantic version, or None when ``text`` is not one."""
    groups = semver_groups(text)
    if groups is None:
        return None
    major, minor, patch, prerelease, build = groups
    identifiers = () if prerelease is None else tuple(map(_identifier_key, prerelease.split(".")))
    # A release (1) ranks above each of its pre-releases (0). The text of the build metadata
    # comes last: it orders versions of equal precedence, which differ as strings.
    key = (int(major), int(minor), int(patch), int(prerelease is None), identifiers, build or "")
    return _Parts(int(major), int(minor), int(patch), prerelease, build, key)


def _identifier_key(identifier: str) -> tuple[int, int, str]:
    """Numeric identifiers rank below alphanumeric ones and compare as numbers (§11.4)."""
    if identifier.isdigit():
        return (0, int(identifier), "")
    return (1, 0, identifier)


class Version(str):
    """A semantic version (semver 2.0.0), as ``version`` attributes hold: a ``str`` that
    orders by version precedence.

    ``device.attribute("driverVersion")`` returns one. It is a str in every other way: it
    prints, formats and is written to JSON as its text, and equality and hashing are those of
    the string (``Version("580.65.6") == "580.65.6"``), so it works wherever the string did.
    ``<``, ``<=``, ``>`` and ``>=`` follow semver §11: major, minor and patch compare as
    numbers, a pre-release ranks below its release, numeric pre-release identifiers compare as
    numbers and below alphanumeric ones, and a longer list of identifiers ranks above its
    prefix. Build metadata takes no part in precedence; because versions that differ only in it
    are different strings (``!=``), they are ordered by that text, which keeps the order total:
    ``Version("1.0.0+b") > Version("1.0.0+a")``, and ``1.0.0`` comes first. A plain str on the
    other side is read as a Version; one that is not a semantic version cannot be ordered
    against a Version (TypeError).

    ``Version(text)`` takes ``MAJOR.MINOR.PATCH`` with an optional ``-PRERELEASE`` and
    ``+BUILD``; it raises ValueError for a str that is not a semantic version (``"1.2"``,
    ``"v1.2.3"``, ``"01.0.0"``) and TypeError for anything but a str.

    Examples:
        >>> from dra_metadata import Version
        >>> Version("1.10.0") > Version("1.9.0"), Version("1.0.0-rc.1") < "1.0.0"
        (True, True)
        >>> version = Version("580.65.6-beta.2+build.7")
        >>> version.major, version.minor, version.patch, version.prerelease, version.build
        (580, 65, 6, 'beta.2', 'build.7')
        >>> sorted(["1.10.0", "1.9.0", "1.10.0-alpha"], key=Version)
        ['1.9.0', '1.10.0-alpha', '1.10.0']
    """

    __slots__ = ()
    __module__ = "dra_metadata"

    def __new__(cls, text: str) -> Version:  # noqa: PYI034 - typing.Self is 3.11+
        if not isinstance(text, str):
            raise TypeError(f"a Version is made from a str, not {type(text).__name__}")
        if _parse(text) is None:
            raise ValueError(
                f"{text!r} is not a semantic version (semver 2.0.0): "
                "MAJOR.MINOR.PATCH with an optional -PRERELEASE and +BUILD, such as 1.2.3, "
                "1.2.3-rc.1 or 1.2.3+build.5, with no leading zeros and no 'v' prefix"
            )
        return super().__new__(cls, text)

    @property
    def major(self) -> int:
        """The major version (``580`` of ``580.65.6``)."""
        return self._parts.major

    @property
    def minor(self) -> int:
        """The minor version (``65`` of ``580.65.6``)."""
        return self._parts.minor

    @property
    def patch(self) -> int:
        """The patch version (``6`` of ``580.65.6``)."""
        return self._parts.patch

    @property
    def prerelease(self) -> str | None:
        """The pre-release (``"rc.1"`` of ``1.0.0-rc.1``), or None for a release."""
        return self._parts.prerelease

    @property
    def build(self) -> str | None:
        """The build metadata (``"build.5"`` of ``1.0.0+build.5``), or None."""
        return self._parts.build

    @property
    def _parts(self) -> _Parts:
        parts = _parse(str(self))
        assert parts is not None  # noqa: S101 - checked when the Version was made
        return parts

    def __repr__(self) -> str:
        return f"Version({str(self)!r})"

    def __lt__(self, other: str) -> bool:
        key = _other_key(other, "<")
        return NotImplemented if key is None else self._parts.key < key

    def __le__(self, other: str) -> bool:
        key = _other_key(other, "<=")
        return NotImplemented if key is None else self._parts.key <= key

    def __gt__(self, other: str) -> bool:
        key = _other_key(other, ">")
        return NotImplemented if key is None else self._parts.key > key

    def __ge__(self, other: str) -> bool:
        key = _other_key(other, ">=")
        return NotImplemented if key is None else self._parts.key >= key

    # Equality and hashing stay those of str: a Version equals its text.
    __eq__ = str.__eq__
    __ne__ = str.__ne__
    __hash__ = str.__hash__


def _other_key(other: object, operator: str) -> _PrecedenceKey | None:
    """The precedence key of the other operand; None for a non-str (NotImplemented)."""
    if not isinstance(other, str):
        return None
    parts = _parse(str(other))
    if parts is None:
        raise TypeError(
            f"'{operator}' needs two semantic versions: {str(other)!r} is not one (semver "
            "2.0.0); compare the strings with str(version) instead"
        )
    return parts.key


def version_or_text(text: str) -> str:
    """A Version of ``text`` when it is a semantic version, else ``text`` as it is.

    What a ``version`` attribute's value is: the decoder, like Go's, accepts any string there
    (validation reports the ones that are not semantic versions).
    """
    if type(text) is Version or _parse(text) is None:
        return text
    return str.__new__(Version, text)  # checked just now
