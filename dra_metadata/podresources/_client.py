"""Calls of the kubelet's ``v1.PodResourcesLister``: one channel per call, every failure typed.

Each method is called by its path with ``channel.unary_unary`` and the generated message
classes (no generated gRPC stub). grpc and protobuf are imported at the first call, so that
importing dra_metadata.podresources costs no more than its models; without them the call
raises PodResourcesNotInstalledError naming the extra.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dra_metadata._model._errors import InvalidNameError, PodResourcesError
from dra_metadata.podresources._errors import (
    EXTRA,
    INSTALL_HINT,
    PodNotFoundError,
    PodResourcesNotInstalledError,
    PodResourcesServerError,
    PodResourcesTimeoutError,
    PodResourcesUnimplementedError,
)
from dra_metadata.podresources._socket import GUIDE, Socket, diagnose, option

if TYPE_CHECKING:
    from types import ModuleType

    from google.protobuf.message import Message

SERVICE = "v1.PodResourcesLister"
REQUEST_TIMEOUT_SECONDS = 10.0
"""The default ``timeout``: connecting and the whole answer must be done by then."""
MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""The largest answer taken (gRPC's default is 4 MiB): what the kubelet's own client takes, for
a List of a node with many pods."""
CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", MAX_ANSWER_BYTES),
    ("grpc.use_local_subchannel_pool", 1),  # a connection of its own, never another channel's
    ("grpc.enable_http_proxy", 0),
)
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NOT_FOUND = re.compile(r"pod \S+ in namespace \S+ not found")
"""What the kubelet's Get answers (status UNKNOWN) for a pod it does not have."""
_GET_DISABLED = "Get method disabled"
"""What the kubelet's Get answers (status UNKNOWN) when its feature gate is off."""
_NOT_SERVED = {
    "List": "a kubelet older than Kubernetes 1.20 (no v1 API), or not the kubelet's socket",
    "Get": "the kubelet is older than Kubernetes 1.27 or its feature gate "
    "KubeletPodResourcesGet is off; upgrade the kubelet or turn the gate on, or use List, "
    "which answers for every pod",
    "GetAllocatableResources": "the kubelet is older than Kubernetes 1.21 or its feature gate "
    "KubeletPodResourcesGetAllocatable is off; upgrade the kubelet or turn the gate on",
}
"""Why a kubelet does not serve a method, and what to do."""


@dataclass(frozen=True, slots=True)
class Method:
    """One method of the service: its name and the names of its message classes."""

    name: str
    request: str
    response: str

    @property
    def path(self) -> str:
        return f"/{SERVICE}/{self.name}"


LIST = Method("List", "ListPodResourcesRequest", "ListPodResourcesResponse")
GET = Method("Get", "GetPodResourcesRequest", "GetPodResourcesResponse")
ALLOCATABLE = Method(
    "GetAllocatableResources", "AllocatableResourcesRequest", "AllocatableResourcesResponse"
)


def checked_timeout(timeout: object) -> float | None:
    """A call's ``timeout=``: seconds > 0; math.inf waits as long as it takes (None for grpc)."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(
            f"timeout must be a number of seconds > 0 (math.inf: no limit), not {timeout!r}"
        )
    return None if math.isinf(timeout) else float(timeout)


def check_pod(name: object, namespace: object) -> tuple[str, str]:
    """A pod's name and namespace as the API accepts them, before anything is sent."""
    for argument, value, pattern, limit in (
        ("name", name, _DNS_SUBDOMAIN, 253),
        ("namespace", namespace, _DNS_LABEL, 63),
    ):
        if not isinstance(value, str):
            raise InvalidNameError(argument, value, f"must be a str, not {type(value).__name__}")
        if not value or len(value) > limit or not pattern.fullmatch(value):
            kind = "DNS label" if limit == 63 else "DNS subdomain"
            raise InvalidNameError(
                argument,
                value,
                f"a pod's {argument} is a {kind}: at most {limit} characters of a-z, 0-9, "
                f"{'-' if limit == 63 else '-, .'} starting and ending with a letter or digit",
            )
    return str(name), str(namespace)


@dataclass(frozen=True, slots=True)
class Loaded:
    """grpc and the generated messages, once imported."""

    grpc: ModuleType
    messages: ModuleType

    def request(self, method: Method, **fields: str) -> Message:
        message: Message = getattr(self.messages, method.request)(**fields)
        return message

    def response_class(self, method: Method) -> type[Message]:
        response: type[Message] = getattr(self.messages, method.response)
        return response


def load(socket: Socket, method: Method) -> Loaded:
    """Import grpc and the generated messages, or say which extra to install."""
    try:
        import grpc  # noqa: PLC0415 - the optional extra, on first use

        from dra_metadata.podresources._proto import api_pb2  # noqa: PLC0415
    except ImportError as error:
        raise PodResourcesNotInstalledError(
            f"the kubelet's PodResources API ({socket.describe()}) needs the {EXTRA!r} extra "
            f"of dra-metadata, grpcio and protobuf ({error}): {INSTALL_HINT}",
            socket=socket.path,
            method=method.name,
        ) from None
    except Exception as error:  # noqa: BLE001 - protobuf's VersionError: a runtime too old
        raise PodResourcesNotInstalledError(
            f"the kubelet's PodResources API ({socket.describe()}) cannot load its messages "
            f"with the protobuf installed ({type(error).__name__}: {error}); the {EXTRA!r} "
            f"extra needs protobuf>=6.31.1,<8: {INSTALL_HINT}",
            socket=socket.path,
            method=method.name,
        ) from None
    return Loaded(grpc, api_pb2)


def failure(
    socket: Socket,
    method: Method,
    timeout: float | None,
    code: str | None,
    details: str,
    pod: tuple[str, str] | None = None,
) -> PodResourcesError:
    """The error for a call that ended with the gRPC status ``code`` (its name) and details."""
    said = f"{code}: {details}" if details else str(code)
    if code == "UNAVAILABLE":
        return diagnose(socket, method.name, said)
    if code == "DEADLINE_EXCEEDED":
        assert timeout is not None  # noqa: S101 - gRPC has no deadline to pass without one
        return PodResourcesTimeoutError(
            f"no answer to {method.name} from the kubelet's PodResources socket "
            f"{socket.describe()} within {timeout:g} s: something accepts connections there "
            "but did not answer; check that the kubelet runs and is healthy (systemctl status "
            f"kubelet, journalctl -u kubelet), or pass a larger {option('timeout=', '--timeout')}",
            socket=socket.path,
            method=method.name,
            timeout=timeout,
        )
    if pod is not None and (code == "NOT_FOUND" or _NOT_FOUND.search(details)):
        name, namespace = pod
        return PodNotFoundError(
            f'the kubelet at {socket.describe()} has no pod "{name}" in namespace '
            f'"{namespace}" ({said}): it knows only the running pods of its own node; check the '
            "name, the namespace and the pod's node (kubectl get pod -o wide)",
            socket=socket.path,
            name=name,
            namespace=namespace,
            code=code,
        )
    if code == "UNIMPLEMENTED" or _GET_DISABLED in details:
        return PodResourcesUnimplementedError(
            f"the kubelet at {socket.describe()} does not serve {SERVICE}/{method.name} "
            f"({said}): {_NOT_SERVED[method.name]}",
            socket=socket.path,
            method=method.name,
            code=code,
        )
    hint = (
        ": the kubelet's rate limit (about 100 calls a second); call less often"
        if code == "RESOURCE_EXHAUSTED"
        else f"; see the kubelet's log (journalctl -u kubelet) and {GUIDE}"
    )
    return PodResourcesServerError(
        f"the kubelet at {socket.describe()} answered {method.name} with {said}{hint}",
        socket=socket.path,
        method=method.name,
        code=code,
        details=details,
    )


def _status(error: BaseException) -> tuple[str | None, str]:
    """(code name, details) of a failed call: a grpc.Call (sync) or grpc.aio.Call (asyncio)."""
    code_of, details_of = getattr(error, "code", None), getattr(error, "details", None)
    if not callable(code_of) or not callable(details_of):
        return None, str(error)
    code = code_of()
    return getattr(code, "name", None), str(details_of() or "")


def call(
    socket: Socket,
    method: Method,
    timeout: float | None,
    fields: dict[str, str] | None = None,
    pod: tuple[str, str] | None = None,
) -> Any:
    """One call on a channel of its own; the response message, or a PodResourcesError."""
    loaded = load(socket, method)
    grpc: Any = loaded.grpc
    request = loaded.request(method, **(fields or {}))
    with grpc.insecure_channel(socket.target, options=CHANNEL_OPTIONS) as channel:
        stub = channel.unary_unary(
            method.path,
            request_serializer=type(request).SerializeToString,
            response_deserializer=loaded.response_class(method).FromString,
        )
        try:
            return stub(request, timeout=timeout)
        except grpc.RpcError as error:
            code, details = _status(error)
            raise failure(socket, method, timeout, code, details, pod) from None


async def acall(
    socket: Socket,
    method: Method,
    timeout: float | None,
    fields: dict[str, str] | None = None,
    pod: tuple[str, str] | None = None,
) -> Any:
    """call()'s asyncio twin, on a grpc.aio channel."""
    loaded = load(socket, method)
    grpc: Any = loaded.grpc
    request = loaded.request(method, **(fields or {}))
    async with grpc.aio.insecure_channel(socket.target, options=CHANNEL_OPTIONS) as channel:
        stub = channel.unary_unary(
            method.path,
            request_serializer=type(request).SerializeToString,
            response_deserializer=loaded.response_class(method).FromString,
        )
        try:
            return await stub(request, timeout=timeout)
        except grpc.RpcError as error:
            code, details = _status(error)
            raise failure(socket, method, timeout, code, details, pod) from None
