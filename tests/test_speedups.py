"""The compiled attribute check (dra_metadata/_decoding/_speedups.c) against its Python twin.

The decoder checks attributes with the compiled module where the package was built with it,
and with `_convert._python_members_as_laid_out` otherwise (no compiler at build time, or
DRA_METADATA_PURE_PYTHON=1). The two must give the same answer on every input: the member of
each attribute, or None. The property below draws layouts and attributes that mostly fit
them, then breaks them in every way an attribute can be wrong.
"""

from __future__ import annotations

import hashlib
import os
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_metadata._decoding import _convert as convert_module

from conftest import REPO
from helpers import compiler_and_headers

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MEMBER_NAMES = ["int", "bool", "string", "version", "ints", "bools", "strings", "versions"]
PURE = os.environ.get(convert_module.PURE_PYTHON_VARIABLE, "") not in ("", "0")

try:
    from dra_metadata._decoding._speedups import members_as_laid_out as compiled
except ImportError:
    compiled = None


needs_compiled = pytest.mark.skipif(
    compiled is None,
    reason="dra_metadata._decoding._speedups is not built here "
    "(test_the_compiled_module_is_built_wherever_it_can_be says why)",
)


def test_the_compiled_module_is_built_wherever_it_can_be() -> None:
    cannot = compiler_and_headers()
    if cannot is not None:
        pytest.skip(f"{cannot}: the package is built without its compiled module")
    assert compiled is not None, (
        "a C compiler and the Python headers are here, but dra_metadata._decoding._speedups was not "
        "built: reinstall the package (pip install -e .) and read the build's warning"
    )


def test_the_decoder_uses_the_compiled_check_unless_told_not_to() -> None:
    if PURE:
        assert convert_module._members_as_laid_out is convert_module._python_members_as_laid_out
        assert convert_module.COMPILED is False
    elif compiled is not None:
        assert convert_module._members_as_laid_out is compiled
        assert convert_module.COMPILED is True


@pytest.mark.parametrize(
    ("value", "compiled_if_built"),
    [(None, True), ("", True), ("0", True), ("1", False), ("yes", False)],
)
def test_the_variable_chooses_the_check(
    monkeypatch: pytest.MonkeyPatch, value: str | None, compiled_if_built: bool
) -> None:
    if value is None:
        monkeypatch.delenv(convert_module.PURE_PYTHON_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(convert_module.PURE_PYTHON_VARIABLE, value)
    chosen = convert_module._choose_members_as_laid_out()
    if compiled_if_built and compiled is not None:
        assert chosen is compiled
    else:
        assert chosen is convert_module._python_members_as_laid_out
    monkeypatch.setitem(sys.modules, "dra_metadata._decoding._speedups", None)  # as if never built
    assert convert_module._choose_members_as_laid_out() is (
        convert_module._python_members_as_laid_out
    )


@needs_compiled
def test_the_compiled_module_is_built_from_the_source_beside_it() -> None:
    """An editable install keeps the module it compiled: changing the C file needs another."""
    from dra_metadata._decoding._speedups import SOURCE_SHA256  # noqa: PLC0415

    source = REPO / "dra_metadata" / "_decoding" / "_speedups.c"
    assert hashlib.sha256(source.read_bytes()).hexdigest() == SOURCE_SHA256, (
        "dra_metadata._decoding._speedups was built from another _speedups.c: run pip install -e . again"
    )


# The property: both implementations agree on every input.

_SCALARS = {
    "int": st.one_of(
        st.integers(INT64_MIN, INT64_MAX),
        st.sampled_from([INT64_MAX, INT64_MAX + 1, 2**64 - 1, INT64_MIN, 0, -1]),
    ),
    "bool": st.booleans(),
    "string": st.text(max_size=5),
    "version": st.text(max_size=5),
}
_ELEMENTS = {
    "ints": _SCALARS["int"],
    "bools": st.booleans(),
    "strings": st.text(max_size=3),
    "versions": st.text(max_size=3),
}
_ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(INT64_MIN, 2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=5,
)


def _fitting_member(name: str) -> st.SearchStrategy[Any]:
    if name in _SCALARS:
        return _SCALARS[name]
    return st.lists(_ELEMENTS[name] | _ANY_JSON, max_size=3)


def _wrong_attributes(name: str) -> dict[str, st.SearchStrategy[Any]]:
    """Each way an attribute for a layout member ``name`` can be wrong."""
    other_names = st.sampled_from(MEMBER_NAMES).filter(lambda each: each != name)
    return {
        "other type": st.builds(lambda value: {name: value}, _ANY_JSON),
        "other name": st.dictionaries(
            st.sampled_from(MEMBER_NAMES) | st.text(max_size=4), _ANY_JSON, min_size=1, max_size=1
        ),
        "two members": st.tuples(_fitting_member(name), other_names, _ANY_JSON, st.booleans()).map(
            lambda drawn: (
                {name: drawn[0], drawn[1]: drawn[2]}
                if drawn[3]
                else {drawn[1]: drawn[2], name: drawn[0]}
            )
        ),
        "no member": st.just({}),
        "not an object": _ANY_JSON.filter(lambda value: type(value) is not dict),
        "big int": st.sampled_from([INT64_MAX + 1, 2**64 - 1, 2**70, INT64_MIN - 1]).map(
            lambda number: {"int": number}
        ),
    }


@st.composite
def _attribute(draw: st.DrawFn, name: str) -> Any:
    """An attribute for a layout member ``name``: mostly fitting, else wrong in one way."""
    wrong = _wrong_attributes(name)
    way = draw(st.sampled_from(["fits"] * len(wrong) + list(wrong)))
    return draw(
        _fitting_member(name).map(lambda member: {name: member}) if way == "fits" else wrong[way]
    )


@st.composite
def _layout_and_values(draw: st.DrawFn) -> tuple[Any, list[Any]]:
    names = draw(st.lists(st.sampled_from(MEMBER_NAMES), min_size=1, max_size=8))
    layout = convert_module._layout(names, 1)
    values = [draw(_attribute(name)) for name in names]
    change = draw(st.sampled_from(["none"] * 4 + ["one more", "one fewer"]))
    if change == "one more":
        values.append(draw(_attribute(draw(st.sampled_from(MEMBER_NAMES)))))
    elif change == "one fewer":
        values.pop()
    return layout, values


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(_layout_and_values(), st.booleans())
def test_the_compiled_check_agrees_with_the_python_one(
    case: tuple[Any, list[Any]], as_a_dict: bool
) -> None:
    layout, values = case
    given_values: Any = values
    if as_a_dict:  # what the decoder passes for one device: the values of its attributes
        given_values = {f"a{index}": value for index, value in enumerate(values)}.values()
    expected = convert_module._python_members_as_laid_out(given_values, layout)
    found = compiled(given_values, layout)  # type: ignore[misc]
    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert len(found) == len(expected)
        assert all(map(lambda one, other: one is other, found, expected))


def test_both_checks_accept_a_fitting_layout_and_refuse_each_kind_of_wrong_attribute() -> None:
    """Named cases, so that a failure of the property above is easy to read."""
    layout = convert_module._layout(["int", "bool", "string", "ints"], 1)
    fits = [{"int": INT64_MAX}, {"bool": False}, {"string": "s"}, {"ints": [1, True]}]
    wrong = {
        "an int past int64": [{"int": INT64_MAX + 1}, *fits[1:]],
        "a bool for an int": [{"int": True}, *fits[1:]],
        "a float for an int": [{"int": 1.0}, *fits[1:]],
        "an int for a bool": [fits[0], {"bool": 0}, *fits[2:]],
        "another member name": [fits[0], fits[1], {"version": "s"}, fits[3]],
        "two members": [fits[0], fits[1], {"string": "s", "version": "v"}, fits[3]],
        "no member": [fits[0], {}, *fits[2:]],
        "not an object": [fits[0], fits[1], "s", fits[3]],
        "a tuple for a list": [*fits[:3], {"ints": (1,)}],
        "one attribute fewer": fits[:3],
        "one attribute more": [*fits, {"int": 1}],
    }
    checks = [convert_module._python_members_as_laid_out]
    if compiled is not None:
        checks.append(compiled)
    for check in checks:
        found = check(fits, layout)
        assert found == [INT64_MAX, False, "s", [1, True]], check
        assert found is not None
        assert found[3] is fits[3]["ints"]  # members as they are: list elements are checked apart
        for what, values in wrong.items():
            assert check(values, layout) is None, (check, what)


@needs_compiled
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (([],), "takes values and a layout"),
        (([], ([], []), None), "takes values and a layout"),
        (([], [[], []]), "the layout must be a tuple"),
        (([], ([],)), "the layout must be a tuple"),
        (([], ((), [])), "names and types must be lists of one length"),
        (([], (["int"], [])), "names and types must be lists of one length"),
        ((5, ([], [])), "not iterable"),
    ],
)
def test_the_compiled_check_refuses_what_it_cannot_read(
    arguments: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        compiled(*arguments)  # type: ignore[misc]


@needs_compiled
def test_the_compiled_check_passes_on_an_error_of_the_values() -> None:
    def values() -> Any:
        yield {"int": 1}
        raise ValueError("from the values")

    with pytest.raises(ValueError, match="from the values"):
        compiled(values(), convert_module._layout(["int", "int"], 1))  # type: ignore[misc]
