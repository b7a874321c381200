"""The event model: what a watch reports, and how one file's change is classified."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from dra_metadata._model._metadata import DeviceMetadata, MetadataSource


class StopEvent(Protocol):
    """Anything with ``is_set()``: threading.Event, asyncio.Event, multiprocessing.Event.

    A watch or wait given one as ``stop_event`` ends once it is set: a threading.Event or
    multiprocessing.Event ends a watch or wait at once, an asyncio.Event an ``awatch_*`` or
    ``await_*`` at once; any other object is looked at every 100 ms.
    """

    def is_set(self) -> bool: ...


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


@dataclass(frozen=True, slots=True)
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
