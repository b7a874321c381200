"""JSON exports of DeviceMetadata: the wire object of one API version, and the stable document.

Both are plain dicts, lists, str, int, bool and None that the standard library's json module
writes as they are. `DeviceMetadata.to_wire` and `DeviceMetadata.to_document` call these.
"""

from __future__ import annotations

from dra_metadata._model._models import wire_attribute
from dra_metadata._model._versions import KNOWN_API_VERSIONS
from dra_metadata._model._wire import _wire_dict

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from dra_metadata._model._metadata import DeviceMetadata
    from dra_metadata._model._models import Device, NetworkDeviceData


def wire(metadata: DeviceMetadata, api_version: str | None = None) -> dict[str, Any]:
    """The object encode_stream writes for ``api_version`` (default: the object's own version,
    else the newest known one), as new dicts and lists."""
    if api_version is not None and not isinstance(api_version, str):
        raise TypeError(f"api_version must be a str or None, not {type(api_version).__name__}")
    version = (
        (metadata.api_version or KNOWN_API_VERSIONS[0]) if api_version is None else api_version
    )
    return _wire_dict(metadata, version)


def network_document(data: NetworkDeviceData | None) -> dict[str, Any] | None:
    """Network data as the documents show it: every key present; None stays None."""
    if data is None:
        return None
    return {
        "interfaceName": data.interface_name,
        "ips": list(data.ips),
        "hardwareAddress": data.hardware_address,
    }


def device_document(device: Device) -> dict[str, Any]:
    """A device as the document shows it: wire names, every key present, attributes sorted."""
    attributes = device.attributes
    return {
        "driver": device.driver,
        "pool": device.pool,
        "name": device.name,
        "attributes": {key: wire_attribute(attributes[key]) for key in sorted(attributes)},
        "networkData": network_document(device.network_data),
    }


def document(metadata: DeviceMetadata) -> dict[str, Any]:
    """The stable document of ``dra-metadata show -o json`` and ``wait -o json``.

    Documented in docs/reference/cli.md, "JSON documents".
    """
    return {
        "name": metadata.name,
        "namespace": metadata.namespace,
        "uid": metadata.uid,
        "podClaimName": metadata.pod_claim_name,
        "files": [
            {
                "path": None if source.path is None else str(source.path),
                "driver": source.driver,
                "apiVersion": source.api_version,
                "generation": source.generation,
                "skippedVersions": list(source.skipped_versions),
                "stale": source.stale,
            }
            for source in metadata.sources
        ],
        "requests": [
            {"name": request.name, "devices": [device_document(d) for d in request.devices]}
            for request in metadata.requests
        ],
    }
