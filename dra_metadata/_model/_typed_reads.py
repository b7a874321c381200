"""Typed attribute reads: ``device.attribute(name, default, type=int)`` and its kin.

``type`` names the member an attribute must hold: int, bool, str (``string``), Version
(``version``), and for the list forms the tuple types the values are returned as:
``tuple[int, ...]`` (``ints``), ``tuple[bool, ...]``, ``tuple[str, ...]``,
``tuple[Version, ...]``. An attribute that holds another member raises AttributeValueError
naming the attribute and the member it holds.
"""

from __future__ import annotations

from dra_metadata._model._errors import AttributeValueError
from dra_metadata._model._semver import Version, version_or_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from dra_metadata._model._attributes import DeviceAttribute

ATTRIBUTE_TYPES: dict[Any, str] = {
    int: "int",
    bool: "bool",
    str: "string",
    Version: "version",
    tuple[int, ...]: "ints",
    tuple[bool, ...]: "bools",
    tuple[str, ...]: "strings",
    tuple[Version, ...]: "versions",
}
"""The ``type`` arguments of a typed read and the member each one reads."""

_KIND_TEXT = {
    "int": "an int",
    "bool": "a bool",
    "string": "a string",
    "version": "a version",
    "ints": "a list of ints",
    "bools": "a list of bools",
    "strings": "a list of strings",
    "versions": "a list of versions",
}
_TYPE_TEXT = {
    "int": "int",
    "bool": "bool",
    "string": "str",
    "version": "Version",
    "ints": "tuple[int, ...]",
    "bools": "tuple[bool, ...]",
    "strings": "tuple[str, ...]",
    "versions": "tuple[Version, ...]",
}


def member_of_type(wanted: object) -> str:
    """The member that ``type=wanted`` reads; TypeError naming the accepted types otherwise."""
    try:
        member = ATTRIBUTE_TYPES.get(wanted)
    except TypeError:  # an unhashable argument
        member = None
    if member is not None:
        return member
    accepted = ", ".join(_TYPE_TEXT.values())
    hint = ""
    origin = getattr(wanted, "__origin__", None)
    if origin is list or origin is tuple:
        hint = " (the list forms are read as tuples: tuple[int, ...], not list[int])"
    raise TypeError(f"type must be one of {accepted}, not {wanted!r}{hint}")


def typed_value(owner: str, key: str, attribute: DeviceAttribute, member: str) -> object:
    """The value of ``attribute`` (called ``key`` on device ``owner``) if it holds ``member``.

    None when it holds nothing; AttributeValueError, naming the attribute and what it holds,
    when it holds another member, several, or a version that is not a semantic version.
    """
    held = attribute.members
    if not held:
        return None
    if len(held) > 1:
        raise AttributeValueError(
            f"{owner}: attribute {key} has several values set ({', '.join(held)}); exactly "
            "one is allowed",
            name=key,
            kind=None,
        )
    value = attribute.value
    if held[0] != member:
        raise AttributeValueError(
            f"{owner}: attribute {key} holds {_KIND_TEXT[held[0]]} ({_shown(value)}), not "
            f"{_KIND_TEXT[member]}: read it with type={_TYPE_TEXT[held[0]]}",
            name=key,
            kind=held[0],
        )
    if member == "version" and not isinstance(value, Version):
        raise AttributeValueError(
            f"{owner}: attribute {key} holds the version {value!r}, which is not a semantic "
            f"version (semver 2.0.0); read its text with device.get_attribute({key!r}).version",
            name=key,
            kind=member,
        )
    invalid = (
        [(index, item) for index, item in enumerate(attribute.versions) if not _is_version(item)]
        if member == "versions"
        else []
    )
    if invalid:
        index, text = invalid[0]
        raise AttributeValueError(
            f"{owner}: attribute {key} holds versions whose element {index} ({text!r}) is "
            "not a semantic version (semver 2.0.0); read their text with "
            f"device.get_attribute({key!r}).versions",
            name=key,
            kind=member,
        )
    return value


def _is_version(text: str) -> bool:
    return isinstance(version_or_text(text), Version)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
