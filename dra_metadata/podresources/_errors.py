"""The errors of the PodResources client: one subclass of PodResourcesError per failure.

Every one names the socket and says what to do next; nothing raised by grpc leaves this
package (``_client`` turns a gRPC status into one of these, ``_socket`` looks at the path when
no one answered).
"""

from __future__ import annotations

from dra_metadata._model._errors import (
    DeviceMetadataError,
    MetadataNotFoundError,
    PodResourcesError,
)

INSTALL_HINT = (
    "pip install 'dra-metadata[podresources]' (from a checkout of dra-metadata: pip install "
    "'.[podresources]'; from a wheel: pip install 'dra_metadata-<version>-*.whl[podresources]')"
)
EXTRA = "podresources"

__all__ = [
    "PodNotFoundError",
    "PodResourcesConnectionError",
    "PodResourcesError",
    "PodResourcesNotInstalledError",
    "PodResourcesPermissionError",
    "PodResourcesServerError",
    "PodResourcesSocketNotFoundError",
    "PodResourcesTimeoutError",
    "PodResourcesUnimplementedError",
]


class PodResourcesNotInstalledError(PodResourcesError):
    """The ``podresources`` extra (grpcio, protobuf) is not installed, or protobuf is too old.

    The message names the extra and the command that installs it.
    """


class PodResourcesSocketNotFoundError(PodResourcesError):
    """No socket at the path: in a container, the kubelet's ``pod-resources`` directory is not
    mounted (a hostPath volume), or the kubelet does not run there."""


class PodResourcesPermissionError(PodResourcesError):
    """The socket exists but this process may not connect to it (the kubelet's socket is
    root's, mode 0600: the container must run as root)."""


class PodResourcesConnectionError(PodResourcesError):
    """Nothing answers: a socket file no process listens on (the kubelet is down or made a
    new socket), a path that is no socket, or a peer that does not speak gRPC."""


class PodResourcesTimeoutError(PodResourcesError, TimeoutError):
    """No answer within ``timeout`` seconds (also a TimeoutError); `.timeout` is that limit."""

    def __init__(self, message: str, *, socket: str, method: str, timeout: float) -> None:
        PodResourcesError.__init__(
            self, message, socket=socket, method=method, code="DEADLINE_EXCEEDED"
        )
        self.timeout = timeout

    def __str__(self) -> str:
        return DeviceMetadataError.__str__(self)


class PodResourcesUnimplementedError(PodResourcesError):
    """The kubelet does not serve the method: too old for it, or the method is turned off
    (the feature gate ``KubeletPodResourcesGet`` for ``Get``)."""


class PodResourcesServerError(PodResourcesError):
    """The kubelet answered with an error this package has no better word for (its rate
    limit, an internal error); `.code` and `.details` are what it said."""

    def __init__(
        self, message: str, *, socket: str, method: str, code: str | None, details: str
    ) -> None:
        super().__init__(message, socket=socket, method=method, code=code)
        self.details = details


class PodNotFoundError(PodResourcesError, MetadataNotFoundError):
    """``get_pod_resources``: the kubelet has no such pod (also a MetadataNotFoundError).

    The kubelet knows only the pods of its own node that are running: a pod elsewhere, not
    started yet, or finished is not found. `.name` and `.namespace` are the pod asked for.
    """

    def __init__(
        self, message: str, *, socket: str, name: str, namespace: str, code: str | None
    ) -> None:
        MetadataNotFoundError.__init__(self, message, path=None)
        self.socket = socket
        self.method = "Get"
        self.code = code
        self.name = name
        self.namespace = namespace

    def __str__(self) -> str:
        return DeviceMetadataError.__str__(self)
