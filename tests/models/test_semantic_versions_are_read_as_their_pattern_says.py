"""A semantic version is read as SEMVER_PATTERN reads it, without compiling the pattern.

``semver_groups`` spells the pattern out; for any text it matches exactly where the pattern
fully matches, with the same groups (major, minor, patch, pre-release, build metadata).
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from dra_metadata._model._semver import SEMVER_PATTERN, semver_groups

# Digits (leading zeros too), the separators, letters of identifiers, and some that are never
# in a version (a 'v' prefix, space, underscore, a non-ASCII digit and letter).
VERSION_ALPHABET = "0123456789..--++azAZv _\u0663é"
parts = st.text(alphabet=VERSION_ALPHABET, max_size=8)
versions = st.one_of(
    st.text(alphabet=VERSION_ALPHABET, max_size=24),
    st.builds(lambda a, b, c, rest: f"{a}.{b}.{c}{rest}", parts, parts, parts, parts),
    st.builds(
        lambda numbers, pre, build: ".".join(map(str, numbers)) + pre + build,
        st.lists(st.integers(0, 120), min_size=3, max_size=3),
        st.sampled_from(["", "-", "-0", "-01", "-rc.1", "-rc..1", "-a-b.0", "-00a"]),
        st.sampled_from(["", "+", "+01", "+b.7", "+b..7", "+-", "+a+b"]),
    ),
)


@given(versions)
@example("1.2.3")
@example("01.2.3")
@example("1.2.3-")
@example("1.2.3+")
@example("1.2.3-0")
@example("1.2.3-00")
@example("1.2.3-0a")
@example("1.2.3-rc.1+build.5-x")
@example("1.2.3+build-1")
@example("1.2.3-a+b+c")
@example("1.2.3\n")
@example("1.2.\u0663")
def test_the_spelled_out_reading_is_the_patterns(text: str) -> None:
    match = re.fullmatch(SEMVER_PATTERN, text)
    assert semver_groups(text) == (None if match is None else match.groups())
