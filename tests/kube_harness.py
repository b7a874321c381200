"""A real kube-apiserver and etcd on loopback ports, found as envtest finds them.

``KUBEBUILDER_ASSETS`` (else envtest's default, /usr/local/kubebuilder/bin) names a directory
holding ``kube-apiserver`` and ``etcd`` binaries, and for the pool status tests
``kube-controller-manager``. The API server serves ``resource.k8s.io/v1alpha3`` with the
``DRAResourcePoolStatus`` gate on, and runs with RBAC, a static admin token (group system:masters) and a ServiceAccount
token signer, on 127.0.0.1 only; etcd keeps its data in the test's temporary directory. Writes
the scheduler, drivers and kubelet would make are made here as the admin through the same
endpoints (``resourceclaims/status``, ``pods/status``); the functions at the end build them.
The pytest fixtures ``server`` and ``namespace`` are in conftest.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx2
import orjson
import yaml

from dra_metadata.kube._identity import SERVICE_ACCOUNT_DIR

ASSETS_VARIABLE = "KUBEBUILDER_ASSETS"
DEFAULT_ASSETS = Path("/usr/local/kubebuilder/bin")
"""Where envtest looks when KUBEBUILDER_ASSETS is unset."""
SKIP_REASON = (
    f"no Kubernetes API server to test against: set {ASSETS_VARIABLE} to a directory holding "
    "kube-apiserver and etcd binaries, as envtest's KUBEBUILDER_ASSETS (e.g. the one "
    f"`setup-envtest use -p path` prints), or put them in envtest's default {DEFAULT_ASSETS}"
)
CONTROLLER_SKIP_REASON = (
    "no kube-controller-manager to answer ResourcePoolStatusRequests: put a "
    f"kube-controller-manager binary (v1.36 or later) beside kube-apiserver in ${ASSETS_VARIABLE} "
    f"(or {DEFAULT_ASSETS})"
)
POOL_STATUS_FLAGS = (
    "--runtime-config=resource.k8s.io/v1alpha3=true",
    "--feature-gates=DRAResourcePoolStatus=true",
)
"""kube-apiserver serves ResourcePoolStatusRequests only with the runtime config."""
ADMIN_TOKEN = "dra-metadata-test-admin"  # noqa: S105 - a throwaway token of a throwaway server
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims"
PODS = "/api/v1/namespaces/{namespace}/pods"
_REPO = Path(__file__).parent.parent


def assets() -> Path | None:
    """The directory of the binaries, or None when they are not provided."""
    value = os.environ.get(ASSETS_VARIABLE)
    directory = Path(value) if value else DEFAULT_ASSETS
    if not all((directory / name).is_file() for name in ("kube-apiserver", "etcd")):
        return None
    return directory


def controller_assets() -> Path | None:
    """The kube-controller-manager binary beside the API server's, or None."""
    directory = assets()
    if directory is None or not (directory / "kube-controller-manager").is_file():
        return None
    return directory / "kube-controller-manager"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass
class ApiServer:
    """etcd and kube-apiserver for one test session; ``admin`` is an httpx2 client of the admin."""

    assets: Path
    directory: Path
    port: int = field(default_factory=_free_port)
    etcd_port: int = field(default_factory=_free_port)
    etcd_peer_port: int = field(default_factory=_free_port)
    etcd: subprocess.Popen[bytes] | None = None
    apiserver: subprocess.Popen[bytes] | None = None
    admin: httpx2.Client | None = None
    logs: list[IO[bytes]] = field(default_factory=list)
    pool_status: bool = True
    """Serve resource.k8s.io/v1alpha3 (ResourcePoolStatusRequest): POOL_STATUS_FLAGS."""
    etcd_prefix: str = "/registry"

    def _log(self, name: str) -> IO[bytes]:
        log = (self.directory / name).open("ab")
        self.logs.append(log)
        return log

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> Path:
        """The server's self-signed certificate and its CA (kube-apiserver writes both)."""
        return self.directory / "certs" / "apiserver.crt"

    def _prepare(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        key = self.directory / "service-account.key"
        subprocess.run(
            ["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True
        )
        (self.directory / "tokens.csv").write_text(
            f"{ADMIN_TOKEN},admin,admin-uid,system:masters\n"
        )

    def start_beside(self, other: ApiServer) -> None:
        """A second kube-apiserver on the etcd of ``other``, under its own etcd prefix."""
        self._prepare()
        self.etcd_port = other.etcd_port
        self.start_apiserver()

    def start(self) -> None:
        self._prepare()
        self.etcd = subprocess.Popen(
            [
                str(self.assets / "etcd"),
                f"--data-dir={self.directory / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{self.etcd_peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{self.etcd_peer_port}",
                f"--initial-cluster=default=http://127.0.0.1:{self.etcd_peer_port}",
                "--unsafe-no-fsync",
                "--log-level=error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self._log("etcd.log"),
        )
        self.start_apiserver()

    def start_apiserver(self) -> None:
        key = self.directory / "service-account.key"
        log = self._log("kube-apiserver.log")
        self.apiserver = subprocess.Popen(
            [
                str(self.assets / "kube-apiserver"),
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                f"--cert-dir={self.directory / 'certs'}",
                f"--token-auth-file={self.directory / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                f"--service-account-issuer={self.url}",
                f"--service-account-key-file={key}",
                f"--service-account-signing-key-file={key}",
                f"--api-audiences={self.url}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--disable-admission-plugins=ServiceAccount",
                "--endpoint-reconciler-type=none",
                f"--etcd-prefix={self.etcd_prefix}",
                "--v=0",
                *(POOL_STATUS_FLAGS if self.pool_status else ()),
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 90
        while True:
            assert self.apiserver is not None
            if self.apiserver.poll() is not None or (self.etcd and self.etcd.poll() is not None):
                raise RuntimeError(
                    f"the API server or etcd exited; see the logs in {self.directory}"
                )
            if self.admin is None and self.ca_file.exists():
                with contextlib.suppress(ssl.SSLError):  # still being written
                    self.admin = httpx2.Client(
                        base_url=self.url,
                        verify=ssl.create_default_context(cafile=str(self.ca_file)),
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                        timeout=10,
                    )
            if self.admin is not None:
                with contextlib.suppress(httpx2.TransportError):
                    if self.admin.get("/readyz").status_code == 200:
                        return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the API server was not ready in 90 s; see {self.directory}")
            time.sleep(0.05)

    def restart_apiserver(self) -> None:
        """Kill kube-apiserver (as a crash would) and start it again: same etcd, flags, port.

        (A graceful stop waits about 10 s for open watches to end.)
        """
        if self.apiserver is not None:
            self.apiserver.kill()
            self.apiserver.wait()
        if self.admin is not None:
            self.admin.close()
            self.admin = None
        self.start_apiserver()

    def stop(self) -> None:
        if self.admin is not None:
            self.admin.close()
        _stop(self.apiserver)
        _stop(self.etcd)
        for log in self.logs:
            log.close()

    # Writes as the admin -----------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, *, content_type: str = "") -> Any:
        assert self.admin is not None
        headers = {"Content-Type": content_type or "application/json"}
        content = None if body is None else orjson.dumps(body)
        answer = self.admin.request(method, path, content=content, headers=headers)
        if answer.status_code >= 300:
            raise AssertionError(f"{method} {path}: HTTP {answer.status_code}: {answer.text}")
        return answer.json()

    def create(self, path: str, body: dict[str, Any]) -> Any:
        return self.request("POST", path, body)

    def patch_status(self, path: str, status: dict[str, Any]) -> Any:
        """A merge patch of ``<path>/status``, as drivers, the scheduler and kubelets write."""
        return self.request(
            "PATCH",
            f"{path}/status",
            {"status": status},
            content_type="application/merge-patch+json",
        )

    def write_kubeconfig(self, path: Path, token: str = ADMIN_TOKEN) -> Path:
        """A kubeconfig file for this server and ``token`` (the admin's by default)."""
        path.write_bytes(
            orjson.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "test",
                            "cluster": {
                                "server": self.url,
                                "certificate-authority": str(self.ca_file),
                            },
                        }
                    ],
                    "users": [{"name": "user", "user": {"token": token}}],
                    "contexts": [{"name": "test", "context": {"cluster": "test", "user": "user"}}],
                    "current-context": "test",
                }
            )
        )
        return path

    def namespace(self, name: str) -> str:
        self.create("/api/v1/namespaces", {"metadata": {"name": name}})
        return name

    def service_account_token(self, namespace: str, name: str) -> str:
        """A TokenRequest token of a new ServiceAccount (bound to nothing yet)."""
        self.create(f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": name}})
        answer = self.create(
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        )
        return str(answer["status"]["token"])


@contextlib.contextmanager
def running(directory: Path) -> Iterator[ApiServer]:
    found = assets()
    assert found is not None
    if shutil.which("openssl") is None:
        raise RuntimeError("openssl is needed to make the ServiceAccount signing key")
    server = ApiServer(found, directory)
    try:
        server.start()
        yield server
    finally:
        server.stop()


# Objects as users, the scheduler and drivers write them ----------------------------------


def claim(name: str, *requests: dict[str, Any]) -> dict[str, Any]:
    requests = requests or ({"name": "nics", "exactly": {"deviceClassName": "dranet"}},)
    return {"metadata": {"name": name}, "spec": {"devices": {"requests": list(requests)}}}


def allocation(*devices: str, request: str = "nics", driver: str = "dra.net") -> dict[str, Any]:
    return {
        "allocation": {
            "devices": {
                "results": [
                    {"request": request, "driver": driver, "pool": "node-7", "device": device}
                    for device in devices
                ]
            }
        }
    }


def network_status(*devices: str, driver: str = "dra.net") -> dict[str, Any]:
    return {
        "devices": [
            {
                "driver": driver,
                "pool": "node-7",
                "device": device,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "NetworkDeviceReady",
                        "message": "",
                        "lastTransitionTime": "2026-11-30T13:29:34Z",
                    }
                ],
                "networkData": {
                    "interfaceName": f"rdma{index}",
                    "ips": [f"10.128.{index}.17/24"],
                    "hardwareAddress": f"0a:58:0a:80:00:1{index}",
                },
            }
            for index, device in enumerate(devices)
        ]
    }


def allocated_claim(server: ApiServer, namespace: str, name: str, *devices: str) -> str:
    """A claim allocated to ``devices`` (default nic-0) whose driver has published nothing."""
    path = f"{CLAIMS.format(namespace=namespace)}/{name}"
    server.create(CLAIMS.format(namespace=namespace), claim(name))
    server.patch_status(path, allocation(*(devices or ("nic-0",))))
    return path


def template_pod(server: ApiServer, namespace: str) -> str:
    """Pod trainer-0 with a template claim "accelerator" and its generated claim, allocated."""
    server.create(
        PODS.format(namespace=namespace),
        {
            "metadata": {"name": "trainer-0"},
            "spec": {
                "containers": [
                    {
                        "name": "trainer",
                        "image": "registry.example/trainer",
                        "resources": {"claims": [{"name": "accelerator", "request": "gpu"}]},
                    }
                ],
                "resourceClaims": [
                    {"name": "accelerator", "resourceClaimTemplateName": "training-gpu"}
                ],
            },
        },
    )
    generated = server.create(
        CLAIMS.format(namespace=namespace),
        {
            "metadata": {
                "generateName": "trainer-0-accelerator-",
                "annotations": {"resource.kubernetes.io/pod-claim-name": "accelerator"},
            },
            "spec": {
                "devices": {
                    "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                }
            },
        },
    )
    name = generated["metadata"]["name"]
    server.patch_status(
        f"{CLAIMS.format(namespace=namespace)}/{name}",
        allocation("gpu-3", request="gpu", driver="gpu.example.com"),
    )
    server.patch_status(
        f"{PODS.format(namespace=namespace)}/trainer-0",
        {"resourceClaimStatuses": [{"name": "accelerator", "resourceClaimName": name}]},
    )
    return str(name)


def apply_example_rbac(server: ApiServer, namespace: str, *, verbs: list[str] | None = None) -> str:
    """The example ServiceAccount, Role and RoleBinding; a token of that ServiceAccount."""
    documents = list(
        yaml.safe_load_all((_REPO / "examples" / "kubernetes" / "api-reader-rbac.yaml").read_text())
    )
    collections = {
        "ServiceAccount": f"/api/v1/namespaces/{namespace}/serviceaccounts",
        "Role": f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles",
        "RoleBinding": f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
    }
    for document in documents:
        if document["kind"] == "Role" and verbs is not None:
            document["rules"][0]["verbs"] = verbs
        if document["kind"] == "RoleBinding":
            document["subjects"][0]["namespace"] = namespace
        server.create(collections[document["kind"]], document)
    answer = server.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/dra-metadata-reader/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    return str(answer["status"]["token"])


def report_unhealthy_gpu(server: ApiServer, namespace: str) -> None:
    """The kubelet reports template_pod's GPU unhealthy ("XID 79") for container trainer."""
    server.request(
        "PATCH",
        f"{PODS.format(namespace=namespace)}/trainer-0/status",
        {
            "status": {
                "containerStatuses": [
                    {
                        "name": "trainer",
                        "image": "registry.example/trainer",
                        "imageID": "",
                        "ready": True,
                        "restartCount": 0,
                        "state": {"running": {"startedAt": "2026-11-30T13:29:38Z"}},
                        "allocatedResourcesStatus": [
                            {
                                "name": "claim:accelerator/gpu",
                                "resources": [
                                    {
                                        "resourceID": "gpu.example.com/rack-1/node-7/gpu-3",
                                        "health": "Unhealthy",
                                        "message": "XID 79",
                                    }
                                ],
                            }
                        ],
                    }
                ]
            }
        },
        content_type="application/strategic-merge-patch+json",
    )


# A pod whose devices the kubelet keys by CDI device IDs, as on a real node ---------------------

NODE_FIXTURES = _REPO / "tests" / "data" / "node-health"
TEST_DRIVER = "test-driver.cdi.k8s.io"


def node_fixture(name: str) -> Any:
    return orjson.loads((NODE_FIXTURES / name).read_bytes())


def _allocation_of(fixture: str) -> dict[str, Any]:
    allocation = node_fixture(fixture)["status"]["allocation"]
    return {"allocation": {"devices": allocation["devices"]}}


def cdi_pod(server: ApiServer, namespace: str) -> dict[str, str]:
    """Pod dra-meta as on the real node (pod-healthy.json): container c with the claims
    ``direct`` (ResourceClaim claim-direct, device-00) and ``fromtmpl`` (a generated claim,
    device-01), both allocated. Returns the claims' UIDs by pod claim name."""
    claims = CLAIMS.format(namespace=namespace)
    real = node_fixture("pod-healthy.json")
    container = real["spec"]["containers"][0]
    server.create(
        PODS.format(namespace=namespace),
        {
            "metadata": {"name": "dra-meta"},
            "spec": {
                "containers": [
                    {
                        "name": container["name"],
                        "image": container["image"],
                        "resources": {"claims": container["resources"]["claims"]},
                    }
                ],
                "resourceClaims": real["spec"]["resourceClaims"],
            },
        },
    )
    direct = node_fixture("resourceclaim-direct.json")
    created = server.create(claims, {"metadata": {"name": "claim-direct"}, "spec": direct["spec"]})
    server.patch_status(f"{claims}/claim-direct", _allocation_of("resourceclaim-direct.json"))
    template = node_fixture("resourceclaim-template.json")
    generated = server.create(
        claims,
        {
            "metadata": {
                "generateName": "dra-meta-fromtmpl-",
                "annotations": template["metadata"]["annotations"],
            },
            "spec": template["spec"],
        },
    )
    name = generated["metadata"]["name"]
    server.patch_status(f"{claims}/{name}", _allocation_of("resourceclaim-template.json"))
    server.patch_status(
        f"{PODS.format(namespace=namespace)}/dra-meta",
        {"resourceClaimStatuses": [{"name": "fromtmpl", "resourceClaimName": name}]},
    )
    return {"direct": created["metadata"]["uid"], "fromtmpl": generated["metadata"]["uid"]}


def cdi_id(uid: str, request: str) -> str:
    """The test driver's CDI device ID for a claim's request, as the kubelet reports it."""
    return f"{TEST_DRIVER}/test=claim-{uid}-{request}"


def report_cdi_health(
    server: ApiServer,
    namespace: str,
    uids: dict[str, str],
    health: str,
    message: str = "set by --initial-device-health",
    *,
    ready: bool = True,
) -> Any:
    """The kubelet's write of cdi_pod's device health (both devices), as on the real node
    (pod-healthy.json, pod-unhealthy.json). ``ready`` changes something else in the status."""
    requests = {"direct": "req-a", "fromtmpl": "req-t"}
    return server.request(
        "PATCH",
        f"{PODS.format(namespace=namespace)}/dra-meta/status",
        {
            "status": {
                "containerStatuses": [
                    {
                        "name": "c",
                        "image": "e2e.local/busybox:1",
                        "imageID": "",
                        "ready": ready,
                        "restartCount": 0,
                        "state": {"running": {"startedAt": "2026-12-01T22:19:11Z"}},
                        "allocatedResourcesStatus": [
                            {
                                "name": f"claim:{pod_claim}",
                                "resources": [
                                    {
                                        "resourceID": cdi_id(uids[pod_claim], request),
                                        "health": health,
                                        "message": message,
                                    }
                                ],
                            }
                            for pod_claim, request in requests.items()
                        ],
                    }
                ]
            }
        },
        content_type="application/strategic-merge-patch+json",
    )


def pods_only_token(server: ApiServer, namespace: str, *, claims: bool = False) -> str:
    """A ServiceAccount allowed get, list and watch on pods only (``claims``: and get on
    resourceclaims); a token of it."""
    name = "health-reader-claims" if claims else "health-reader"
    rules: list[dict[str, Any]] = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    ]
    if claims:
        rules.append(
            {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get"]}
        )
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    server.create(f"{rbac}/roles", {"metadata": {"name": name}, "rules": rules})
    server.create(
        f"{rbac}/rolebindings",
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
        },
    )
    return server.service_account_token(namespace, name)


def service_account(server: ApiServer, directory: Path, namespace: str) -> Path:
    """A ServiceAccount directory as the kubelet mounts one (token: the admin's; the namespace;
    the server's CA as ca.crt), made in ``directory``."""
    directory.mkdir()
    (directory / "token").write_text(ADMIN_TOKEN)
    (directory / "namespace").write_text(namespace)
    shutil.copy(server.ca_file, directory / "ca.crt")
    return directory


def in_a_pod(account: Path) -> list[str]:
    """The command prefix that runs what follows it as in a pod: in a mount namespace of its own
    (``unshare -m``: root), with a tmpfs on /run (where /var/run points) holding ``account`` at
    the ServiceAccount's fixed place. Needs KUBERNETES_SERVICE_HOST/PORT in the environment."""
    script = (
        f"mount -t tmpfs dra-metadata-pod /run && mkdir -p {SERVICE_ACCOUNT_DIR} && "
        f'cp {account}/* {SERVICE_ACCOUNT_DIR}/ && exec "$0" "$@"'
    )
    return ["unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script]
