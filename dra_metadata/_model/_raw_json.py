"""Kept JSON values (``fieldsV1``): compared, measured and shown without recursion.

A file may nest such a value as deep as Go's decoder allows (10,000 levels), far deeper than
Python's recursion limit (1,000), which ``==`` on nested dicts and lists runs into: these walk
the value with a stack of their own.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any


def json_equal(left: Any, right: Any) -> bool:
    """``left == right`` for JSON values (dicts, lists, scalars), at any depth.

    Anything else is compared with ``==``, as are the scalars: ``1 == 1.0``, and a value is
    equal to itself (NaN too), as in a list comparison.
    """
    pending = [(left, right)]
    while pending:
        one, other = pending.pop()
        if one is other:
            continue
        kinds = (type(one), type(other))
        if kinds == (dict, dict):
            if one.keys() != other.keys():
                return False
            pending.extend((value, other[key]) for key, value in one.items())
        elif kinds == (list, list):
            if len(one) != len(other):
                return False
            pending.extend(zip(one, other, strict=True))
        elif not one == other:  # noqa: SIM201 - `!=` may be defined otherwise
            return False
    return True


def json_depth(value: Any) -> int:
    """How many dicts and lists deep ``value`` nests (0 for a scalar), at any depth."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children)
    return deepest


def json_repr(value: Any) -> str:
    """``repr(value)`` for JSON values (dicts, lists, scalars), at any depth.

    The same text as ``repr`` gives where it does not run out of recursion; anything but a
    dict or a list is shown with its own ``repr``.
    """
    parts: list[str] = []
    pending: list[tuple[bool, Any]] = [(False, value)]  # (text already made?, what)
    while pending:
        made, item = pending.pop()
        if made:
            parts.append(item)
        elif type(item) is dict and item:
            pending.append((True, "}"))
            for index, (key, child) in reversed(list(enumerate(item.items()))):
                pending.append((False, child))
                pending.append((True, f"{', ' if index else ''}{key!r}: "))
            pending.append((True, "{"))
        elif type(item) is list and item:
            pending.append((True, "]"))
            for index, child in reversed(list(enumerate(item))):
                pending.append((False, child))
                if index:
                    pending.append((True, ", "))
            pending.append((True, "["))
        else:
            parts.append(repr(item))
    return "".join(parts)
