"""Which socket, and what is wrong with it when gRPC cannot use it.

The socket: the ``socket=`` argument, else ``$DRA_METADATA_PODRESOURCES_SOCKET`` (looked up at
every call; empty counts as unset), else the kubelet's own path. When a call finds no one
answering, ``diagnose`` looks at the path with plain system calls (stat, one connect) to say
which of the usual deployment mistakes it is; gRPC's own words for them vary between releases.
"""

from __future__ import annotations

import errno
import os
import socket as _socket_module
import stat
from dataclasses import dataclass
from pathlib import Path

from dra_metadata._model._errors import PodResourcesError
from dra_metadata._reading._missing import WORDING
from dra_metadata.podresources._errors import (
    PodResourcesConnectionError,
    PodResourcesPermissionError,
    PodResourcesSocketNotFoundError,
)

SOCKET_ENVIRONMENT_VARIABLE = "DRA_METADATA_PODRESOURCES_SOCKET"
"""Names the kubelet's PodResources socket when no ``socket=`` (``--socket``) is given."""
DEFAULT_SOCKET = "/var/lib/kubelet/pod-resources/kubelet.sock"
"""Where the kubelet serves the PodResources API (its ``pod-resources`` directory)."""
HOST_PATH_DIRECTORY = "/var/lib/kubelet/pod-resources"
"""The node's directory a node agent mounts (hostPath), at the same path in its container."""
GUIDE = "docs/guides/node-agents.md"
EXAMPLE = "examples/kubernetes/node-agent-daemonset.yaml in the dra-metadata sources"

_CONNECT_SECONDS = 1.0
"""The most the diagnosis's own connect may take (a unix socket answers at once)."""


@dataclass(frozen=True, slots=True)
class Socket:
    """The socket a call uses and where that choice came from (for messages)."""

    path: str
    origin: str  # "argument", "environment" or "default"

    @property
    def target(self) -> str:
        """gRPC's name for it: ``unix:`` and the absolute path."""
        return f"unix:{Path(self.path).absolute()}"

    def describe(self) -> str:
        """The socket as messages name it: its path, and where it came from."""
        if self.origin == "environment":
            return f"{self.path} (from ${SOCKET_ENVIRONMENT_VARIABLE})"
        if self.origin == "default":
            return f"{self.path} (the kubelet's default)"
        return self.path


def resolve_socket(socket: str | os.PathLike[str] | None) -> Socket:
    """The socket of a call: the argument > $DRA_METADATA_PODRESOURCES_SOCKET > the default."""
    if socket is not None:
        path = os.fspath(socket)
        if not isinstance(path, str) or not path:
            raise ValueError(f"socket must be a non-empty path, not {socket!r}")
        return Socket(path, "argument")
    from_environment = os.environ.get(SOCKET_ENVIRONMENT_VARIABLE)
    if from_environment:
        return Socket(from_environment, "environment")
    return Socket(DEFAULT_SOCKET, "default")


def option(python: str, command: str) -> str:
    """A hint's words: the Python argument's name, or the command's option."""
    return command if WORDING.get() == "command" else python


def elsewhere(socket: Socket) -> str:
    """How to name another socket, in the caller's words ("" when the caller named this one)."""
    if socket.origin == "argument":
        return ""
    return (
        f"; to use another socket, pass {option('socket=', '--socket')} or set "
        f"${SOCKET_ENVIRONMENT_VARIABLE}"
    )


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "no socket"


def _not_found(socket: Socket, method: str) -> PodResourcesError:
    directory = Path(socket.path).parent
    if socket.path == DEFAULT_SOCKET or Path(socket.path).parent == Path(HOST_PATH_DIRECTORY):
        where = (
            f"mount the node's {HOST_PATH_DIRECTORY} as a hostPath volume at the same path "
            f"(see the DaemonSet in {EXAMPLE}) and check that the kubelet runs on the node"
        )
    else:
        where = "check the path, and that the kubelet runs"
    if not directory.is_dir():
        what = f"neither it nor its directory {directory} exists"
    else:
        what = "no such socket"
    return PodResourcesSocketNotFoundError(
        f"cannot reach the kubelet's PodResources API at {socket.describe()}: {what}; {where}"
        f"{elsewhere(socket)}",
        socket=socket.path,
        method=method,
        code="UNAVAILABLE",
    )


def _permission(socket: Socket, method: str, step: str) -> PodResourcesError:
    who = f"uid {os.geteuid()}, gid {os.getegid()}"
    return PodResourcesPermissionError(
        f"permission denied {step} the kubelet's PodResources socket {socket.describe()} "
        f"(running as {who}): the socket is the kubelet's, root's with mode 0600 on most "
        "nodes, so the node agent's container must run as root (securityContext runAsUser: 0, "
        f"see {EXAMPLE}); under SELinux it also needs a type allowed to connect to it "
        "(seLinuxOptions, e.g. spc_t)",
        socket=socket.path,
        method=method,
        code="UNAVAILABLE",
    )


def diagnose(socket: Socket, method: str, grpc_details: str) -> PodResourcesError:
    """The error for a call gRPC found no one to answer (UNAVAILABLE): what the path is."""
    try:
        mode = Path(socket.path).stat().st_mode
    except FileNotFoundError:
        return _not_found(socket, method)
    except PermissionError:
        return _permission(socket, method, "looking up")
    except OSError as error:
        return PodResourcesConnectionError(
            f"cannot reach the kubelet's PodResources API at {socket.describe()}: "
            f"{error.strerror}{elsewhere(socket)}",
            socket=socket.path,
            method=method,
            code="UNAVAILABLE",
        )
    if not stat.S_ISSOCK(mode):
        return PodResourcesConnectionError(
            f"cannot reach the kubelet's PodResources API at {socket.describe()}: it is "
            f"{_kind(mode)}, not a socket; a hostPath volume of the socket's directory "
            f"({HOST_PATH_DIRECTORY}) shows the kubelet's socket, one of the socket itself "
            f"can show a stale copy{elsewhere(socket)}",
            socket=socket.path,
            method=method,
            code="UNAVAILABLE",
        )
    return _diagnose_connect(socket, method, grpc_details)


def _diagnose_connect(socket: Socket, method: str, grpc_details: str) -> PodResourcesError:
    """diagnose() for a path that is a socket: what one plain connect to it says."""
    problem = _connect(socket.path)
    if problem in {errno.EACCES, errno.EPERM}:
        return _permission(socket, method, "connecting to")
    if problem == errno.ECONNREFUSED:
        return PodResourcesConnectionError(
            f"nothing answers on the kubelet's PodResources socket {socket.describe()}: the "
            "socket file is there but no process listens on it; the kubelet is not running "
            "or was restarted and made a new socket that this mount does not show (mount the "
            f"directory {HOST_PATH_DIRECTORY}, not the socket file); check the kubelet "
            "(systemctl status kubelet)",
            socket=socket.path,
            method=method,
            code="UNAVAILABLE",
        )
    if problem == errno.ENOENT:
        return _not_found(socket, method)
    return PodResourcesConnectionError(
        f"the kubelet's PodResources API at {socket.describe()} cannot be used: a process "
        f"accepts connections there but the gRPC call failed ({grpc_details}); check that it "
        f"is the kubelet's socket{elsewhere(socket)}",
        socket=socket.path,
        method=method,
        code="UNAVAILABLE",
    )


def _connect(path: str) -> int | None:
    """The errno of one plain connect to the socket, None when it connects."""
    probe = _socket_module.socket(_socket_module.AF_UNIX, _socket_module.SOCK_STREAM)
    probe.settimeout(_CONNECT_SECONDS)
    try:
        probe.connect(path)
    except OSError as error:
        return error.errno if error.errno is not None else errno.EIO
    finally:
        probe.close()
    return None
