"""A pod on the real node that runs the project's own command and Python inside its container.

The local image holds busybox only, so the interpreter, the virtual environment and the project
checkout are mounted read-only at the same paths as on the host (``python_mounts``). Commands run
the way ``kubectl exec`` runs them, in the container's namespaces, mounts, environment and
ServiceAccount, without the API server's streaming protocols: the container's main process
(``AGENT``) runs each script the test drops into a folder shared with the host and writes its
output and exit code beside it. That needs nothing from the cluster but the pod, and each command's
stdout, stderr and exit code come back apart.
"""

from __future__ import annotations

import itertools
import os
import shlex
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from node_config import BUSYBOX_IMAGE
from node_harness import Node

REPO = Path(__file__).resolve().parent.parent
EXCHANGE = "/exchange"
"""Where the container sees its folder shared with the host."""
AGENT = f"""trap 'exit 0' TERM INT
cd {EXCHANGE}
: > {EXCHANGE}/agent-running
while :; do
  for request in {EXCHANGE}/*.request; do
    [ -e "$request" ] || continue
    id="${{request%.request}}"
    mv "$request" "$id.running"
    /bin/sh "$id.running" > "$id.stdout" 2> "$id.stderr" < /dev/null
    echo $? > "$id.code.new"
    mv "$id.code.new" "$id.code"
  done
  sleep 0.05 & wait $!
done
"""
_commands = itertools.count()


@dataclass(frozen=True)
class Completed:
    """What a command run in the container returned."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def python_mounts() -> list[tuple[str, str]]:
    """(host path, container path) pairs: the project checkout (and the virtual environment in
    it, or apart), the interpreter's file at every name the venv's ``python`` links through, its
    standard library, and the shared libraries it loads."""
    mounts = [(str(REPO), str(REPO))]
    inside = [REPO]
    if not Path(sys.prefix).is_relative_to(REPO):
        mounts.append((sys.prefix, sys.prefix))
        inside.append(Path(sys.prefix))
    if Path(sys.base_prefix) != Path("/usr"):  # an interpreter of its own, such as pyenv's
        mounts.append((sys.base_prefix, sys.base_prefix))
        inside.append(Path(sys.base_prefix))
    else:
        stdlib = sysconfig.get_paths()["stdlib"]
        mounts.append((stdlib, stdlib))
    link = Path(sys.prefix) / "bin" / "python"
    real = str(link.resolve())
    while link.is_symlink():
        link = Path(os.path.normpath(link.parent / link.readlink()))
        if not any(link.is_relative_to(folder) for folder in inside):
            mounts.append((real, str(link)))  # the real file, at each name of the chain
    multiarch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    libraries = f"/usr/lib/{multiarch}"
    mounts += [(libraries, libraries), (libraries, f"/lib/{multiarch}")]
    if Path("/usr/lib64").is_dir():
        mounts.append(("/usr/lib64", "/lib64"))  # the dynamic loader's path
    return mounts


def pod_manifest(
    name: str,
    *,
    claims: list[dict[str, Any]],
    exchange: Path,
    service_account: str,
    api_port: int,
    ca_config_map: str,
) -> dict[str, Any]:
    """The pod: ``claims`` are its ``spec.resourceClaims``, all given to container ``c``; on the
    host's network, with the API server reachable at 127.0.0.1, the ServiceAccount's token mounted
    where in-cluster clients look, and the project's Python mounted read-only."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for index, (host, container) in enumerate(python_mounts()):
        kind = "File" if Path(host).is_file() else "Directory"
        volumes.append({"name": f"ro{index}", "hostPath": {"path": host, "type": kind}})
        mounts.append({"name": f"ro{index}", "mountPath": container, "readOnly": True})
    volumes += [
        {"name": "exchange", "hostPath": {"path": str(exchange), "type": "Directory"}},
        {
            "name": "api-access",
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                    {"configMap": {"name": ca_config_map, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
                ]
            },
        },
    ]  # fmt: skip
    mounts += [
        {"name": "exchange", "mountPath": EXCHANGE},
        {
            "name": "api-access",
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "readOnly": True,
        },
    ]
    environment = {
        "PATH": f"{sys.prefix}/bin:/bin:/usr/bin:/sbin:/usr/sbin",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": "/tmp",  # noqa: S108 - the container's own /tmp
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": str(api_port),
    }
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in environment.items()]
    env += [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
    ]
    return {
        "metadata": {"name": name},
        "spec": {
            "hostNetwork": True,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 2,
            "serviceAccountName": service_account,
            "automountServiceAccountToken": False,
            "resourceClaims": claims,
            "volumes": volumes,
            "containers": [
                {
                    "name": "c",
                    "image": BUSYBOX_IMAGE,
                    "imagePullPolicy": "Never",
                    "command": ["/bin/sh", f"{EXCHANGE}/agent.sh"],
                    "env": env,
                    "resources": {"claims": [{"name": claim["name"]} for claim in claims]},
                    "volumeMounts": mounts,
                }
            ],
        },
    }


@dataclass
class Pod:
    """A running pod; ``run`` executes a command in its container."""

    node: Node
    namespace: str
    name: str
    exchange: Path

    @property
    def path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/pods/{self.name}"

    def get(self) -> Any:
        return self.node.request("GET", self.path)

    def run(self, *argv: str, timeout: float = 120.0) -> Completed:
        """Run ``argv`` in the container (no shell) and wait for it to end."""
        request = f"command-{next(_commands)}"
        script = self.exchange / f"{request}.new"
        script.write_text("exec " + " ".join(shlex.quote(word) for word in argv) + "\n")
        script.rename(self.exchange / f"{request}.request")
        code = self.exchange / f"{request}.code"
        deadline = time.monotonic() + timeout
        while not code.exists():
            self.node.check_running()
            if time.monotonic() > deadline:
                raise AssertionError(f"{argv} did not end in {timeout:.0f} s in pod {self.name}")
            time.sleep(0.02)
        return Completed(
            argv,
            int(code.read_text()),
            (self.exchange / f"{request}.stdout").read_text(),
            (self.exchange / f"{request}.stderr").read_text(),
        )

    @property
    def python_executable(self) -> str:
        """The virtual environment's interpreter, at the same path as on the host."""
        return f"{sys.prefix}/bin/python"

    def python(self, source: str, *, timeout: float = 120.0) -> Completed:
        """Run ``source`` with the project's interpreter in the container."""
        return self.run(self.python_executable, "-c", source, timeout=timeout)


READER = "dra-metadata-reader"
"""The ServiceAccount of the project's example (examples/kubernetes/api-reader-rbac.yaml)."""
CA_CONFIG_MAP = "api-ca"


def prepare_namespace(node: Node, namespace: str) -> None:
    """The namespace, the API server's CA as a ConfigMap and the project's example
    ServiceAccount, Role and RoleBinding: what ``start_pod`` needs there."""
    if node.get(f"/api/v1/namespaces/{namespace}") is None:
        node.create("/api/v1/namespaces", {"metadata": {"name": namespace}})
    node.create(
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"metadata": {"name": CA_CONFIG_MAP}, "data": {"ca.crt": node.api_ca.read_text()}},
    )
    documents = yaml.safe_load_all(
        (REPO / "examples" / "kubernetes" / "api-reader-rbac.yaml").read_text()
    )
    collections = {
        "ServiceAccount": f"/api/v1/namespaces/{namespace}/serviceaccounts",
        "Role": f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles",
        "RoleBinding": f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
    }
    for document in documents:
        if document["kind"] == "RoleBinding":
            document["subjects"][0]["namespace"] = namespace
        node.create(collections[document["kind"]], document)


def start_pod(node: Node, namespace: str, name: str, claims: list[dict[str, Any]]) -> Pod:
    """Create the pod in a namespace ``prepare_namespace`` made and wait until its agent runs."""
    exchange = node.state / "exchange" / namespace / name
    exchange.mkdir(parents=True)
    (exchange / "agent.sh").write_text(AGENT)
    manifest = pod_manifest(
        name,
        claims=claims,
        exchange=exchange,
        service_account=READER,
        api_port=node.api_port,
        ca_config_map=CA_CONFIG_MAP,
    )
    node.create(f"/api/v1/namespaces/{namespace}/pods", manifest)
    pod = Pod(node, namespace, name, exchange)

    def running() -> bool:
        phase = pod.get().get("status", {}).get("phase")
        if phase in {"Failed", "Succeeded"}:
            raise AssertionError(f"pod {name} ended: {pod.get()['status']}")
        return (exchange / "agent-running").exists()

    try:
        node.timings[f"pod {namespace}/{name}"] = node.wait_for(f"pod {name}", running, 180)
    except RuntimeError as error:
        raise RuntimeError(f"{error}; the pod's status: {pod.get().get('status')}") from None
    return pod
