"""Readable reprs for the models: only the fields that are set.

``DeviceAttribute(version="1.0.0")`` has eight members, seven of them empty; a printed device
with a dozen attributes would be mostly ``int=None, bool=None, ...``. The models whose empty
fields are noise use `set_fields_repr`, which shows what differs from the field's default
(``Device()`` shows as ``Device()``). ``eval(repr(x)) == x`` still holds for values whose own
reprs round-trip.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any


def _default(field: dataclasses.Field[Any]) -> object:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def set_fields_repr(self: Any, shown_as: Mapping[str, Callable[[Any], str]] | None = None) -> str:
    """``Name(field=value, ...)`` with only the fields whose value is not their default;
    ``shown_as``: the function that makes the text of a field's value instead of ``repr``."""
    shown = []
    for field in dataclasses.fields(self):
        if not field.repr:
            continue
        value = getattr(self, field.name)
        default = _default(field)
        unchanged = value == default and (type(value) is type(default) or not value)
        if default is not dataclasses.MISSING and unchanged:
            continue  # an empty mapping of another type is as empty as the default
        show = repr if shown_as is None else shown_as.get(field.name, repr)
        shown.append(f"{field.name}={show(value)}")
    return f"{type(self).__name__}({', '.join(shown)})"
