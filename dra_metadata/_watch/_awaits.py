"""The asyncio twins of the public waits: ``await`` them on the running event loop.

Same arguments, checks and errors as the synchronous waits of ``_sources``, whose planning
(``_plan``: which source, which condition) they share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dra_metadata._model._conditions import Condition
from dra_metadata._model._metadata import DeviceMetadata
from dra_metadata._model._models import Device
from dra_metadata._reading._paths import StrPath
from dra_metadata._reading._read import DEFAULT_MAX_SIZE
from dra_metadata._watch._sources import _for_devices, _for_network_data, _plan

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from lightkube import AsyncClient, Client

    from dra_metadata._watch._type_names import StopEvent, WaitSource


async def await_until(  # noqa: PLR0913 - the options of both sources, and progress reporting
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
    """The asyncio twin of wait_until: ``metadata = await await_until(...)``.

    Same options and errors. It waits on the running event loop (inotify's descriptor, or
    the API watch's connection), never in a thread; an asyncio.Event as ``stop_event`` is
    awaited. Cancelling the task ends the wait at once and closes its descriptors and
    connections.
    """
    return await _plan(
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
    ).arun()


async def await_for(  # noqa: PLR0913 - the options of both sources
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
    """The asyncio twin of wait_for: ``metadata = await await_for(predicate, ...)``.

    Same arguments and errors as wait_for; it waits on the running event loop as await_until
    does, and cancelling its task ends it at once.
    """
    return await _plan(
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
    ).arun()


async def await_for_network_data(  # noqa: PLR0913 - the options of both sources
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
    """The asyncio twin of wait_for_network_data: ``await await_for_network_data(...)``.

    Same arguments and errors as wait_for_network_data; it waits on the running event loop as
    await_until does, and cancelling its task ends it at once.

    Examples:
        >>> asyncio.run(dra_metadata.await_for_network_data("fast-net", "vf", timeout=120)).name
        'fast-net'
    """
    return await _plan(
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
    ).arun()
