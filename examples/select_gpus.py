"""Pick this pod's GPUs from DRA device metadata and set CUDA_VISIBLE_DEVICES (no torch needed).

Run as a container's entrypoint in front of the real command:

    python select_gpus.py CLAIM REQUEST [-- COMMAND ...]

It reads the claim's metadata, orders the GPUs by PCI bus ID (so that device 0 is the same GPU
in every process of the pod), and exports CUDA_VISIBLE_DEVICES with their UUIDs when the driver
publishes them (indexes otherwise). With a COMMAND it replaces itself with it; without, it prints
the variables. DRA_METADATA_ROOT points it at another tree (examples/tree for a try).
"""

from __future__ import annotations

import os
import sys

import dra_metadata

PCI_BUS_ID = "resource.kubernetes.io/pciBusID"


def visible_devices(claim: str, request: str) -> dict[str, str]:
    metadata = dra_metadata.read_claim_metadata(claim, request)
    gpus = [
        device
        for device in metadata.devices
        if device.get_attribute("uuid") is not None or device.get_attribute("index") is not None
    ]
    gpus.sort(key=lambda device: str(device.attribute(PCI_BUS_ID, "")))
    uuids = [device.attribute("uuid") for device in gpus]
    if all(isinstance(uuid, str) for uuid in uuids):
        chosen = [str(uuid) for uuid in uuids]
    else:
        chosen = [str(device.attribute("index")) for device in gpus]
    return {
        "CUDA_VISIBLE_DEVICES": ",".join(chosen),
        "GPU_PCI_BUS_IDS": ",".join(str(device.attribute(PCI_BUS_ID, "")) for device in gpus),
    }


def main(arguments: list[str]) -> int:
    if len(arguments) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    claim, request, *rest = arguments
    try:
        variables = visible_devices(claim, request)
    except dra_metadata.DeviceMetadataError as error:
        print(f"select_gpus: {error}", file=sys.stderr)
        return 1
    if rest and rest[0] == "--":
        rest = rest[1:]
    if rest:
        os.execvpe(rest[0], rest, {**os.environ, **variables})  # noqa: S606 - the command to run
    for name, value in variables.items():
        print(f"{name}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
