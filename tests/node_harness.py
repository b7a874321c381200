"""A real single-node Kubernetes cluster for the in-pod and kubelet tests.

``DRA_METADATA_NODE_ASSETS`` names a folder holding ``bin/`` (containerd,
containerd-shim-runc-v2, runc, ctr, etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kubelet and the upstream e2e DRA test driver, ``test-driver``, or
``test-driver-health``, the same driver able to report device health), ``cni/`` (the
bridge, host-local and loopback CNI plugins) and ``images/busybox-images.tar`` (the local
images ``localhost/busybox:1.37`` and ``localhost/pause:busybox``), as envtest's
``KUBEBUILDER_ASSETS`` names its binaries; without it the tests are skipped, saying so.

The node needs root and owns machine-wide names (the bridge, the state directory), so one node
runs at a time: ``running`` takes a lock first. Every process runs in its own process group
and is stopped by its PID; the state directory is wiped before the start and after the stop,
with the bridge, the mounts and the cgroups the run made. The files the processes read are
written by ``node_config``; what the run changes on the machine is ``node_machine``'s.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx2
import orjson

import node_config
import node_machine
from node_config import ADMIN_TOKEN, BRIDGE_ADDRESS, KUBELET_TOKEN, NODE_NAME

ASSETS_VARIABLE = "DRA_METADATA_NODE_ASSETS"
BINARIES = (
    "containerd",
    "containerd-shim-runc-v2",
    "runc",
    "ctr",
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
)
DRIVERS = ("test-driver-health", "test-driver")
"""The upstream e2e DRA test driver; the first is the one with ``--device-health-file``."""
IMAGES = "images/busybox-images.tar"
CNI_PLUGINS = ("bridge", "host-local", "loopback")
SKIP_REASON = (
    f"no real node to test on: set {ASSETS_VARIABLE} to a folder holding bin/ "
    f"({', '.join(BINARIES)} and the e2e DRA test driver, {' or '.join(DRIVERS)}), "
    f"cni/ ({', '.join(CNI_PLUGINS)}) and {IMAGES}; the tests run as root "
    "(docs/development.md)"
)
DRIVER_NAME = node_config.DRIVER_NAME
STATE = Path("/var/lib/dra-metadata-node")
"""Short and fixed: unix socket paths must stay under 108 bytes, and a run that was killed is
found and wiped by the next."""
LOCK = Path("/var/lib/dra-metadata-node.lock")
STARTUP_TIMEOUT = 180.0


def assets() -> Path | None:
    """The assets folder, or None when it is not named or lacks a file, or this is not root."""
    value = os.environ.get(ASSETS_VARIABLE)
    if not value or os.geteuid() != 0:
        return None
    folder = Path(value)
    needed = [folder / "bin" / name for name in BINARIES]
    needed += [folder / "cni" / name for name in CNI_PLUGINS]
    needed.append(folder / IMAGES)
    if not all(path.is_file() for path in needed):
        return None
    if not any((folder / "bin" / name).is_file() for name in DRIVERS):
        return None
    return folder


def missing_assets() -> str:
    """What ``assets()`` looked for and did not find, for a skip reason."""
    value = os.environ.get(ASSETS_VARIABLE)
    if not value:
        return SKIP_REASON
    if os.geteuid() != 0:
        return f"the real node needs root ({ASSETS_VARIABLE} is set)"
    folder = Path(value)
    names = [f"bin/{name}" for name in BINARIES] + [f"cni/{name}" for name in CNI_PLUGINS]
    missing = [name for name in [*names, IMAGES] if not (folder / name).is_file()]
    if not any((folder / "bin" / name).is_file() for name in DRIVERS):
        missing.append(f"bin/{' or bin/'.join(DRIVERS)}")
    return f"{ASSETS_VARIABLE}={folder} lacks {', '.join(missing)}; {SKIP_REASON}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(what: str, ready: Callable[[], bool], timeout: float, log: Path) -> float:
    """Poll ``ready`` until it holds; the seconds it took. Raises naming ``what`` and the log."""
    started = time.monotonic()
    while not ready():
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{what} not ready in {timeout:.0f} s; see {log}")
        time.sleep(0.05)
    return time.monotonic() - started


@dataclass
class Process:
    """One of the node's processes, in its own process group, its output in ``<name>.log``."""

    name: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    logs: Path
    """Where its log is to be read (after the stop: where the logs are kept)."""

    def check(self) -> None:
        if self.process.poll() is not None:
            raise RuntimeError(
                f"{self.name} exited with {self.process.returncode}; see {self.logs}/"
                f"{self.name}.log"
            )

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM to the group, SIGKILL after ``grace`` seconds."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        with contextlib.suppress(ProcessLookupError):  # what the group left behind
            os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


@dataclass
class Node:
    """The cluster: start with ``start()``, stop with ``stop()``; ``admin`` is an httpx2 client
    of the API server as an admin, ``timings`` the seconds each part took to be ready."""

    assets: Path
    state: Path = STATE
    api_port: int = field(default_factory=free_port)
    processes: dict[str, Process] = field(default_factory=dict)
    admin: httpx2.Client | None = None
    timings: dict[str, float] = field(default_factory=dict)
    keep_logs: Path | None = None
    """Where the processes' logs (and ``timings.json``) are copied before the state directory
    is wiped."""
    _made: list[Path] = field(default_factory=list)
    """Machine paths the run created (outside the state directory), removed at the stop."""

    @property
    def bin(self) -> Path:
        return self.assets / "bin"

    @property
    def driver_binary(self) -> Path:
        return next(self.bin / name for name in DRIVERS if (self.bin / name).is_file())

    @property
    def health_controllable(self) -> bool:
        """The driver reads ``device_health_file`` (``test-driver-health``)."""
        return self.driver_binary.name == "test-driver-health"

    @property
    def device_health_file(self) -> Path:
        return self.state / "device-health"

    @property
    def api_url(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    @property
    def api_ca(self) -> Path:
        """The API server's self-signed certificate and its CA (kube-apiserver writes both)."""
        return self.state / "apiserver-certs" / "apiserver.crt"

    @property
    def log_folder(self) -> Path:
        """Where the processes' logs can be read once the run has ended."""
        return self.keep_logs or self.state / "logs"

    @property
    def podresources_socket(self) -> Path:
        return node_config.kubelet_root(self.state) / "pod-resources" / "kubelet.sock"

    # Starting -------------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Process:
        logs = self.state / "logs"
        logs.mkdir(exist_ok=True)
        log = (logs / f"{name}.log").open("ab")
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        (self.state / "pids").mkdir(exist_ok=True)
        (self.state / "pids" / name).write_text(str(process.pid))
        self.processes[name] = Process(name, process, log, self.log_folder)
        return self.processes[name]

    def _timed(
        self, name: str, ready: Callable[[], bool], timeout: float = STARTUP_TIMEOUT
    ) -> None:
        process = self.processes.get(name)

        def check() -> bool:
            if process is not None:
                process.check()
            return ready()

        self.timings[name] = _wait(name, check, timeout, self.log_folder / f"{name}.log")

    def start(self) -> None:
        started = time.monotonic()
        node_machine.wipe(self.state)
        self.state.mkdir(parents=True)
        self._made = [path for path in node_machine.machine_paths() if not path.exists()]
        node_machine.bridge_up()
        certs = node_config.certificates(self.state / "certs")
        self._start_containerd()
        self._start_control_plane(certs)
        self._start_kubelet(certs)
        self._start_driver()
        self.timings["total"] = time.monotonic() - started

    def _start_containerd(self) -> None:
        config = node_config.containerd_config(self.state, self.bin, self.assets / "cni")
        node_config.cni_config(self.state)
        node_config.CDI_DIR.mkdir(parents=True, exist_ok=True)
        path = f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        self._spawn("containerd", [str(self.bin / "containerd"), "--config", str(config)],
                    {"PATH": path})  # fmt: skip
        address = node_config.containerd_socket(self.state)
        self._timed("containerd", lambda: node_machine.unix_answers(address))
        subprocess.run(
            [str(self.bin / "ctr"), "--address", str(address), "-n", "k8s.io", "images",
             "import", str(self.assets / IMAGES)],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip

    def _start_control_plane(self, certs: Path) -> None:
        etcd_port, peer_port = free_port(), free_port()
        self._spawn(
            "etcd",
            [
                str(self.bin / "etcd"),
                f"--data-dir={self.state / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=default=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync",
                "--log-level=error",
            ],
        )
        (self.state / "tokens.csv").write_text(node_config.TOKENS)
        key = certs / "service-account.key"
        self._spawn(
            "kube-apiserver",
            [
                str(self.bin / "kube-apiserver"),
                "--bind-address=127.0.0.1",
                f"--advertise-address={BRIDGE_ADDRESS}",
                f"--secure-port={self.api_port}",
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                f"--cert-dir={self.state / 'apiserver-certs'}",
                f"--token-auth-file={self.state / 'tokens.csv'}",
                "--authorization-mode=Node,RBAC",
                "--enable-admission-plugins=NodeRestriction",
                # The pods mount their ServiceAccount token explicitly (node_pod.py).
                "--disable-admission-plugins=ServiceAccount",
                f"--service-account-issuer={self.api_url}",
                f"--service-account-key-file={key}",
                f"--service-account-signing-key-file={key}",
                f"--api-audiences={self.api_url}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--endpoint-reconciler-type=none",
                f"--kubelet-certificate-authority={certs / 'ca.crt'}",
                f"--kubelet-client-certificate={certs / 'apiserver-kubelet-client.crt'}",
                f"--kubelet-client-key={certs / 'apiserver-kubelet-client.key'}",
                "--kubelet-preferred-address-types=InternalIP",
                "--v=0",
            ],
        )
        self._timed("kube-apiserver", self._api_ready)
        admin = node_config.kubeconfig(
            self.state / "admin.kubeconfig", self.api_url, self.api_ca, ADMIN_TOKEN
        )
        self._spawn(
            "kube-controller-manager",
            [
                str(self.bin / "kube-controller-manager"),
                *node_config.component_flags(admin, self.state / "kcm-certs", free_port()),
                # Claims from templates, and the node's not-ready taint lifted once it is Ready;
                # the rest of a cluster's controllers are not needed.
                "--controllers=resourceclaim-controller,node-lifecycle-controller",
                "--use-service-account-credentials=false",
            ],
        )
        self._spawn(
            "kube-scheduler",
            [
                str(self.bin / "kube-scheduler"),
                *node_config.component_flags(admin, self.state / "ks-certs", free_port()),
            ],
        )
        self.create(
            "/apis/resource.k8s.io/v1/deviceclasses",
            {
                "metadata": {"name": DRIVER_NAME},
                "spec": {
                    "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER_NAME}"'}}]
                },
            },
        )

    def _start_kubelet(self, certs: Path) -> None:
        kubeconfig = node_config.kubeconfig(
            self.state / "kubelet.kubeconfig", self.api_url, self.api_ca, KUBELET_TOKEN
        )
        config = node_config.kubelet_config(self.state, certs, free_port(), free_port())
        self._spawn(
            "kubelet",
            [
                str(self.bin / "kubelet"),
                f"--config={config}",
                f"--kubeconfig={kubeconfig}",
                f"--root-dir={node_config.kubelet_root(self.state)}",
                f"--cert-dir={self.state / 'kubelet-certs'}",
                f"--hostname-override={NODE_NAME}",
                f"--node-ip={BRIDGE_ADDRESS}",
                "--v=2",
            ],
        )
        self._timed("kubelet", self._node_ready)

    def restart_driver(self, health: str) -> None:
        """Stop the DRA driver and start it again, reporting ``health`` (a line of its health
        file: ``"Unhealthy ECC errors"``) from its first report on, as a driver restarted on a
        failed device does. Only for the driver whose health can be set."""
        assert self.health_controllable, "the upstream driver reports no health"
        self.processes.pop("driver").stop()
        self._start_driver(initial_health=health)

    def _start_driver(self, initial_health: str = "Healthy set by the node harness") -> None:
        root = node_config.kubelet_root(self.state)
        (root / "plugins" / DRIVER_NAME).mkdir(parents=True, exist_ok=True)
        argv = [
            str(self.driver_binary),
            f"--kubeconfig={self.state / 'admin.kubeconfig'}",
            "kubelet-plugin",
            f"--node-name={NODE_NAME}",
            "--enable-device-metadata",
            f"--cdi-dir={node_config.CDI_DIR}",
            f"--datadir={root / 'plugins'}",
            f"--plugin-registration-path={root / 'plugins_registry'}",
        ]
        if self.health_controllable:
            self.device_health_file.write_text(f"{initial_health}\n")
            argv += [f"--device-health-file={self.device_health_file}"]
        self._spawn("driver", argv)
        self._timed("driver", self._slice_published)

    # Readiness --------------------------------------------------------------------------------

    def _api_ready(self) -> bool:
        if self.admin is None and self.api_ca.exists():
            with contextlib.suppress(ssl.SSLError):  # still being written
                self.admin = httpx2.Client(
                    base_url=self.api_url,
                    verify=ssl.create_default_context(cafile=str(self.api_ca)),
                    headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                    timeout=30,
                )
        if self.admin is None:
            return False
        with contextlib.suppress(httpx2.TransportError):
            return self.admin.get("/readyz").status_code == 200
        return False

    def _node_ready(self) -> bool:
        node = self.get(f"/api/v1/nodes/{NODE_NAME}")
        conditions = (node or {}).get("status", {}).get("conditions", [])
        taints = (node or {}).get("spec", {}).get("taints", [])
        return not taints and any(
            c["type"] == "Ready" and c["status"] == "True" for c in conditions
        )

    def _slice_published(self) -> bool:
        slices = self.get(
            f"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver={DRIVER_NAME}"
        )
        return bool(slices and slices["items"])

    def check_running(self) -> None:
        for process in self.processes.values():
            process.check()

    # The API as the admin ----------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, *, content_type: str = "") -> Any:
        assert self.admin is not None
        headers = {"Content-Type": content_type or "application/json"}
        content = None if body is None else orjson.dumps(body)
        answer = self.admin.request(method, path, content=content, headers=headers)
        if answer.status_code >= 300:
            raise AssertionError(f"{method} {path}: HTTP {answer.status_code}: {answer.text}")
        return answer.json()

    def get(self, path: str) -> Any:
        """The object, or None when there is none (404)."""
        assert self.admin is not None
        answer = self.admin.get(path)
        if answer.status_code == 404:
            return None
        if answer.status_code >= 300:
            raise AssertionError(f"GET {path}: HTTP {answer.status_code}: {answer.text}")
        return answer.json()

    def create(self, path: str, body: dict[str, Any]) -> Any:
        return self.request("POST", path, body)

    def wait_for(self, what: str, ready: Callable[[], bool], timeout: float = 120.0) -> float:
        """Poll ``ready`` (checking that every process still runs); the seconds it took."""

        def check() -> bool:
            self.check_running()
            return ready()

        return _wait(what, check, timeout, self.log_folder)

    # Stopping ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Pods first (the kubelet unmounts their volumes), then every process by its PID in
        reverse order of start, then the containers containerd still runs, then the machine."""
        with contextlib.suppress(Exception):
            self._delete_pods()
        order = ["driver", "kubelet", "kube-scheduler", "kube-controller-manager"]
        for name in order:
            if name in self.processes:
                self.processes.pop(name).stop()
        if "containerd" in self.processes:
            self._kill_containers()
        for name in list(reversed(self.processes)):
            self.processes.pop(name).stop()
        if self.admin is not None:
            self.admin.close()
            self.admin = None
        if self.keep_logs is not None and (self.state / "logs").is_dir():
            (self.state / "logs" / "timings.json").write_bytes(
                orjson.dumps(self.timings, option=orjson.OPT_INDENT_2)
            )
            shutil.copytree(self.state / "logs", self.keep_logs, dirs_exist_ok=True)
        node_machine.wipe(self.state, self._made)

    def _delete_pods(self) -> None:
        if self.admin is None or "kubelet" not in self.processes:
            return
        pods = self.request("GET", "/api/v1/pods")["items"]
        for pod in pods:
            meta = pod["metadata"]
            self.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}")
        self.wait_for(
            "the pods' deletion", lambda: not self.request("GET", "/api/v1/pods")["items"], 60
        )

    def _kill_containers(self) -> None:
        """What the kubelet left running (a pod it had no time to stop), through containerd."""
        ctr = [
            str(self.bin / "ctr"),
            "--address",
            str(node_config.containerd_socket(self.state)),
            "-n",
            "k8s.io",
        ]
        listed = subprocess.run(
            [*ctr, "tasks", "ls", "-q"], check=False, capture_output=True, text=True
        )
        for task in listed.stdout.split():
            subprocess.run(
                [*ctr, "tasks", "kill", "-s", "SIGKILL", task], check=False, capture_output=True
            )
            subprocess.run([*ctr, "tasks", "rm", "-f", task], check=False, capture_output=True)


@contextlib.contextmanager
def running(folder: Path, keep_logs: Path | None = None) -> Iterator[Node]:
    """A started node, stopped and wiped at the end (its logs copied to ``keep_logs``); waits
    for another run's node to end."""
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        node = Node(folder, keep_logs=keep_logs)
        try:
            node.start()
            yield node
        finally:
            node.stop()
