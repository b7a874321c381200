"""Validation before writing: the writers' ``validate=`` option.

Upstream's writer validates nothing, so the writers here do not either unless asked: a
driver that builds its objects from checked data pays nothing, and the same objects upstream
writes can be written (fixtures of invalid files included). ``validate=True`` or ``"strict"``
checks the object in every API version it is about to be written in, before anything on disk
changes.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dra_metadata._decoding._decode import resolve_profile
from dra_metadata._model._errors import MetadataValidationError
from dra_metadata._model._metadata import DeviceMetadata

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dra_metadata._validation._findings import FieldError
    from dra_metadata._validation._profiles import Profile


def check_before_writing(
    metadata: DeviceMetadata,
    validate: bool | Profile,
    versions: Iterable[str],
    path: Path | None,
) -> None:
    """Raise MetadataValidationError (naming ``path``) when ``metadata`` breaks the rules of
    any of ``versions`` under the profile ``validate`` asks for; nothing when it is False."""
    profile = resolve_profile(validate)
    if profile is None:
        return
    from dra_metadata._validation._validate import validate as findings_of  # noqa: PLC0415 - when asked

    found: dict[str, FieldError] = {}
    for version in versions:
        as_written = replace(metadata, api_version=version, sources=())
        for finding in findings_of(as_written, profile=profile):
            found.setdefault(str(finding), replace(finding, file=path))
    if found:
        raise MetadataValidationError(tuple(found.values()), metadata, path=path)
