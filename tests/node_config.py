"""The files a real single-node cluster runs from: certificates, kubeconfigs, tokens and the
configuration of containerd, CNI and the kubelet, all written under the node's state directory.

These are the project's own: the binaries they configure are built by hand outside the repository
(docs/development.md lists the names the assets folder holds). Each function writes one kind of
file and returns its path; ``node_harness`` starts the processes that read them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson

DRIVER_NAME = "test-driver.cdi.k8s.io"
"""The e2e DRA test driver's name (its default ``--drivername``)."""
NODE_NAME = "e2e-node"
"""The node (and the test driver's pool)."""
BRIDGE = "e2ebr0"
BRIDGE_ADDRESS = "10.244.0.1"
"""The kubelet refuses a loopback node IP: the node's IP is on a bridge made for the run."""
BRIDGE_PREFIX = 24
SANDBOX_IMAGE = "localhost/pause:busybox"
BUSYBOX_IMAGE = "localhost/busybox:1.37"

ADMIN_TOKEN = "dra-metadata-node-admin"  # noqa: S105 - a throwaway token of a throwaway cluster
KUBELET_TOKEN = "dra-metadata-node-kubelet"  # noqa: S105 - the same
TOKENS = (
    f"{ADMIN_TOKEN},admin,admin-uid,system:masters\n"
    # The Node authorizer knows a kubelet by this user and group.
    f'{KUBELET_TOKEN},system:node:{NODE_NAME},kubelet-uid,"system:nodes"\n'
)


def _openssl(*arguments: str) -> None:
    subprocess.run(["openssl", *arguments], check=True, capture_output=True)


def certificates(directory: Path) -> Path:
    """A CA; the kubelet's serving certificate carrying the node IP (the API server checks it
    for ``pods/log``); the API server's client certificate for the kubelet; the ServiceAccount
    signing key. Returns the directory."""
    directory.mkdir(parents=True)
    ca_key, ca = directory / "ca.key", directory / "ca.crt"
    _openssl("genrsa", "-out", str(ca_key), "2048")
    _openssl(
        "req", "-x509", "-new", "-key", str(ca_key), "-out", str(ca), "-days", "2",
        "-subj", "/CN=dra-metadata-node-ca",
    )  # fmt: skip
    for name, subject, extension in (
        (
            "kubelet",
            f"/CN={NODE_NAME}",
            f"subjectAltName=IP:{BRIDGE_ADDRESS},DNS:{NODE_NAME}\nextendedKeyUsage=serverAuth",
        ),
        (
            "apiserver-kubelet-client",
            "/O=system:masters/CN=kube-apiserver-kubelet-client",
            "extendedKeyUsage=clientAuth",
        ),
    ):
        key, request, certificate = (directory / f"{name}.{s}" for s in ("key", "csr", "crt"))
        extensions = directory / f"{name}.ext"
        extensions.write_text(extension + "\n")
        _openssl("genrsa", "-out", str(key), "2048")
        _openssl("req", "-new", "-key", str(key), "-out", str(request), "-subj", subject)
        _openssl(
            "x509", "-req", "-in", str(request), "-CA", str(ca), "-CAkey", str(ca_key),
            "-CAcreateserial", "-out", str(certificate), "-days", "2",
            "-extfile", str(extensions),
        )  # fmt: skip
    _openssl("genrsa", "-out", str(directory / "service-account.key"), "2048")
    return directory


def kubeconfig(path: Path, server: str, ca_file: Path, token: str) -> Path:
    path.write_bytes(
        orjson.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "node",
                        "cluster": {"server": server, "certificate-authority": str(ca_file)},
                    }
                ],
                "users": [{"name": "user", "user": {"token": token}}],
                "contexts": [{"name": "node", "context": {"cluster": "node", "user": "user"}}],
                "current-context": "node",
            }
        )
    )
    return path


def containerd_config(state: Path, bin_dir: Path, cni_bin_dir: Path) -> Path:
    """containerd 1.7 with CDI on (the metadata files reach the container only through CDI),
    cgroupfs, a local sandbox image, and ``restrict_oom_score_adj`` (without it every sandbox
    fails where the process lacks CAP_SYS_RESOURCE). Root, state, sockets, runc's state and the
    CDI and CNI folders are under ``state``."""
    path = state / "containerd.toml"
    path.write_text(
        f"""version = 2
root = "{state / "containerd" / "root"}"
state = "{state / "containerd" / "state"}"
[grpc]
  address = "{containerd_socket(state)}"
[ttrpc]
  address = "{containerd_socket(state)}.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{SANDBOX_IMAGE}"
  enable_cdi = true
  cdi_spec_dirs = ["{CDI_DIR}"]
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "{bin_dir / "runc"}"
        Root = "{state / "runc"}"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{cni_bin_dir}"
    conf_dir = "{state / "cni" / "conf"}"
"""
    )
    return path


def containerd_socket(state: Path) -> Path:
    return state / "containerd.sock"


CDI_DIR = Path("/var/run/cdi")
"""Where the driver writes its CDI specs and containerd reads them: the kubelet plugin library
writes the metadata files' CDI specs there whatever the driver's ``--cdi-dir``."""


def cni_config(state: Path) -> Path:
    """A bridge network only so the runtime reports the network ready: the test pods use the
    host's network, so no plugin ever runs (``ipMasq`` off: no iptables on the machine)."""
    directory = state / "cni" / "conf"
    directory.mkdir(parents=True)
    path = directory / "10-bridge.conflist"
    path.write_bytes(
        orjson.dumps(
            {
                "cniVersion": "1.0.0",
                "name": "dra-metadata-node",
                "plugins": [
                    {
                        "type": "bridge",
                        "bridge": BRIDGE,
                        "isGateway": False,
                        "ipMasq": False,
                        "ipam": {
                            "type": "host-local",
                            "dataDir": str(state / "cni" / "ipam"),
                            "ranges": [[{"subnet": f"10.244.0.0/{BRIDGE_PREFIX}"}]],
                        },
                    }
                ],
            }
        )
    )
    return directory


def kubelet_root(state: Path) -> Path:
    return state / "kubelet"


def kubelet_config(state: Path, certs: Path, port: int, healthz_port: int) -> Path:
    """The kubelet on cgroup v1 with cgroupfs, serving on the node IP with the CA's
    certificate, trusting the API server's client certificate, its own folders under ``state``;
    no image garbage collection (the images are local and cannot be pulled again) and no
    eviction thresholds a shared machine could cross."""
    path = state / "kubelet.json"
    path.write_bytes(
        orjson.dumps(
            {
                "apiVersion": "kubelet.config.k8s.io/v1beta1",
                "kind": "KubeletConfiguration",
                "failCgroupV1": False,
                "cgroupDriver": "cgroupfs",
                "containerRuntimeEndpoint": f"unix://{containerd_socket(state)}",
                "address": BRIDGE_ADDRESS,
                "port": port,
                "readOnlyPort": 0,
                "healthzBindAddress": "127.0.0.1",
                "healthzPort": healthz_port,
                "tlsCertFile": str(certs / "kubelet.crt"),
                "tlsPrivateKeyFile": str(certs / "kubelet.key"),
                "authentication": {
                    "x509": {"clientCAFile": str(certs / "ca.crt")},
                    "anonymous": {"enabled": False},
                    "webhook": {"enabled": False},
                },
                "authorization": {"mode": "AlwaysAllow"},
                "podLogsDir": str(state / "pod-logs"),
                "volumePluginDir": str(state / "volume-plugins"),
                "failSwapOn": False,
                "imageGCHighThresholdPercent": 100,
                "imageGCLowThresholdPercent": 99,
                "evictionHard": {"memory.available": "1Mi", "nodefs.available": "1%"},
                "resolvConf": "/etc/resolv.conf",
                "syncFrequency": "5s",
                "fileCheckFrequency": "5s",
            }
        )
    )
    return path


def component_flags(kubeconfig: Path, cert_dir: Path, port: int) -> list[str]:
    """kube-controller-manager's and kube-scheduler's: the admin's kubeconfig, on 127.0.0.1."""
    return [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={cert_dir}",
        "--leader-elect=false",
        "--v=1",
    ]
