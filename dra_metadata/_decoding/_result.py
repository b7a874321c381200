"""What ``decode_stream`` returns: the object, its version, the versions skipped, the findings."""

from __future__ import annotations

from dra_metadata._model._building import twin_of
from dra_metadata._model._frozen import frozen_model

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from dra_metadata._model._metadata import DeviceMetadata
    from dra_metadata._validation._findings import FieldError

_store = object.__setattr__


@frozen_model
class DecodeResult:
    """What decode_stream found: the object, the version it came from, the versions skipped,
    and (when asked for) the validation findings, which never prevent decoding."""

    metadata: DeviceMetadata
    api_version: str
    skipped_versions: tuple[str, ...] = ()
    errors: tuple[FieldError, ...] = ()
    """Validation findings (``validate=``); empty when valid or not validated."""

    __module__ = "dra_metadata"

    def __init__(
        self,
        metadata: DeviceMetadata,
        api_version: str,
        skipped_versions: tuple[str, ...] = (),
        errors: tuple[FieldError, ...] = (),
    ) -> None:
        _store(self, "metadata", metadata)
        _store(self, "api_version", api_version)
        _store(self, "skipped_versions", skipped_versions)
        _store(self, "errors", errors)


_DecodeResultTwin = twin_of(DecodeResult)


def build_result(
    metadata: DeviceMetadata,
    api_version: str,
    skipped_versions: tuple[str, ...],
    errors: tuple[FieldError, ...],
) -> DecodeResult:
    """A DecodeResult of values the decoder has checked: each field, in order, unchecked."""
    instance = _DecodeResultTwin()
    instance.metadata = metadata
    instance.api_version = api_version
    instance.skipped_versions = skipped_versions
    instance.errors = errors
    instance.__class__ = DecodeResult
    return instance  # type: ignore[no-any-return]
