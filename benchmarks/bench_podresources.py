"""dra_metadata.podresources: list_pod_resources beside one raw gRPC call, on the same channels.

    python benchmarks/bench_podresources.py [--quick]

A local gRPC server (its own process, on a unix socket) answers List with the real kubelet's
answer (tests/data/node/podresources-list.json: 2 pods, 2 DRA devices) or with a full node (110
pods, the kubelet's default limit, each with 2 containers holding 2 claims of one device:
440 devices). It sends bytes serialized once, so that it costs both sides the same. It is a
benchmark's peer, never a kubelet the tests use.

Side by side in one run, for each answer:

* raw, kept channel: ``channel.unary_unary(...)(request)`` on one open channel (the floor);
* raw, fresh channel: open an insecure unix channel, one call, close it (what each call of the
  library does, without the mapping);
* list_pod_resources: the same, plus the socket's resolution, the message -> model mapping;
* the asyncio twins: a fresh grpc.aio channel per call, raw and alist_pod_resources;
* mapping alone: the parsed response -> models;
* a fresh process: ``import`` + one call (the library's, or the raw call with the generated
  messages), as a node agent's first call or one ``dra-metadata pod-resources`` pays it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from concurrent import futures
from pathlib import Path
from typing import Any

from _common import interleaved_best, process_seconds, python, quick_option

REPO = Path(__file__).resolve().parent.parent
LIST_ANSWER = REPO / "tests" / "data" / "node" / "podresources-list.json"
METHOD = "/v1.PodResourcesLister/List"


def full_node_answer() -> dict[str, Any]:
    """110 pods, 2 containers each, each container with 2 claims of one DRA device."""
    pods = []
    for pod in range(110):
        containers = []
        for container in range(2):
            claims = []
            for claim in range(2):
                uid = f"{pod:08x}-0000-4000-8000-{container:04x}{claim:08x}"
                claims.append(
                    {
                        "claim_name": f"pod-{pod}-claim-{container}-{claim}",
                        "claim_namespace": f"team-{pod % 7}",
                        "claim_resources": [
                            {
                                "cdi_devices": [
                                    {"name": f"gpu.example.com/gpu=claim-{uid}-gpu"},
                                    {"name": f"gpu.example.com/metadata={uid}_gpu"},
                                ],
                                "driver_name": "gpu.example.com",
                                "pool_name": "node-a",
                                "device_name": f"gpu-{(pod * 4 + container * 2 + claim) % 512}",
                            }
                        ],
                    }
                )
            containers.append({"name": f"c{container}", "dynamic_resources": claims})
        pods.append(
            {"name": f"pod-{pod}", "namespace": f"team-{pod % 7}", "containers": containers}
        )
    return {"pod_resources": pods}


def _response(shape: str) -> Any:
    from google.protobuf import json_format  # noqa: PLC0415

    from dra_metadata.podresources._proto import api_pb2  # noqa: PLC0415

    document = json.loads(LIST_ANSWER.read_text()) if shape == "real" else full_node_answer()
    return json_format.ParseDict(document, api_pb2.ListPodResourcesResponse())


def serve(socket: str, shape: str) -> None:
    """The benchmark's server: List answers the pre-serialized bytes of ``shape``."""
    import grpc  # noqa: PLC0415

    answer = _response(shape).SerializeToString()
    handler = grpc.unary_unary_rpc_method_handler(
        lambda request, context: answer,  # noqa: ARG005
        request_deserializer=None,
        response_serializer=None,
    )
    service = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {"List": handler})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[service])
    server.add_insecure_port(f"unix:{socket}")
    server.start()
    print("serving", flush=True)
    server.wait_for_termination()


def _start(socket: Path, shape: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(socket), shape],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "serving":
        process.kill()
        raise SystemExit("the benchmark's gRPC server did not start")
    return process


def measure(socket: str, shape: str, quick: bool) -> dict[str, float]:
    import grpc  # noqa: PLC0415

    from dra_metadata import podresources  # noqa: PLC0415
    from dra_metadata.podresources import _mapping  # noqa: PLC0415
    from dra_metadata.podresources._client import CHANNEL_OPTIONS  # noqa: PLC0415
    from dra_metadata.podresources._proto import api_pb2  # noqa: PLC0415

    target = f"unix:{socket}"
    request = api_pb2.ListPodResourcesRequest()
    kind = {
        "request_serializer": api_pb2.ListPodResourcesRequest.SerializeToString,
        "response_deserializer": api_pb2.ListPodResourcesResponse.FromString,
    }
    # The library's own channel options (16 MiB answers, a connection of its own) on every
    # channel here too: the raw calls and the library's differ only by what the library adds.
    kept = grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
    kept_call = kept.unary_unary(METHOD, **kind)
    parsed = _response(shape)

    def raw_fresh() -> object:
        with grpc.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
            return channel.unary_unary(METHOD, **kind)(request, timeout=10)

    async def araw() -> object:
        async with grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
            return await channel.unary_unary(METHOD, **kind)(request, timeout=10)

    loop = asyncio.new_event_loop()
    number = 20 if quick else 200
    if shape == "full":
        number = max(5, number // 10)
    best = interleaved_best(
        {
            "raw, kept channel": lambda: kept_call(request, timeout=10),
            "raw, fresh channel": raw_fresh,
            "list_pod_resources": lambda: podresources.list_pod_resources(socket=socket),
            "raw aio, fresh channel": lambda: loop.run_until_complete(araw()),
            "alist_pod_resources": lambda: loop.run_until_complete(
                podresources.alist_pod_resources(socket=socket)
            ),
            "mapping alone": lambda: [_mapping.pod_resources(pod) for pod in parsed.pod_resources],
        },
        number=number,
        rounds=3 if quick else 7,
    )
    loop.close()
    kept.close()
    return best


_OURS = (
    "import sys; from dra_metadata import podresources; "
    "podresources.list_pod_resources(socket=sys.argv[1])"
)
_RAW = (
    "import sys, grpc; from dra_metadata.podresources._proto import api_pb2 as m; "
    "c = grpc.insecure_channel('unix:' + sys.argv[1]); "
    "c.unary_unary('/v1.PodResourcesLister/List', "
    "request_serializer=m.ListPodResourcesRequest.SerializeToString, "
    "response_deserializer=m.ListPodResourcesResponse.FromString)(m.ListPodResourcesRequest()); "
    "c.close()"
)


def fresh_processes(socket: str, quick: bool) -> dict[str, float]:
    command = str(Path(sys.executable).parent / "dra-metadata")
    return process_seconds(
        {
            "python -c 'import grpc + raw call'": [*python(_RAW), socket],
            "python -c 'list_pod_resources'": [*python(_OURS), socket],
            "dra-metadata pod-resources -o json": [
                command,
                "pod-resources",
                "--socket",
                socket,
                "-o",
                "json",
            ],
        },
        runs=5 if quick else 21,
    )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3])
        return 0
    quick = quick_option(__doc__)
    folder = Path(tempfile.mkdtemp(prefix="bench-pr-", dir="/tmp"))
    try:
        for shape, label in (
            ("real", "the real answer (2 pods)"),
            ("full", "a full node (110 pods)"),
        ):
            socket = folder / f"{shape}.sock"
            server = _start(socket, shape)
            try:
                size = _response(shape).ByteSize()
                best = measure(str(socket), shape, quick)
                print(f"List of {label}, {size} bytes: best per call")
                floor = best["raw, fresh channel"]
                for name, seconds in best.items():
                    ratio = (
                        "" if name == "mapping alone" else f"  ({seconds / floor:4.2f}x raw, fresh)"
                    )
                    print(f"  {name:24} {seconds * 1e3:8.3f} ms{ratio}")
                if shape == "real":
                    processes = fresh_processes(str(socket), quick)
                    base = processes["python -c 'import grpc + raw call'"]
                    print("a fresh process, import and one List (median wall time):")
                    for name, seconds in processes.items():
                        print(f"  {name:36} {seconds * 1e3:7.1f} ms  ({seconds / base:4.2f}x)")
            finally:
                server.terminate()
                server.wait(timeout=10)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
