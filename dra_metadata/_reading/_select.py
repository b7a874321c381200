"""Which requests of a request directory's files a reader asked for.

A request directory is named after the top-level request, so it holds the metadata of every
subrequest the scheduler could have chosen from a prioritized list (``firstAvailable``); the
files carry the full name (``gpu/high-memory``). Asking for ``gpu/low-memory`` must not return
the ``gpu/high-memory`` device: a wrong "ready" is worse than an error.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dra_metadata._model._errors import MetadataNotFoundError, shown_names
from dra_metadata._model._metadata import DeviceMetadata


def select_request(metadata: DeviceMetadata, request_name: str, *, path: Path) -> DeviceMetadata:
    """The requests of ``metadata`` that ``request_name`` names.

    A top-level name (``gpu``) names everything its directory's files hold, as upstream reads
    it: the request and every subrequest of it. A subrequest name (``gpu/high-memory``) names
    that subrequest only; MetadataNotFoundError when the files hold requests but not that one,
    saying which subrequest was allocated instead. Files that hold no request at all
    contradict nothing: the result then has no requests either. ``sources`` keeps every file
    as it was read.
    """
    base, separator, _ = request_name.partition("/")
    requests = metadata.requests
    if not separator:
        return metadata
    chosen = tuple(request for request in requests if request.name == request_name)
    if len(chosen) == len(requests):
        return metadata
    if chosen:
        return replace(metadata, requests=chosen)
    names = list(dict.fromkeys(request.name for request in requests))
    allocated = [name for name in names if name.partition("/")[0] == base]
    if not allocated:
        message = f"the metadata files hold no request {base}, only: {shown_names(names)}"
    elif allocated == [base]:
        message = (
            f"request {base} has no subrequest {request_name}: it was allocated as a plain "
            f"request, read it as {base}"
        )
    else:
        which = shown_names(allocated, " and ")
        instead = f"{base} or {allocated[0]}" if len(allocated) == 1 else base
        message = (
            f"request {base} was allocated as {which}, not as {request_name} (the scheduler "
            f"chose another subrequest of its prioritized list); read it as {instead}"
        )
    raise MetadataNotFoundError(message, path=path)
