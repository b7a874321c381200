"""The checks every model's ``__post_init__`` shares: clear TypeErrors for hand-built objects.

The decoder checks wire data itself and builds objects without these (the unchecked
constructors written out next to each model); they catch
what a person builds by hand, before the writer would meet it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_object_setattr = object.__setattr__


def _type_error(owner: object, name: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{type(owner).__name__}.{name} must be {expected}, not {value!r}")


def _check(owner: object, name: str, kind: type | tuple[type, ...], expected: str) -> None:
    value = getattr(owner, name)
    if not isinstance(value, kind) or (kind is builtins.int and isinstance(value, bool)):
        raise _type_error(owner, name, expected, value)


def _check_int64(owner: object, name: str, *, optional: bool = False) -> None:
    value = getattr(owner, name)
    if optional and value is None:
        return
    if type(value) is not builtins.int or not INT64_MIN <= value <= INT64_MAX:
        raise _type_error(owner, name, "an int in the int64 range", value)


def _check_optional(owner: object, name: str, kind: type, expected: str) -> None:
    if getattr(owner, name) is not None:
        _check(owner, name, kind, expected)


def _coerce_tuple(owner: object, name: str, check: Callable[[Any], bool], expected: str) -> None:
    value = getattr(owner, name)
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise _type_error(owner, name, f"a sequence of {expected}", value)
    items = tuple(value)
    for item in items:
        if not check(item):
            raise _type_error(owner, name, f"a sequence of {expected}", value)
    _object_setattr(owner, name, items)


def _is_int64(value: object) -> builtins.bool:
    return type(value) is builtins.int and INT64_MIN <= value <= INT64_MAX


def _is_str(value: object) -> builtins.bool:
    return isinstance(value, str)


def _is_bool(value: object) -> builtins.bool:
    return isinstance(value, bool)


def _instance_of(kind: type) -> Callable[[object], builtins.bool]:
    return lambda value: isinstance(value, kind)


def _coerce_str_map(owner: object, name: str) -> None:
    value = getattr(owner, name)
    if not isinstance(value, Mapping) or not all(
        isinstance(key, str) and isinstance(item, str) for key, item in value.items()
    ):
        raise _type_error(owner, name, "a mapping of str to str", value)
    _object_setattr(owner, name, dict(value))
