"""The spelled-out checks of labels and subdomains say what their patterns say.

The validator checks names without compiling a regex; the patterns stay what the schema and
the docs give. For any text, the check and a fullmatch of its pattern agree.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from dra_metadata._validation._validate import (
    _CASELESS_LABEL,
    _CASELESS_SUBDOMAIN,
    LABEL_PATTERN,
    SUBDOMAIN_PATTERN,
    is_label,
    is_subdomain,
)

# The letters that matter (Go's case folding: KELVIN SIGN, LONG S; Python's dotted and dotless
# i), the separators, and a few that are never part of a name.
NAME_ALPHABET = "-.azAZ09ks\u017f\u212a\u0130\u0131_ \n/\x00é"
names = st.text(alphabet=NAME_ALPHABET, max_size=12)


@given(names)
@example("")
@example("-")
@example("a-")
@example("-a")
@example("a.b")
@example("a..b")
@example(".a")
@example("a.")
@example("a\n")
def test_labels_and_subdomains_are_checked_as_their_patterns_say(text: str) -> None:
    assert is_label(text) == (re.fullmatch(LABEL_PATTERN, text) is not None)
    assert is_subdomain(text) == (re.fullmatch(SUBDOMAIN_PATTERN, text) is not None)
    assert is_label(text, caseless=True) == (re.fullmatch(_CASELESS_LABEL, text) is not None)
    assert is_subdomain(text, caseless=True) == (
        re.fullmatch(_CASELESS_SUBDOMAIN, text) is not None
    )
