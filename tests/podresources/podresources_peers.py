"""Real peers on real unix sockets for the failure modes of a PodResources call.

None of them is a kubelet: a path with nothing there, a socket file nobody listens on, a
listener that accepts and never answers, a gRPC server with no services. They fail a call the
way a broken deployment does. Sockets live in a short folder of /tmp: a unix socket's path is
limited to 107 bytes, which pytest's tmp_path can exceed.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager, suppress
from pathlib import Path

import grpc


@contextmanager
def socket_folder() -> Iterator[Path]:
    """A folder for sockets, readable and searchable by every user (mode 0755)."""
    folder = Path(tempfile.mkdtemp(prefix="dra-pr-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def dead_socket(path: Path) -> Path:
    """A socket file whose listener is gone (a kubelet that stopped or was restarted)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.close()
    return path


@contextmanager
def mute_listener(path: Path) -> Iterator[Path]:
    """A listener that accepts every connection and never writes a byte back."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        with suppress(OSError):  # wakes the accept() on Linux; says ENOTCONN elsewhere
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=10)
        for connection in held:
            connection.close()


@contextmanager
def grpc_server_without_services(path: Path) -> Iterator[Path]:
    """A real gRPC server that serves nothing: every method is UNIMPLEMENTED."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_insecure_port(f"unix:{path}")
    server.start()
    try:
        yield path
    finally:
        server.stop(grace=None).wait(timeout=10)
