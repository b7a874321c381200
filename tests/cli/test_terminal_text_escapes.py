"""What the command prints for a terminal: control and formatting characters escaped, all
other text as it is.

Printable ASCII is passed through without looking at the escaping pattern (compiling it is a
cost every run would pay); for any text the answer is the pattern's.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from dra_metadata.cli._output import _UNSAFE, _escape, safe_text


@given(st.text(max_size=40) | st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40))
@example("plain text, with spaces ~!")
@example("tab\there")
@example("line\nbreak\r")
@example("\x1b[31mred\x1b[0m")
@example("\x7f")
@example("\u202eevil")
@example("caf\u00e9")
@example("\udc80")
def test_text_is_escaped_as_the_pattern_says(text: str) -> None:
    assert safe_text(text) == re.sub(_UNSAFE, _escape, text)


def test_printable_ascii_comes_back_as_it_is() -> None:
    text = "".join(map(chr, range(0x20, 0x7F)))
    assert safe_text(text) is text
