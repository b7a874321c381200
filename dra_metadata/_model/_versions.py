"""The API versions this library understands, newest first, and apiVersion parsing."""

from __future__ import annotations

GROUP_NAME = "metadata.resource.k8s.io"
"""API group of the DeviceMetadata kind."""
KIND = "DeviceMetadata"
"""The only kind a metadata stream carries."""
V1BETA1 = f"{GROUP_NAME}/v1beta1"
V1ALPHA1 = f"{GROUP_NAME}/v1alpha1"
KNOWN_API_VERSIONS: tuple[str, ...] = (V1BETA1, V1ALPHA1)
"""Every apiVersion this library decodes and writes, newest first."""


class ApiVersionError(ValueError):
    """An apiVersion string from which no group/version can be determined."""


def normalize_api_version(api_version: str) -> str:
    """``group/version`` as Kubernetes prints it (``version`` alone for the core group).

    Raises ApiVersionError for an empty value, an empty version part or more than one '/'.
    """
    if api_version in {"", "/"}:
        raise ApiVersionError("Object 'apiVersion' is missing or empty")
    parts = api_version.split("/")
    if len(parts) > 2:
        raise ApiVersionError(f"unexpected GroupVersion string: {api_version!r}")
    if len(parts) == 1:
        return api_version
    group, version = parts
    if not version:
        raise ApiVersionError(f"apiVersion {api_version!r} has no version part")
    return version if not group else api_version
