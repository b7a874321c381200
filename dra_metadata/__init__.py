"""Read the device metadata that Kubernetes DRA drivers publish into containers (KEP-5304).

>>> import dra_metadata
>>> metadata = dra_metadata.read_claim_metadata("my-claim", "gpu")  # doctest: +SKIP
>>> [device.attribute("uuid") for device in metadata.devices]  # doctest: +SKIP
"""

# typing.TYPE_CHECKING without importing typing (mypy and the other checkers know the name).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from dra_metadata._decoding._decode import decode_stream
    from dra_metadata._decoding._result import DecodeResult
    from dra_metadata._model._conditions import Condition
    from dra_metadata._model._errors import (
        AttributeNotFoundError,
        AttributeValueError,
        DeviceMetadataError,
        InvalidNameError,
        KubeAPIError,
        MetadataConflictError,
        MetadataDecodeError,
        MetadataEncodeError,
        MetadataNotFoundError,
        MetadataReadError,
        MetadataTooLargeError,
        MetadataValidationError,
        MetadataWriteError,
        NoCompatibleVersionError,
        NoMetadataError,
        PodResourcesError,
        StaleMetadataError,
        WaitTimeoutError,
    )
    from dra_metadata._model._metadata import (
        DeviceMetadata,
        DeviceMetadataRequest,
        ManagedFieldsEntry,
        MetadataSource,
        ObjectMeta,
        OwnerReference,
    )
    from dra_metadata._model._models import (
        AttributeMap,
        AttributeValue,
        Device,
        DeviceAttribute,
        NetworkDeviceData,
    )
    from dra_metadata._model._semver import Version
    from dra_metadata._model._versions import (
        GROUP_NAME,
        KIND,
        KNOWN_API_VERSIONS,
    )
    from dra_metadata._reading._listing import (
        MountedClaim,
        MountedDevice,
        list_claims,
        list_devices,
    )
    from dra_metadata._reading._paths import (
        CONTAINER_DIR,
        METADATA_FILE_SUFFIX,
        RESOURCE_CLAIM_TEMPLATES_SUBDIR,
        RESOURCE_CLAIMS_SUBDIR,
        ROOT_ENVIRONMENT_VARIABLE,
        default_root,
        metadata_file_name,
        resource_claim_file_path,
        resource_claim_request_dir,
        resource_claim_template_file_path,
        resource_claim_template_request_dir,
    )
    from dra_metadata._reading._read import (
        DEFAULT_MAX_SIZE,
        read_claim_metadata,
        read_metadata_file,
        read_template_metadata,
    )
    from dra_metadata._validation._findings import FieldError
    from dra_metadata._validation._profiles import Profile
    from dra_metadata._validation._schema import (
        json_schema,
    )
    from dra_metadata._validation._validate import validate
    from dra_metadata._watch._awaits import await_for, await_for_network_data, await_until
    from dra_metadata._watch._events import MetadataEvent, MetadataEventKind
    from dra_metadata._watch._functions import (
        awatch_claim_metadata,
        awatch_metadata_file,
        awatch_template_metadata,
        watch_claim_metadata,
        watch_metadata_file,
        watch_template_metadata,
    )
    from dra_metadata._watch._options import FORCE_POLLING_ENVIRONMENT_VARIABLE
    from dra_metadata._watch._sources import wait_for, wait_for_network_data, wait_until
    from dra_metadata._watch._type_names import StopEvent, WaitSource
    from dra_metadata._watch._waits import NETWORK_FIELDS, network_data_condition

    __version__: str
    """The installed distribution's version (``0.1.0``)."""

# Every public name is imported on first use: `import dra_metadata` costs next to nothing, and a
# command or program pays only for the parts it uses (a read never loads watching, validation or
# the Kubernetes API; see docs/explanation/performance.md). `dra_metadata.X` is the same object
# as `from dra_metadata._stage._module import X`, cached here once looked up.
_LAZY: dict[str, str] = {
    "DecodeResult": "_decoding._result",
    "Profile": "_validation._profiles",
    "FieldError": "_validation._findings",
    "decode_stream": "_decoding._decode",
    **dict.fromkeys(
        (
            "AttributeNotFoundError",
            "AttributeValueError",
            "DeviceMetadataError",
            "InvalidNameError",
            "KubeAPIError",
            "MetadataConflictError",
            "MetadataDecodeError",
            "MetadataEncodeError",
            "MetadataNotFoundError",
            "MetadataReadError",
            "MetadataTooLargeError",
            "MetadataValidationError",
            "MetadataWriteError",
            "NoCompatibleVersionError",
            "NoMetadataError",
            "PodResourcesError",
            "StaleMetadataError",
            "WaitTimeoutError",
        ),
        "_model._errors",
    ),
    **dict.fromkeys(
        (
            "DeviceMetadata",
            "DeviceMetadataRequest",
            "ManagedFieldsEntry",
            "MetadataSource",
            "ObjectMeta",
            "OwnerReference",
        ),
        "_model._metadata",
    ),
    **dict.fromkeys(
        (
            "AttributeMap",
            "AttributeValue",
            "Device",
            "DeviceAttribute",
            "NetworkDeviceData",
        ),
        "_model._models",
    ),
    "Version": "_model._semver",
    **dict.fromkeys(
        (
            "GROUP_NAME",
            "KIND",
            "KNOWN_API_VERSIONS",
        ),
        "_model._versions",
    ),
    **dict.fromkeys(
        (
            "CONTAINER_DIR",
            "METADATA_FILE_SUFFIX",
            "RESOURCE_CLAIM_TEMPLATES_SUBDIR",
            "RESOURCE_CLAIMS_SUBDIR",
            "ROOT_ENVIRONMENT_VARIABLE",
            "default_root",
            "metadata_file_name",
            "resource_claim_file_path",
            "resource_claim_request_dir",
            "resource_claim_template_file_path",
            "resource_claim_template_request_dir",
        ),
        "_reading._paths",
    ),
    **dict.fromkeys(
        (
            "DEFAULT_MAX_SIZE",
            "read_claim_metadata",
            "read_metadata_file",
            "read_template_metadata",
        ),
        "_reading._read",
    ),
    **dict.fromkeys(
        (
            "MountedClaim",
            "MountedDevice",
            "list_claims",
            "list_devices",
        ),
        "_reading._listing",
    ),
    **dict.fromkeys(
        ("json_schema",),
        "_validation._schema",
    ),
    **dict.fromkeys(
        ("validate",),
        "_validation._validate",
    ),
    "Condition": "_model._conditions",
    **dict.fromkeys(("await_for", "await_for_network_data", "await_until"), "_watch._awaits"),
    **dict.fromkeys(("MetadataEvent", "MetadataEventKind"), "_watch._events"),
    **dict.fromkeys(
        (
            "awatch_claim_metadata",
            "awatch_metadata_file",
            "awatch_template_metadata",
            "watch_claim_metadata",
            "watch_metadata_file",
            "watch_template_metadata",
        ),
        "_watch._functions",
    ),
    "FORCE_POLLING_ENVIRONMENT_VARIABLE": "_watch._options",
    **dict.fromkeys(("wait_for", "wait_for_network_data", "wait_until"), "_watch._sources"),
    **dict.fromkeys(("StopEvent", "WaitSource"), "_watch._type_names"),
    **dict.fromkeys(("NETWORK_FIELDS", "network_data_condition"), "_watch._waits"),
}

__all__ = [
    "CONTAINER_DIR",
    "DEFAULT_MAX_SIZE",
    "FORCE_POLLING_ENVIRONMENT_VARIABLE",
    "GROUP_NAME",
    "KIND",
    "KNOWN_API_VERSIONS",
    "METADATA_FILE_SUFFIX",
    "NETWORK_FIELDS",
    "RESOURCE_CLAIMS_SUBDIR",
    "RESOURCE_CLAIM_TEMPLATES_SUBDIR",
    "ROOT_ENVIRONMENT_VARIABLE",
    "AttributeMap",
    "AttributeNotFoundError",
    "AttributeValue",
    "AttributeValueError",
    "Condition",
    "DecodeResult",
    "Device",
    "DeviceAttribute",
    "DeviceMetadata",
    "DeviceMetadataError",
    "DeviceMetadataRequest",
    "FieldError",
    "InvalidNameError",
    "KubeAPIError",
    "ManagedFieldsEntry",
    "MetadataConflictError",
    "MetadataDecodeError",
    "MetadataEncodeError",
    "MetadataEvent",
    "MetadataEventKind",
    "MetadataNotFoundError",
    "MetadataReadError",
    "MetadataSource",
    "MetadataTooLargeError",
    "MetadataValidationError",
    "MetadataWriteError",
    "MountedClaim",
    "MountedDevice",
    "NetworkDeviceData",
    "NoCompatibleVersionError",
    "NoMetadataError",
    "ObjectMeta",
    "OwnerReference",
    "PodResourcesError",
    "Profile",
    "StaleMetadataError",
    "StopEvent",
    "Version",
    "WaitSource",
    "WaitTimeoutError",
    "await_for",
    "await_for_network_data",
    "await_until",
    "awatch_claim_metadata",
    "awatch_metadata_file",
    "awatch_template_metadata",
    "decode_stream",
    "default_root",
    "json_schema",
    "list_claims",
    "list_devices",
    "metadata_file_name",
    "network_data_condition",
    "read_claim_metadata",
    "read_metadata_file",
    "read_template_metadata",
    "resource_claim_file_path",
    "resource_claim_request_dir",
    "resource_claim_template_file_path",
    "resource_claim_template_request_dir",
    "validate",
    "wait_for",
    "wait_for_network_data",
    "wait_until",
    "watch_claim_metadata",
    "watch_metadata_file",
    "watch_template_metadata",
]


def __dir__() -> list[str]:
    # The lazy names too, without importing them (tab completion, dir(); help() documents
    # each name it lists, so it imports them to read their signatures and docstrings).
    return sorted({*globals(), *__all__, "__version__"})


if not TYPE_CHECKING:  # checkers see the imports above, so a misspelt name stays an error

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is not None:
            from importlib import import_module  # noqa: PLC0415

            value = getattr(import_module(f"dra_metadata.{module}"), name)
            globals()[name] = value
            return value
        if name == "__version__":  # read on demand, and without importlib.metadata's cost
            from dra_metadata._version import installed_version  # noqa: PLC0415

            return installed_version()
        raise AttributeError(f"module 'dra_metadata' has no attribute {name!r}")


del TYPE_CHECKING
