"""The event model: what a watch reports, and how one file's change is classified."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from pathlib import Path

from dra_metadata._model._frozen import frozen_model
from dra_metadata._model._metadata import DeviceMetadata, MetadataSource

_store = object.__setattr__


class MetadataEventKind(enum.Enum):
    """What happened to a metadata file: the ``kind`` of a MetadataEvent.

    Generations are compared per file, never across drivers; each generation is reported once
    however many file events it caused.
    """

    CREATED = "created"
    """First seen (at start, or when it appeared)."""
    UPDATED = "updated"
    """The driver raised the file's generation."""
    REPLACED = "replaced"
    """The generation went down, or the content changed under the same generation, or the file
    came back after being removed: the claim was prepared again."""
    STALE = "stale"
    """The file was unlinked on the host; this container's view is frozen (restart it)."""
    REMOVED = "removed"
    """The path is gone."""

    __module__ = "dra_metadata"


@frozen_model
class MetadataEvent:
    """One change seen by a watcher (watch_claim_metadata and its twins yield them).

    Examples:
        >>> event = next(dra_metadata.watch_claim_metadata("training-gpus", "gpu"))
        >>> event.kind, sorted(event.generations.items())
        (<MetadataEventKind.CREATED: 'created'>, [('gpu.example.com', 1), ('rdma.example.com', 1)])
        >>> len(event.metadata.devices)
        4
    """

    kind: MetadataEventKind
    metadata: DeviceMetadata | None
    """The latest metadata of everything watched (merged across drivers), or None."""
    generations: Mapping[str, int]
    """Generation of each file present, by driver (by file name when it names no driver)."""
    paths: tuple[Path, ...]
    """The file(s) this event is about."""
    driver: str | None = None
    """The driver of the file this event is about, when its name says."""

    __module__ = "dra_metadata"

    def __init__(
        self,
        kind: MetadataEventKind,
        metadata: DeviceMetadata | None,
        generations: Mapping[str, int],
        paths: tuple[Path, ...],
        driver: str | None = None,
    ) -> None:
        _store(self, "kind", kind)
        _store(self, "metadata", metadata)
        _store(self, "generations", generations)
        _store(self, "paths", paths)
        _store(self, "driver", driver)

    def __hash__(self) -> int:
        # generations is a dict, which has no hash: hashed as the set of its items.
        generations = frozenset(self.generations.items())
        return hash((self.kind, self.metadata, generations, self.paths, self.driver))


def classify(previous: MetadataSource | None, current: MetadataSource) -> MetadataEventKind | None:
    """The kind of change from ``previous`` to ``current`` of one file (None: no change)."""
    if previous is None:
        return MetadataEventKind.CREATED
    if current.generation > previous.generation:
        return MetadataEventKind.UPDATED
    if current.generation < previous.generation or current.metadata != previous.metadata:
        return MetadataEventKind.REPLACED
    return None  # the same generation and content, rewritten
