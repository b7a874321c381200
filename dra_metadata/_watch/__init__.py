"""Watching and waiting: inotify events are hints, re-reading is the truth.

``_events`` (what a watch reports), ``_hub`` (the inotify instance a process or event loop
shares), ``_inotify`` (each watcher's hints of which paths changed), ``_engine``
(the state of each file and the scans), ``_pacing`` (pauses between scans), ``_functions``
(the public watch functions), ``_waits`` (waiting for a condition on the files), ``_sources``
and ``_awaits`` (the public waits, sync and asyncio, on the files or the Kubernetes API),
``_options`` (the checks of their options) and ``_type_names`` (StopEvent, WaitSource).
Nothing is imported here: ``dra_metadata`` loads each public name from its own module, so a
wait loads neither the watch functions nor the asyncio waits.
May import: ``_model``, ``_decoding``, ``_reading``; ``kube`` only inside the waits on the API.
"""
