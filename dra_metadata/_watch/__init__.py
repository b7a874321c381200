"""Watching and waiting: inotify events are hints, re-reading is the truth.

``_events`` (what a watch reports), ``_inotify`` (hints of which paths changed), ``_engine``
(the state of each file and the scans), ``_pacing`` (pauses between scans), ``_functions``
(the public watch functions) and ``_waits`` (waiting for a condition). This package only
re-exports.
"""

from dra_metadata._watch._events import MetadataEvent, MetadataEventKind, StopEvent
from dra_metadata._watch._functions import (
    awatch_claim_metadata,
    awatch_metadata_file,
    awatch_template_metadata,
    watch_claim_metadata,
    watch_metadata_file,
    watch_template_metadata,
)
from dra_metadata._watch._options import FORCE_POLLING_ENVIRONMENT_VARIABLE
from dra_metadata._watch._waits import (
    NETWORK_FIELDS,
    Condition,
    network_data_condition,
    wait_for,
    wait_for_network_data,
    wait_until,
)

__all__ = [
    "FORCE_POLLING_ENVIRONMENT_VARIABLE",
    "NETWORK_FIELDS",
    "Condition",
    "MetadataEvent",
    "MetadataEventKind",
    "StopEvent",
    "awatch_claim_metadata",
    "awatch_metadata_file",
    "awatch_template_metadata",
    "network_data_condition",
    "wait_for",
    "wait_for_network_data",
    "wait_until",
    "watch_claim_metadata",
    "watch_metadata_file",
    "watch_template_metadata",
]
