"""Read the device metadata of this pod's claims, as ML workload code would.

Inside a container the files are under /var/run/kubernetes.io/dra-device-attributes; to try it
on the sample tree shipped with the repository:

    DRA_METADATA_ROOT=examples/tree python examples/read_metadata.py
"""

from __future__ import annotations

import dra_metadata


def describe(title: str, metadata: dra_metadata.DeviceMetadata) -> None:
    print(f"{title}: claim {metadata.namespace}/{metadata.name}")
    for source in metadata.sources:
        print(
            f"  file {source.path} (driver {source.driver}, {source.api_version}, "
            f"generation {source.generation})"
        )
    for request in metadata.requests:
        for device in request.devices:
            print(f"  request {request.name}: {device.driver} {device.pool}/{device.name}")
            for name in sorted(device.attributes):
                print(f"    {name} = {device.attribute(name)!r}")
            if device.network_data is not None:
                network = device.network_data
                print(
                    f"    network: interface {network.interface_name}, "
                    f"IPs {', '.join(network.ips) or 'none'}, MAC {network.hardware_address}"
                )


def main() -> None:
    print(f"metadata root: {dra_metadata.default_root()}\n")

    # A claim referenced by name, whose request is served by two drivers (merged).
    training = dra_metadata.read_claim_metadata("training-gpus", "gpu")
    describe("GPUs for training", training)
    uuids = [device.attribute("uuid") for device in training.devices if device.attribute("uuid")]
    print(f"  -> CUDA_VISIBLE_DEVICES={','.join(map(str, uuids))}\n")

    # A claim made from a ResourceClaimTemplate: named by the pod's claim name; the request
    # chose the "high-memory" subrequest of a prioritized list.
    inference = dra_metadata.read_template_metadata("accelerator", "gpu/high-memory")
    describe("GPU from a template claim", inference)
    print(f"  -> subrequest chosen: {inference.requests[0].subrequest_name}\n")

    # One driver's file only, for an SR-IOV NIC whose network data came in a later update.
    nic = dra_metadata.read_claim_metadata("fast-net", "vf", driver="sriov.example.com")
    describe("SR-IOV virtual function", nic)


if __name__ == "__main__":
    main()
