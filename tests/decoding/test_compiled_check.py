"""The compiled attribute check (dra_metadata/_decoding/_speedups.c) against its Python twin.

The decoder checks attributes with the compiled module where the package was built with it,
and with `_convert._python_members_as_laid_out` otherwise (no compiler at build time, or
DRA_METADATA_PURE_PYTHON=1). The two must give the same answer on every input: the member of
each attribute, or None. The property below draws layouts and attributes that mostly fit
them, then breaks them in every way an attribute can be wrong.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_metadata._decoding import _convert as convert_module

from helpers import REPO

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
@given(_layout_and_values(), st.sampled_from(["list", "dict values", "tuple"]))
def test_the_compiled_check_agrees_with_the_python_one(
    case: tuple[Any, list[Any]], passed_as: str
) -> None:
    layout, values = case
    given_values: Any = values
    if passed_as == "dict values":  # what the decoder passes for one device
        given_values = {f"a{index}": value for index, value in enumerate(values)}.values()
    elif passed_as == "tuple":
        given_values = tuple(values)
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


def _outcome(check: Any, *arguments: Any) -> tuple[Any, ...]:
    """What a caller sees of one call: the result, or the type and text of the exception."""
    try:
        result = check(*arguments)
    except Exception as error:  # noqa: BLE001 - the comparison is the point
        return (type(error).__name__, str(error))
    return ("returned", result)


@needs_compiled
def test_the_compiled_check_refuses_a_call_without_two_arguments() -> None:
    layout = convert_module._layout(["int"], 1)
    for arguments in [(), ([],), ([], layout, None)]:
        with pytest.raises(TypeError, match="takes values and a layout"):
            compiled(*arguments)  # type: ignore[misc]


def _values_then_an_error() -> Any:
    yield {"int": 1}
    raise ValueError("from the values")


def _hand_made_layouts() -> dict[str, tuple[Any, Any]]:
    """Arguments the decoder never passes: each goes to the Python twin, or takes the fast path
    with the twin's answer."""
    layout = convert_module._layout
    made = convert_module._Layout
    fits = [{"int": 1}, {"bool": True}]
    return {
        "a plain tuple": (fits, (["int", "bool"], [int, bool])),
        "a list": (fits, [["int", "bool"], [int, bool]]),
        "no layout": (fits, None),
        "names of a tuple": (fits, made(("int", "bool"), [int, bool], None, ())),  # type: ignore[arg-type]
        "fewer types": (fits, made(["int", "bool"], [int], None, ())),
        "more types": (fits, made(["int", "bool"], [int, bool, str], None, ())),
        "a name not a str": (fits, made([1, "bool"], [int, bool], None, ())),  # type: ignore[list-item]
        "ints picking a str": ([{"string": "s"}], made(["string"], [str], lambda _: ("s",), ())),
        "ints picking nothing": (fits, made(["int", "bool"], [int, bool], lambda _: (), ())),
        "ints that raise": (fits, made(["int", "bool"], [int, bool], lambda _: 1 / 0, ())),
        "ints left out": ([{"int": 2**64}], made(["int"], [int], None, ())),
        "values without a length": (_values_then_an_error(), layout(["int", "int"], 1)),
        "values not iterable": (5, layout(["int"], 1)),
        "values as a tuple": (tuple(fits), layout(["int", "bool"], 1)),
        "values as a set of keys": ({"int": 1}.keys(), layout(["int"], 1)),
        "an attribute not a dict": ([{"int": 1}, ["bool"]], layout(["int", "bool"], 1)),
        "a dict subclass": ([type("D", (dict,), {})(int=1)], layout(["int"], 1)),
    }


@needs_compiled
@pytest.mark.parametrize("case", list(_hand_made_layouts()))
def test_the_compiled_check_answers_as_the_python_one_on_any_arguments(case: str) -> None:
    values, layout = _hand_made_layouts()[case]
    again, _ = _hand_made_layouts()[case]  # a generator is used up by the first call
    expected = _outcome(convert_module._python_members_as_laid_out, values, layout)
    assert _outcome(compiled, again, layout) == expected


# Hostile objects: each of these ended in SIGSEGV (use-after-free or NULL dereference under
# AddressSanitizer) when the loop held borrowed references and raw list slots while Python code
# ran. Each runs in its own interpreter, where it must not die by a signal, and must give what
# the Python twin gives.

_HOSTILE = {
    "the values' iterator shrinks the layout lists": """
layout = convert._layout(["int"] * 8, 1)
class Values:
    def __len__(self):
        return 8
    def __iter__(self):
        for index in range(8):
            if index == 4:
                layout.names.clear()
                layout.types.clear()
            yield {"int": index}
values = Values()
""",
    "a key's __eq__ clears the dict whose member is then returned": """
class Key:
    def __hash__(self):
        return hash("int")
    def __eq__(self, other):
        attribute.clear()
        return True
attribute = {Key(): 2**40 + 7}
values = [attribute]
layout = convert._layout(["int"], 1)
""",
    "a key's __eq__ frees the layout name compared": """
class Key:
    def __hash__(self):
        return hash(layout.names[0])
    def __eq__(self, other):
        layout.names.clear()
        return True
layout = convert._layout(["".join(["in", "t"]), "".join(["in", "t"])], 1)
values = [{Key(): 5}, {"int": 6}]
""",
    "the half-built result is reached through gc.get_referrers and cleared": """
import gc
first = 2**40 + 11  # in the int64 range, and not a cached small int
class Key:
    def __hash__(self):
        return hash("int")
    def __eq__(self, other):
        for holder in gc.get_referrers(first):
            if type(holder) is list and holder is not values:
                print(repr(holder), file=sys.stderr)
                holder.clear()
        return True
values = [{"int": first}, {Key(): 3}, {"int": 4}]
layout = convert._layout(["int"] * 3, 1)
""",
    "a str subclass key": """
class Key(str):
    def __eq__(self, other):
        layout.names.clear()
        return True
    __hash__ = str.__hash__
layout = convert._layout(["int"], 1)
values = [{Key("int"): 5}]
""",
    "a metaclass whose __eq__ changes the layout": """
class Meta(type):
    def __eq__(self, other):
        layout.types.clear()
        return True
    __hash__ = type.__hash__
Odd = Meta("Odd", (), {})
layout = convert._Layout(["int", "int"], [Odd, Odd], None, ())
values = [{"int": 1}, {"int": 2}]
""",
    "ints that empty the members and the layout": """
def pick(members):
    layout.names.clear()
    members.clear()
    return (1,)
layout = convert._Layout(["int"], [int], pick, ())
values = [{"int": 1}]
""",
}
_HOSTILE_RUN = """
import json, sys
from dra_metadata._decoding import _convert as convert
from dra_metadata._decoding._speedups import members_as_laid_out as compiled

def outcome(check):
    exec(sys.argv[1], globals())
    try:
        result = check(values, layout)
    except Exception as error:
        return [type(error).__name__, str(error)]
    return ["returned", repr(result)]

print(json.dumps([outcome(convert._python_members_as_laid_out), outcome(compiled)]))
"""


@needs_compiled
@pytest.mark.parametrize("case", list(_HOSTILE))
def test_hostile_objects_cannot_crash_the_compiled_check(case: str) -> None:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key != convert_module.PURE_PYTHON_VARIABLE
    }
    result = subprocess.run(
        [sys.executable, "-c", _HOSTILE_RUN, _HOSTILE[case]],
        cwd=REPO,  # where a mutation run (tools/mutation_score.py) finds its configuration
        env={**environment, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode >= 0, f"killed by signal {-result.returncode}: {result.stderr}"
    assert result.returncode == 0, result.stderr
    expected, found = json.loads(result.stdout)
    assert found == expected


@needs_compiled
def test_the_decoders_arguments_take_the_fast_path_and_no_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The route: what orjson gives never reaches the Python twin; anything that could run
    Python code inside the loop does."""
    asked: list[object] = []
    python_check = convert_module._python_members_as_laid_out

    def counted(values: Any, layout: Any) -> Any:
        asked.append(values)
        return python_check(values, layout)

    monkeypatch.setattr(convert_module, "_python_members_as_laid_out", counted)
    layout = convert_module._layout(["int", "string", "ints"], 2)
    attributes = [{"int": 1}, {"string": "s"}, {"ints": [1]}] * 2
    for values in (attributes, {f"a{i}": v for i, v in enumerate(attributes)}.values()):
        assert compiled(values, layout) == [1, "s", [1]] * 2  # type: ignore[misc]
    for refused in ([*attributes[:5], {"int": 1}], [*attributes[:5], {"ints": [1], "x": 2}]):
        assert compiled(refused, layout) is None  # type: ignore[misc]
    assert asked == []

    class Key(str):
        __slots__ = ()

    hostile = [*attributes[:5], {Key("ints"): [1]}]
    assert compiled(hostile, layout) == [1, "s", [1]] * 2  # type: ignore[misc]
    assert asked == [hostile]
