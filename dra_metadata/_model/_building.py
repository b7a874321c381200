"""How the models are built: wire names as pydantic aliases, and unchecked constructors.

``camel`` gives each field its wire name (read by pydantic through ``__pydantic_config__``);
``builder`` makes the positional, unchecked constructor the decoder uses for data it has
checked itself.
"""

from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

_C = TypeVar("_C")


def camel(name: str) -> str:
    """The wire name of a field: ``interface_name`` -> ``interfaceName``."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


# Read by pydantic when it builds a schema for these dataclasses: wire names as aliases.
_PYDANTIC_CONFIG = {"alias_generator": camel, "validate_by_name": True, "validate_by_alias": True}


def builder(cls: type[_C]) -> Callable[..., _C]:
    """A constructor taking every field positionally, in order, without checks.

    For the decoder, which has checked the values already: several times faster than __init__.
    The instance is made as a plain twin of the slotted class, with the same slots, whose
    attribute stores the interpreter runs at full speed (those of a frozen class go through
    its __setattr__ and cannot), then given the class, whose layout is the same.
    """
    names = [item.name for item in fields(cls)]  # type: ignore[arg-type]
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": cls.__slots__})  # type: ignore[attr-defined]
    namespace: dict[str, Any] = {"_twin": twin, "_cls": cls}
    stores = "".join(f"    instance.{name} = {name}\n" for name in names)
    source = (
        f"def build_{cls.__name__}({', '.join(names)}):\n"
        f"    instance = _twin()\n{stores}    instance.__class__ = _cls\n    return instance\n"
    )
    exec(source, namespace)  # noqa: S102 - source built above from the dataclass's own field names
    build: Callable[..., _C] = namespace[f"build_{cls.__name__}"]
    return build
