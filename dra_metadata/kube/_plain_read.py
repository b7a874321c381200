"""A plain connection for a one-shot read, with the usual way behind each of its GETs.

With no ``client=`` and a configuration _plain_config accepts, the one-shot reads
(``read_claim_status``, ``read_template_claim_status``, ``read_device_health``) make their GETs
plainly (_plain_http: the standard library's sockets and TLS, no lightkube, httpx2 or asyncio
to import), which is what makes ``dra-metadata health --fail-on`` cheap enough for a probe that
runs every few seconds. Each GET it cannot serve is made the usual way (a connection of its own,
by the same deadline), so the answers and errors are the usual way's.
"""

from __future__ import annotations

from contextlib import contextmanager

from dra_metadata.kube._plain_config import plain_configuration
from dra_metadata.kube._plain_http import PlainConnection

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from lightkube import AsyncClient, Client

    from dra_metadata.kube._deadline import Deadline
    from dra_metadata.kube._errors import Target
    from dra_metadata.kube._http import Api


@contextmanager
def plainly(
    deadline: Deadline, client: Client | AsyncClient | None
) -> Iterator[PlainConnection | None]:
    """A plain connection to the configured server for the read's GETs by ``deadline`` (closed
    after the read), or None: with a ``client``, or a configuration for the usual way."""
    config = plain_configuration() if client is None else None
    if config is None:
        yield None
        return
    usual: list[Api] = []

    def the_usual_way(target: Target) -> Mapping[str, Any]:
        from dra_metadata.kube._http import connect, get_by_itself  # noqa: PLC0415

        if not usual:
            usual.append(connect(None))
        return get_by_itself(usual[0], deadline, target)

    connection = PlainConnection(config, deadline, the_usual_way)
    try:
        yield connection
    finally:
        connection.close()
