"""How the models are built: wire names as pydantic aliases, and unchecked constructors.

``camel`` gives each field its wire name (read by pydantic through ``__pydantic_config__``);
``twin_of`` makes the blanks of the positional, unchecked constructors the decoder uses for data
it has checked itself.
"""


def camel(name: str) -> str:
    """The wire name of a field: ``interface_name`` -> ``interfaceName``."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


# Read by pydantic when it builds a schema for these dataclasses: wire names as aliases.
_PYDANTIC_CONFIG = {"alias_generator": camel, "validate_by_name": True, "validate_by_alias": True}


def twin_of(cls: type) -> type:
    """A plain class with the slots of the slotted model ``cls``: its instances are the blanks
    of the decoder's constructors, which store each field at full speed (a frozen model's
    stores go through its __setattr__) and then set the instance's class to ``cls``, whose
    layout is the same. Each model writes its constructor out next to its class: several times
    faster than __init__, and nothing to compile at import."""
    return type(f"_{cls.__name__}Twin", (), {"__slots__": cls.__slots__})  # type: ignore[attr-defined]
