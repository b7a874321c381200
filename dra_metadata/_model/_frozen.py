"""Frozen, slotted dataclasses whose methods cost nothing to make when the package is imported.

``@dataclass(frozen=True)`` writes the source of ``__init__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__`` of every class and compiles it at import: for the dozen
models a read needs, that is most of the import time of the package, paid again by every
``dra-metadata`` command and every liveness probe. `frozen_model` keeps everything the standard
library gives (``dataclasses.fields``, ``replace``, ``asdict``, ``__match_args__``, slots, the
JSON Schemas pydantic derives) and asks it for nothing it would compile: the class writes its own
``__init__`` (type checkers read it; tests compare it with the one ``dataclass`` would write) and
the other methods are made here from the fields, without compiling anything. They behave as
those of ``@dataclass(frozen=True, slots=True)``: equal when of the same class with equal
compared fields, hashed on the same fields, no assignment or deletion of a field
(``dataclasses.FrozenInstanceError``), pickled and copied field by field.

A class defining ``__eq__``, ``__hash__`` or ``__repr__`` keeps its own, as with ``dataclass``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from reprlib import recursive_repr

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from typing_extensions import dataclass_transform

    _C = TypeVar("_C")
else:

    def dataclass_transform(**_):  # noqa: ANN003, ANN202 - the typing_extensions one, at run time
        """Read by type checkers only: the decorated function makes dataclasses."""
        return lambda function: function


_make_dataclass_without_methods = dataclasses.dataclass(
    init=False, repr=False, eq=False, frozen=False, slots=True
)
_object_setattr = object.__setattr__
_object_delattr = object.__delattr__


class _Factory:
    """The default of a hand-written ``__init__``'s argument whose field has a default
    factory: shown as ``dataclass`` shows it (``<factory>``) in the signature."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


FACTORY: Any = _Factory()
"""Default of an ``__init__`` argument made by its field's ``default_factory`` when absent."""


def _key(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The values of ``names`` as a tuple, read by C code (``operator.attrgetter``)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        only = attrgetter(names[0])
        return lambda instance: (only(instance),)
    return lambda _: ()


def _comparisons(fields: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    """``__eq__`` and ``__hash__`` on the compared fields (and those with ``hash=True``)."""
    compared = _key(tuple(item.name for item in fields if item.compare))
    hashed = _key(
        tuple(item.name for item in fields if (item.compare if item.hash is None else item.hash))
    )

    def __eq__(self: Any, other: object) -> Any:  # noqa: N807 - the method's own name
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self: Any) -> int:  # noqa: N807
        return hash(hashed(self))

    return {"__eq__": __eq__, "__hash__": __hash__}


def _freezing(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    """``__setattr__`` and ``__delattr__`` that refuse the fields (and, on ``cls``, any name)."""
    field_names = frozenset(item.name for item in fields)

    # A model's only base is object: what super().__setattr__ would call.
    def __setattr__(self: Any, name: str, value: object) -> None:  # noqa: N807
        if type(self) is cls or name in field_names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        _object_setattr(self, name, value)

    def __delattr__(self: Any, name: str) -> None:  # noqa: N807
        if type(self) is cls or name in field_names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        _object_delattr(self, name)

    return {"__setattr__": __setattr__, "__delattr__": __delattr__}


def _state(fields: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    """``__repr__`` of the shown fields, and pickling (and copying) field by field."""
    shown = tuple(item.name for item in fields if item.repr)
    every = tuple(item.name for item in fields)
    values = _key(every)

    @recursive_repr()
    def __repr__(self: Any) -> str:  # noqa: N807
        text = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({text})"

    def __getstate__(self: Any) -> list[Any]:  # noqa: N807
        return list(values(self))

    def __setstate__(self: Any, state: list[Any]) -> None:  # noqa: N807
        for name, value in zip(every, state, strict=True):
            _object_setattr(self, name, value)

    return {"__repr__": __repr__, "__getstate__": __getstate__, "__setstate__": __setstate__}


def _methods(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    """The methods ``dataclass(frozen=True)`` would have written for ``cls``."""
    made = {**_comparisons(fields), **_freezing(cls, fields), **_state(fields)}
    for method in made.values():
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
    return made


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen_model(cls: type[_C]) -> type[_C]:
    """A frozen, slotted dataclass of ``cls``, which writes its own ``__init__``.

    ``__init__`` stores each field with ``object.__setattr__`` (`FACTORY` as the default of an
    argument whose field has a ``default_factory``) and calls ``__post_init__`` if the class has
    one; a test compares it with the one ``dataclass`` would write.

    Raises:
        TypeError: ``cls`` has no ``__init__`` of its own, or defines ``__setattr__`` or
            ``__delattr__`` (which ``dataclass(frozen=True)`` refuses too).
    """
    own = dict(cls.__dict__)
    if "__init__" not in own:
        raise TypeError(f"{cls.__qualname__} must write its own __init__")
    made = _make_dataclass_without_methods(cls)
    fields = dataclasses.fields(made)  # type: ignore[arg-type]  # it is a dataclass now
    # A class that defines __eq__ alone has __hash__ = None there: dataclass hashes it anyway.
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    for name, method in _methods(made, fields).items():
        if name in ("__setattr__", "__delattr__") and name in own:
            raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
        if name not in own or (name == "__hash__" and not explicit_hash):
            setattr(made, name, method)
    # What the class behaves as, for dataclass itself (a frozen subclass needs a frozen base)
    # and for anything else that reads the parameters.
    parameters = made.__dataclass_params__  # type: ignore[attr-defined]
    parameters.init = parameters.eq = parameters.frozen = True
    parameters.repr = "__repr__" not in own
    return made
