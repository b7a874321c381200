"""The public waits, sync and asyncio twins, on the metadata files or on the Kubernetes API.

``source`` chooses where a wait looks: "file" (the default) at the files of the request
directory (``_waits``), "api" at a watch of the claim's status (``dra_metadata.kube``, imported
only then), "auto" at the files when the request directory exists in the container, else at
the API. Every option is checked at the call; one that the chosen source would not use is
refused (ValueError) instead of being silently ignored.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from dra_metadata._model._conditions import Condition
from dra_metadata._model._metadata import DeviceMetadata
from dra_metadata._model._models import Device
from dra_metadata._reading._paths import StrPath, request_dir
from dra_metadata._reading._read import DEFAULT_MAX_SIZE
from dra_metadata._watch._engine import unreadable
from dra_metadata._watch._options import WAIT_SOURCES
from dra_metadata._watch._waits import (
    FileWait,
    device_condition,
    network_data_condition,
    required_fields,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Literal, Protocol

    from lightkube import AsyncClient, Client

    from dra_metadata._watch._type_names import StopEvent, WaitSource

    _Chosen = Literal["file", "api"]
    _ConditionFor = Callable[[_Chosen], Condition]

    class _Wait(Protocol):
        def run(self) -> DeviceMetadata: ...

        async def arun(self) -> DeviceMetadata: ...


DEFAULT_POLL_INTERVAL = 1.0
"""Seconds between re-reads of the files when no ``poll_interval`` is given."""


def _given(options: dict[str, object]) -> str:
    return ", ".join(name for name, value in options.items() if value is not None)


def _request_directory_exists(
    claim_name: str, request_name: str, *, template: bool, root: StrPath | None
) -> bool:
    """Whether the request directory is there (source "auto"); names are checked first."""
    directory = request_dir(claim_name, request_name, template=template, root=root)
    try:
        os.stat(directory)  # noqa: PTH116 - one system call, its errno decides
    except FileNotFoundError:
        return False
    except OSError as error:  # not "absent": a root that is a file, permission denied, ...
        raise unreadable(directory, "look for the request directory", error) from None
    return True


def chosen_source(
    source: WaitSource,
    claim_name: str,
    request_name: str,
    *,
    template: bool,
    root: StrPath | None,
    file_options: dict[str, object],
    api_options: dict[str, object],
) -> _Chosen:
    """The source to wait on: ``source`` itself, or what "auto" finds.

    Options that only the other source uses (given: not None) are a ValueError.
    """
    if source not in WAIT_SOURCES:
        raise ValueError(f"source must be 'file', 'api' or 'auto', not {source!r}")
    if source == "file" and _given(api_options):
        raise ValueError(
            f"{_given(api_options)}: only for the Kubernetes API (source='api' or 'auto'), "
            "not for source='file'"
        )
    if source == "api" and _given(file_options):
        raise ValueError(
            f"{_given(file_options)}: only for metadata files (source='file' or 'auto'), not "
            "for source='api'"
        )
    if source == "auto":
        exists = _request_directory_exists(claim_name, request_name, template=template, root=root)
        return "file" if exists else "api"
    return source


def _plan(  # noqa: PLR0913 - every option of every source
    condition_for: _ConditionFor,
    claim_name: str,
    request_name: str,
    *,
    template: bool,
    driver: str | None,
    root: StrPath | None,
    timeout: float | None,
    poll_interval: float | None,
    force_polling: bool | None,
    stop_event: StopEvent | None,
    max_size: int,
    progress: Callable[[str], None] | None,
    progress_interval: float,
    source: WaitSource,
    pod_name: str | None,
    namespace: str | None,
    client: Client | AsyncClient | None,
) -> _Wait:
    chosen = chosen_source(
        source,
        claim_name,
        request_name,
        template=template,
        root=root,
        file_options={
            "root": root,
            "poll_interval": poll_interval,
            "force_polling": force_polling,
            "max_size": None if max_size == DEFAULT_MAX_SIZE else max_size,
        },
        api_options={"pod_name": pod_name, "namespace": namespace, "client": client},
    )
    if chosen == "file":
        return FileWait.checked(
            condition_for("file"),
            claim_name,
            request_name,
            template=template,
            driver=driver,
            root=root,
            timeout=timeout,
            poll_interval=DEFAULT_POLL_INTERVAL if poll_interval is None else poll_interval,
            force_polling=force_polling,
            max_size=max_size,
            stop_event=stop_event,
            progress=progress,
            progress_interval=progress_interval,
        )
    from dra_metadata.kube._wait import api_wait  # noqa: PLC0415 - lightkube only for the API

    return api_wait(
        condition_for("api"),
        claim_name,
        request_name,
        template=template,
        driver=driver,
        pod_name=pod_name,
        namespace=namespace,
        client=client,
        timeout=timeout,
        stop_event=stop_event,
        progress=progress,
        progress_interval=progress_interval,
    )


def _for_devices(predicate: Callable[[Device], bool]) -> _ConditionFor:
    def condition_for(chosen: _Chosen) -> Condition:
        if chosen == "file":
            return device_condition(predicate)
        from dra_metadata.kube import _wait  # noqa: PLC0415

        return _wait.device_condition(predicate)

    return condition_for


def _for_network_data(required: str | Iterable[str]) -> _ConditionFor:
    require = required_fields(required)
    network_data_condition(require)  # unknown fields: a ValueError at the call, whatever source

    def condition_for(chosen: _Chosen) -> Condition:
        if chosen == "file":
            return network_data_condition(require)
        from dra_metadata.kube import _wait  # noqa: PLC0415

        return _wait.network_data_condition(require)

    return condition_for


def wait_until(  # noqa: PLR0913 - the options of both sources, and progress reporting
    condition: Condition,
    claim_name: str,
    request_name: str,
    *,
    template: bool = False,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None,
    poll_interval: float | None = None,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
    progress: Callable[[str], None] | None = None,
    progress_interval: float = 5.0,
    source: WaitSource = "file",
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
) -> DeviceMetadata:
    """Wait until ``condition(metadata)`` returns None or True (ready); return that metadata.

    Otherwise ``condition`` returns a sentence saying why the metadata is not ready (or False:
    the reason is then "the condition returned False"); any other answer is a TypeError,
    raised the first time it comes back. The condition is asked again whenever the files have
    been looked at (or the claim's status changed), and its sentence ends up in the
    WaitTimeoutError raised after ``timeout`` seconds (None waits for ever) or when
    ``stop_event`` is set, with the last metadata seen. With the files, StaleMetadataError is
    raised as soon as a file the metadata comes from is a stale view (replaced on the host:
    this container can no longer see updates), whether or not the condition holds in it; it
    carries that metadata. MetadataReadError and MetadataDecodeError as the watch functions
    raise them. ``progress`` is called with that sentence every
    ``progress_interval`` seconds while waiting.

    ``source="file"`` (the default) waits on the request directory's files (``root``,
    ``poll_interval``: 1 s, ``force_polling``, ``max_size``: the size limit of each file, 4 MiB
    by default, as for read_metadata_file; a larger file raises MetadataTooLargeError);
    ``"api"`` on a watch of the ResourceClaim through the Kubernetes API (``pod_name``,
    ``namespace``, ``client`` as in dra_metadata.kube; MetadataNotFoundError for a claim or
    request that does not exist, KubeAPIError when the API refuses or cannot be reached);
    ``"auto"`` on the files when the request directory exists in this container, else on the
    API. An option of the other source is a ValueError (``max_size`` counts as given when it
    is not the default).

    Args:
        condition: ``condition(metadata)``: None or True when ready, else why not (a
            sentence) or False.
        claim_name: The claim's name; with ``template=True`` the pod's name for a claim made
            from a ResourceClaimTemplate (``spec.resourceClaims[].name``).
        request_name: The request (``gpu``) or one subrequest of it (``gpu/high-memory``).
        driver: Only this driver's file (or devices); by default every driver's, merged.
        timeout: Seconds to wait at most (required; None: no limit).

    Examples:
        >>> metadata = dra_metadata.wait_until(
        ...     lambda m: None if m.generation >= 2 else f"generation {m.generation}",
        ...     "fast-net",
        ...     "vf",
        ...     driver="sriov.example.com",
        ...     timeout=60,
        ... )
        >>> metadata.generation
        2
        >>> dra_metadata.wait_until(lambda m: m.generation >= 2, "fast-net", "vf", timeout=60).name
        'fast-net'
    """
    return _plan(
        lambda _: condition,
        claim_name,
        request_name,
        template=template,
        driver=driver,
        root=root,
        timeout=timeout,
        poll_interval=poll_interval,
        force_polling=force_polling,
        stop_event=stop_event,
        max_size=max_size,
        progress=progress,
        progress_interval=progress_interval,
        source=source,
        pod_name=pod_name,
        namespace=namespace,
        client=client,
    ).run()


def wait_for(  # noqa: PLR0913 - the options of both sources
    predicate: Callable[[Device], bool],
    claim_name: str,
    request_name: str,
    *,
    template: bool = False,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None,
    poll_interval: float | None = None,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
    source: WaitSource = "file",
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
) -> DeviceMetadata:
    """Wait until every device of the request satisfies ``predicate``; return the metadata.

    ``predicate(device)`` answers True or False (or anything with a truth value), but not a
    str: a sentence saying why not is a wait_until condition's answer, and a TypeError here.
    ``template=True`` names a claim made from a template by its pod claim name. Raises
    WaitTimeoutError (a TimeoutError) with the last metadata seen and the reason, or
    StaleMetadataError. ``source`` and the other options as for wait_until.

    Examples:
        >>> metadata = dra_metadata.wait_for(
        ...     lambda device: device.attribute("uuid") is not None,
        ...     "training-gpus",
        ...     "gpu",
        ...     driver="gpu.example.com",
        ...     timeout=60,
        ... )
        >>> len(metadata.devices)
        2
    """
    return _plan(
        _for_devices(predicate),
        claim_name,
        request_name,
        template=template,
        driver=driver,
        root=root,
        timeout=timeout,
        poll_interval=poll_interval,
        force_polling=force_polling,
        stop_event=stop_event,
        max_size=max_size,
        progress=None,
        progress_interval=5.0,
        source=source,
        pod_name=pod_name,
        namespace=namespace,
        client=client,
    ).run()


def wait_for_network_data(  # noqa: PLR0913 - the options of both sources
    claim_name: str,
    request_name: str,
    *,
    template: bool = False,
    driver: str | None = None,
    root: StrPath | None = None,
    timeout: float | None,
    require: str | Iterable[str] = ("interface_name",),
    poll_interval: float | None = None,
    force_polling: bool | None = None,
    stop_event: StopEvent | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
    source: WaitSource = "file",
    pod_name: str | None = None,
    namespace: str | None = None,
    client: Client | AsyncClient | None = None,
) -> DeviceMetadata:
    """Wait until every device of the request has network data with the ``require``d fields.

    Which fields are required is the caller's choice (IPs can legitimately be empty without
    IPAM): any of "interface_name", "ips", "hardware_address", as one name (``require="ips"``)
    or an iterable of names; anything else is a TypeError. For drivers that publish
    network data only in the claim's status (DraNet), wait with ``source="api"`` (or
    ``"auto"``). Raises as wait_for does.

    Examples:
        >>> metadata = dra_metadata.wait_for_network_data(
        ...     "fast-net", "vf", timeout=120, require=("interface_name", "ips")
        ... )
        >>> metadata.devices[0].network_data.interface_name
        'net1'
    """
    return _plan(
        _for_network_data(require),
        claim_name,
        request_name,
        template=template,
        driver=driver,
        root=root,
        timeout=timeout,
        poll_interval=poll_interval,
        force_polling=force_polling,
        stop_event=stop_event,
        max_size=max_size,
        progress=None,
        progress_interval=5.0,
        source=source,
        pod_name=pod_name,
        namespace=namespace,
        client=client,
    ).run()
