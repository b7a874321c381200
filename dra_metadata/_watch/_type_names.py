"""StopEvent and WaitSource: names for annotations, in a module of their own.

A Protocol and a Literal need typing, which a wait or a watch never imports otherwise: the watch
modules import these names for type checkers only, and ``dra_metadata.StopEvent`` and
``dra_metadata.WaitSource`` load this module.
"""

from typing import Literal, Protocol


class StopEvent(Protocol):
    """Anything with ``is_set()``: threading.Event, asyncio.Event, multiprocessing.Event.

    A watch or wait given one as ``stop_event`` ends once it is set: a threading.Event or
    multiprocessing.Event ends a watch or wait at once, an asyncio.Event an ``awatch_*`` or
    ``await_*`` at once; any other object is looked at every 100 ms.
    """

    def is_set(self) -> bool: ...


WaitSource = Literal["file", "api", "auto"]
"""Where a wait looks: the metadata files, the Kubernetes API, or the files where their
request directory exists in the container and else the API."""
