"""Write the sample metadata tree exactly as DRA drivers would.

    python examples/build_sample_tree.py DIR          # a new tree in DIR (empty or missing)
    python examples/build_sample_tree.py --committed  # rewrite examples/tree (after changing
                                                      # the sample data below)

tests/packaging/test_examples.py fails when the committed tree differs from what this writes.
Nothing is written over an existing tree unless asked (--committed, or --overwrite for DIR).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from dra_metadata import (
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    NetworkDeviceData,
    ObjectMeta,
    resource_claim_file_path,
    resource_claim_template_file_path,
)
from dra_metadata.writer import write_metadata_file

V1BETA1 = "metadata.resource.k8s.io/v1beta1"
V1ALPHA1 = "metadata.resource.k8s.io/v1alpha1"


def gpu(index: int, uuid: str, bus: str, numa: int) -> Device:
    return Device(
        driver="gpu.example.com",
        pool="node-a",
        name=f"gpu-{index}",
        attributes={
            "uuid": DeviceAttribute(string=uuid),
            "productName": DeviceAttribute(string="Example H200 141GB"),
            "index": DeviceAttribute(int=index),
            "driverVersion": DeviceAttribute(version="580.65.6"),
            "resource.kubernetes.io/pciBusID": DeviceAttribute(string=bus),
            "numaNode": DeviceAttribute(int=numa),
        },
    )


def rdma_nic(index: int, bus: str, numa: int) -> Device:
    return Device(
        driver="rdma.example.com",
        pool="node-a",
        name=f"mlx5-{index}",
        attributes={
            "rdma.example.com/ibDevice": DeviceAttribute(string=f"mlx5_{index}"),
            "resource.kubernetes.io/pciBusID": DeviceAttribute(string=bus),
            "numaNode": DeviceAttribute(int=numa),
        },
    )


def build(root: Path) -> list[Path]:
    claim = ObjectMeta(
        name="training-gpus", namespace="ml", uid="0d5c1c52-6a4e-4b8e-9a43-3f6f1b2f7a10"
    )
    written = []
    # A GPU request served by two drivers: GPUs and the RDMA NICs next to them.
    gpus = DeviceMetadata(
        metadata=replace(claim, generation=1),
        requests=[
            DeviceMetadataRequest(
                name="gpu",
                devices=[
                    gpu(0, "GPU-5b3c1d2e-8f41-4c55-9a1e-0c6f2b7d9e10", "0000:1b:00.0", 0),
                    gpu(1, "GPU-a9e77c02-3d1b-4f7a-b2c4-51d0e8f6a3b2", "0000:9c:00.0", 1),
                ],
            )
        ],
    )
    nics = DeviceMetadata(
        metadata=replace(claim, generation=1),
        requests=[
            DeviceMetadataRequest(
                name="gpu",
                devices=[rdma_nic(0, "0000:1a:00.0", 0), rdma_nic(1, "0000:9b:00.0", 1)],
            )
        ],
    )
    for driver, metadata in (("gpu.example.com", gpus), ("rdma.example.com", nics)):
        path = resource_claim_file_path(driver, "training-gpus", "gpu", root=root)
        written.append(
            write_metadata_file(path, metadata, versions=[V1BETA1, V1ALPHA1], validate="strict")
        )

    # A claim made from a ResourceClaimTemplate, with a prioritized-list subrequest, written by
    # an alpha-era driver (v1alpha1 only).
    inference = DeviceMetadata(
        metadata=ObjectMeta(
            name="inference-0-accelerator-x7k2p",
            namespace="serving",
            uid="7f2d9c4b-1e0a-4d3f-8b6c-2a9e5d1f0c37",
            generation=1,
        ),
        pod_claim_name="accelerator",
        requests=[
            DeviceMetadataRequest(
                name="gpu/high-memory",
                devices=[gpu(3, "GPU-3f0e9d8c-7b6a-4e5d-8c4b-3a2f1e0d9c8b", "0000:c1:00.0", 1)],
            )
        ],
    )
    path = resource_claim_template_file_path("gpu.example.com", "accelerator", "gpu", root=root)
    written.append(write_metadata_file(path, inference, versions=[V1ALPHA1], validate="strict"))

    # An SR-IOV virtual function whose network data arrived in a later update (generation 2).
    vf = DeviceMetadata(
        metadata=ObjectMeta(
            name="fast-net",
            namespace="ml",
            uid="c3e8a1f4-5b2d-4c6e-9f7a-8d0b1e2c3a45",
            generation=2,
        ),
        requests=[
            DeviceMetadataRequest(
                name="vf",
                devices=[
                    Device(
                        driver="sriov.example.com",
                        pool="node-a-ens1f0",
                        name="vf-3",
                        attributes={
                            "resource.kubernetes.io/pciBusID": DeviceAttribute(
                                string="0000:3b:02.3"
                            ),
                            "pfName": DeviceAttribute(string="ens1f0"),
                            "vfIndex": DeviceAttribute(int=3),
                            "numaNode": DeviceAttribute(int=0),
                        },
                        network_data=NetworkDeviceData(
                            interface_name="net1",
                            ips=("10.56.217.12/24", "fd00:56::12/64"),
                            hardware_address="ca:fe:c0:ff:ee:03",
                        ),
                    )
                ],
            )
        ],
    )
    path = resource_claim_file_path("sriov.example.com", "fast-net", "vf", root=root)
    written.append(write_metadata_file(path, vf, versions=[V1BETA1, V1ALPHA1], validate="strict"))
    return written


COMMITTED = Path(__file__).parent / "tree"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Write the sample DRA device metadata tree (examples/tree) into DIR.",
        epilog="example: python examples/build_sample_tree.py /tmp/tree && "
        "DRA_METADATA_ROOT=/tmp/tree dra-metadata ls",
    )
    parser.add_argument("directory", metavar="DIR", nargs="?", type=Path, help="where to write")
    parser.add_argument(
        "--committed",
        action="store_true",
        help="rewrite the committed examples/tree (instead of DIR)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="write into DIR even if it holds files already"
    )
    arguments = parser.parse_args(argv)
    if arguments.committed == (arguments.directory is not None):
        parser.error("give DIR, or --committed to rewrite examples/tree (not both)")
    target: Path = COMMITTED if arguments.committed else arguments.directory
    if not arguments.committed:
        if target.resolve() == COMMITTED.resolve():
            parser.error("DIR is the committed examples/tree: use --committed to rewrite it")
        if target.exists() and not target.is_dir():
            parser.error(f"{target} exists and is not a directory")
        if target.is_dir() and any(target.iterdir()) and not arguments.overwrite:
            parser.error(f"{target} is not empty: give an empty DIR, or --overwrite")
    for written_path in build(target):
        print(written_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
