"""One validation finding: what it is, where, and how Go's field.ErrorList words it."""

from __future__ import annotations

from pathlib import Path

from dra_metadata._model._frozen import frozen_model

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from dra_metadata._validation._profiles import ErrorType

GO_ERROR_TYPES: dict[str, tuple[str, str]] = {
    "required": ("FieldValueRequired", "Required value"),
    "invalid": ("FieldValueInvalid", "Invalid value"),
    "too_long": ("FieldValueTooLong", "Too long"),
    "too_many": ("FieldValueTooMany", "Too many"),
    "duplicate": ("FieldValueDuplicate", "Duplicate value"),
    "not_supported": ("FieldValueNotSupported", "Unsupported value"),
}
"""Each ``FieldError.type``: Go's ``field.ErrorType`` it stands for, and Go's message for it."""

_store = object.__setattr__
_SHOWS_VALUE = frozenset({"invalid", "too_many", "duplicate", "not_supported"})  # as Go prints


@frozen_model
class FieldError:
    """One validation finding, named by its wire path (``requests[0].devices[1].driver``)."""

    path: str
    type: ErrorType
    value: Any
    detail: str = ""
    file: Path | None = None
    """The file the object came from, when validation ran on a file."""

    __module__ = "dra_metadata"

    def __init__(
        self,
        path: str,
        type: ErrorType,  # noqa: A002 - as Go's field.Error names it
        value: Any,
        detail: str = "",
        file: Path | None = None,
    ) -> None:
        _store(self, "path", path)
        _store(self, "type", type)
        _store(self, "value", value)
        _store(self, "detail", detail)
        _store(self, "file", file)

    def __str__(self) -> str:
        message = GO_ERROR_TYPES[self.type][1]
        if self.type in _SHOWS_VALUE:
            message += f": {_show(self.value)}"
        if self.detail:
            message += f": {self.detail}"
        where = f"{self.file}: " if self.file is not None else ""
        return f"{where}{self.path}: {message}"


def _show(value: object) -> str:
    if isinstance(value, str):
        return '"' + (value if len(value) <= 80 else value[:77] + "...") + '"'
    return repr(value)
