"""Watching and waiting: inotify events are hints, re-reading is the truth.

``_events`` (what a watch reports), ``_hub`` (the inotify instance a process or event loop
shares), ``_inotify`` (each watcher's hints of which paths changed), ``_engine``
(the state of each file and the scans), ``_pacing`` (pauses between scans), ``_functions``
(the public watch functions), ``_waits`` (waiting for a condition on the files) and
``_sources`` (the public waits, on the files or the Kubernetes API). This package only
re-exports.
May import: ``_model``, ``_decoding``, ``_reading``; ``kube`` only inside the waits on the API.
"""

from dra_metadata._model._conditions import Condition
from dra_metadata._watch._awaits import await_for, await_for_network_data, await_until
from dra_metadata._watch._events import MetadataEvent, MetadataEventKind, StopEvent
from dra_metadata._watch._functions import (
    awatch_claim_metadata,
    awatch_metadata_file,
    awatch_template_metadata,
    watch_claim_metadata,
    watch_metadata_file,
    watch_template_metadata,
)
from dra_metadata._watch._options import FORCE_POLLING_ENVIRONMENT_VARIABLE, WaitSource
from dra_metadata._watch._sources import wait_for, wait_for_network_data, wait_until
from dra_metadata._watch._waits import NETWORK_FIELDS, network_data_condition

__all__ = [
    "FORCE_POLLING_ENVIRONMENT_VARIABLE",
    "NETWORK_FIELDS",
    "Condition",
    "MetadataEvent",
    "MetadataEventKind",
    "StopEvent",
    "WaitSource",
    "await_for",
    "await_for_network_data",
    "await_until",
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
