"""The wire form of a DeviceMetadata: the object Go's writer encodes, as dicts and lists.

Owns what ``DeviceMetadata.to_wire`` returns and what ``dra_metadata.writer.encode_stream``
encodes: Go's field order, ``omitempty``, sorted maps and RFC 3339 times, and where a value
that JSON cannot hold sits (MetadataEncodeError). Moved here from the writer so that the models
reach their wire form without importing the writer (and, through it, reading and decoding).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

import orjson

from dra_metadata._model._errors import MetadataEncodeError, shown_names
from dra_metadata._model._models import DeviceAttribute, wire_attribute
from dra_metadata._model._raw_json import json_depth
from dra_metadata._model._versions import KIND, KNOWN_API_VERSIONS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, Literal

    _Layout = Literal["struct", "map", "json"]

    from dra_metadata._model._metadata import (
        DeviceMetadata,
        DeviceMetadataRequest,
        ManagedFieldsEntry,
        ObjectMeta,
        OwnerReference,
    )
    from dra_metadata._model._models import AttributeMap, Device


def _check_versions(versions: Iterable[str]) -> tuple[str, ...]:
    if isinstance(versions, str):
        raise TypeError(f"versions must be a sequence of API versions, not a str: [{versions!r}]?")
    chosen = tuple(versions)
    if not chosen:
        raise ValueError("metadata versions must be chosen explicitly: none given")
    for version in chosen:
        if version not in KNOWN_API_VERSIONS:
            raise ValueError(
                f"metadata version {version!r} is not supported; "
                f"known versions: {', '.join(KNOWN_API_VERSIONS)}"
            )
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"metadata versions must not repeat: {shown_names(chosen)}")
    return chosen


def _time(value: datetime) -> str:
    moment = (value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value).astimezone(
        timezone.utc
    )
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


def _sorted_map(values: Any) -> dict[str, Any]:
    return {key: values[key] for key in sorted(values)}


def _owner_reference(reference: OwnerReference) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "apiVersion": reference.api_version,
        "kind": reference.kind,
        "name": reference.name,
        "uid": reference.uid,
    }
    if reference.controller is not None:
        wire["controller"] = reference.controller
    if reference.block_owner_deletion is not None:
        wire["blockOwnerDeletion"] = reference.block_owner_deletion
    return wire


def _managed_fields_entry(entry: ManagedFieldsEntry) -> dict[str, Any]:
    wire = _non_empty(
        {
            "manager": entry.manager,
            "operation": entry.operation,
            "apiVersion": entry.api_version,
            "time": None if entry.time is None else _time(entry.time),
            "fieldsType": entry.fields_type,
        }
    )
    if entry.fields_v1 is not None:
        wire["fieldsV1"] = entry.fields_v1
    if entry.subresource:
        wire["subresource"] = entry.subresource
    return wire


def _non_empty(wire: dict[str, Any]) -> dict[str, Any]:
    """Go's ``omitempty`` for strings, integers and collections: drop the empty values."""
    return {key: value for key, value in wire.items() if value}


def _object_meta(meta: ObjectMeta) -> dict[str, Any]:  # noqa: C901
    """Go's ObjectMeta: empty strings, integers and collections are omitted, and so are the
    timestamps and the grace period when unset."""
    # One test per field: less than half the time of filtering a dict of all of them.
    wire: dict[str, Any] = {}
    if meta.name:
        wire["name"] = meta.name
    if meta.generate_name:
        wire["generateName"] = meta.generate_name
    if meta.namespace:
        wire["namespace"] = meta.namespace
    if meta.self_link:
        wire["selfLink"] = meta.self_link
    if meta.uid:
        wire["uid"] = meta.uid
    if meta.resource_version:
        wire["resourceVersion"] = meta.resource_version
    if meta.generation:
        wire["generation"] = meta.generation
    if meta.creation_timestamp is not None:
        wire["creationTimestamp"] = _time(meta.creation_timestamp)
    if meta.deletion_timestamp is not None:
        wire["deletionTimestamp"] = _time(meta.deletion_timestamp)
    if meta.deletion_grace_period_seconds is not None:
        wire["deletionGracePeriodSeconds"] = meta.deletion_grace_period_seconds
    if (
        meta.labels
        or meta.annotations
        or meta.owner_references
        or meta.finalizers
        or meta.managed_fields
    ):
        wire.update(_object_meta_collections(meta))
    return wire


def _object_meta_collections(meta: ObjectMeta) -> dict[str, Any]:
    return _non_empty(
        {
            "labels": _sorted_map(meta.labels),
            "annotations": _sorted_map(meta.annotations),
            "ownerReferences": [_owner_reference(item) for item in meta.owner_references],
            "finalizers": list(meta.finalizers),
            "managedFields": [_managed_fields_entry(item) for item in meta.managed_fields],
        }
    )


def _wire_attributes(attributes: AttributeMap) -> dict[str, Any]:
    """Go's wire objects of a map built by hand (or decoded with lists or nulls), sorted."""
    entries = attributes._entries  # noqa: SLF001
    names = sorted(entries)
    if entries and isinstance(entries[names[0]], DeviceAttribute):  # built by hand: all are
        return {name: wire_attribute(entries[name]) for name in names}
    return {name: wire_attribute(attributes[name]) for name in names}


def _devices(devices: Sequence[Device]) -> list[dict[str, Any]]:
    wires = []
    # The devices of one driver usually share their attribute names, which a Go writer left
    # sorted: once one device's names were found sorted, a list comparison checks the next.
    sorted_names: list[str] | None = None
    for device in devices:
        wire: dict[str, Any] = {"driver": device.driver, "pool": device.pool, "name": device.name}
        attributes: AttributeMap = device.attributes
        try:
            wire_objects_as_go_writes = attributes.one_scalar_member_each
        except AttributeError:
            wire_objects_as_go_writes = False
        # A decoded map whose every attribute the decoder found to hold one scalar member
        # still holds the wire objects, which are already exactly what Go writes for them.
        entries = (
            attributes._entries  # noqa: SLF001
            if wire_objects_as_go_writes
            else _wire_attributes(attributes)
        )
        if entries:
            names = list(entries)
            if names != sorted_names:
                ordered = sorted(names)  # Timsort: a single pass over sorted names
                if names == ordered:
                    sorted_names = names
                else:
                    entries = {name: entries[name] for name in ordered}
            wire["attributes"] = entries
        network_data = device.network_data
        if network_data is not None:
            network: dict[str, Any] = {}  # Go omits each member when empty
            if network_data.interface_name:
                network["interfaceName"] = network_data.interface_name
            if network_data.ips:
                network["ips"] = network_data.ips  # a tuple, which orjson writes as an array
            if network_data.hardware_address:
                network["hardwareAddress"] = network_data.hardware_address
            wire["networkData"] = network
        wires.append(wire)
    return wires


def _request(request: DeviceMetadataRequest) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": request.name}
    if request.devices:
        wire["devices"] = _devices(request.devices)
    return wire


def _wire_object(metadata: DeviceMetadata, api_version: str) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "kind": KIND,
        "apiVersion": api_version,
        "metadata": _object_meta(metadata.metadata),
    }
    if metadata.pod_claim_name is not None:
        wire["podClaimName"] = metadata.pod_claim_name
    if metadata.requests:
        wire["requests"] = [_request(request) for request in metadata.requests]
    return wire


def _wire_dict(metadata: DeviceMetadata, api_version: str) -> dict[str, Any]:
    """The object ``encode_stream`` writes for ``api_version``, as new dicts, lists and scalars.

    For DeviceMetadata.to_wire: a copy (nothing of it is shared with ``metadata``) that the
    standard library's json module can write; raises what encode_stream raises.
    """
    (version,) = _check_versions((api_version,))
    wire = _wire_object(metadata, version)
    try:
        copy: dict[str, Any] = orjson.loads(orjson.dumps(wire))
    except orjson.JSONEncodeError:
        raise MetadataEncodeError(*_locate_unencodable(wire, "", "struct")) from None
    return copy


# Under these keys of a Go struct are maps, whose keys are data, and (fieldsV1) raw JSON.
_MAP_FIELDS = frozenset({"labels", "annotations", "attributes"})


_RAW_JSON_FIELDS = frozenset({"fieldsV1"})


def _why_unencodable(value: Any) -> str:
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError as error:
        return str(error)
    return ""


_TOO_DEEP = "Recursion limit reached"
"""orjson's reason for a value nested deeper than it writes (255 levels, the whole object's)."""


def _locate_unencodable(value: Any, path: str, layout: _Layout) -> tuple[str, str]:
    """The wire path of the innermost part of ``value`` that orjson cannot write, and why.

    Only called after a failure, so walking the object part by part costs nothing otherwise.
    A loop, not a recursion: a kept JSON value (fieldsV1) may nest deeper than Python recurses;
    such a value is named as a whole, with its depth.
    """
    if _why_unencodable(value) == _TOO_DEEP:
        deepest = _deepest_kept_json(value, path, layout)
        if deepest is not None:
            return deepest[0], (
                f"it nests {deepest[1]} levels deep, more than the JSON encoder writes (255 "
                "levels, counted from the top of the object)"
            )
    while True:
        inner = _unencodable_part(value, path, layout)
        if inner is None:
            return path or "the object", _why_unencodable(value)
        value, path, layout, key_problem = inner
        if key_problem:
            return path, f"its key: {key_problem}"


def _deepest_kept_json(value: Any, path: str, layout: _Layout) -> tuple[str, int] | None:
    """The path and depth of the most deeply nested kept JSON value (fieldsV1) in ``value``."""
    deepest: tuple[str, int] | None = None
    pending = [(value, path, layout)]
    while pending:
        item, item_path, item_layout = pending.pop()
        if item_layout == "json":
            depth = json_depth(item)
            if deepest is None or depth > deepest[1]:
                deepest = (item_path, depth)
        elif isinstance(item, dict):
            for key, inner in item.items():
                shown = _printable(key)
                inner_path = (
                    (f"{item_path}.{shown}" if item_path else shown)
                    if item_layout == "struct"
                    else f"{item_path}[{shown}]"
                )
                pending.append((inner, inner_path, _inner_layout(item_layout, key)))
        elif isinstance(item, (list, tuple)):
            pending.extend(
                (inner, f"{item_path}[{index}]", item_layout) for index, inner in enumerate(item)
            )
    return deepest


def _unencodable_part(
    value: Any, path: str, layout: _Layout
) -> tuple[Any, str, _Layout, str] | None:
    """The first part of ``value`` that cannot be written (or whose key cannot), or None."""
    if isinstance(value, dict):
        for key, item in value.items():
            shown = _printable(key)
            item_path = (
                (f"{path}.{shown}" if path else shown) if layout == "struct" else f"{path}[{shown}]"
            )
            key_problem = _why_unencodable({key: None})
            if key_problem or _why_unencodable(item):
                return item, item_path, _inner_layout(layout, key), key_problem
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if _why_unencodable(item):
                return item, f"{path}[{index}]", layout, ""
    return None


def _inner_layout(layout: _Layout, key: object) -> _Layout:
    if layout == "struct":
        if key in _RAW_JSON_FIELDS:
            return "json"
        return "map" if key in _MAP_FIELDS else "struct"
    return "struct" if layout == "map" else "json"  # a map's values are structs (attributes)


def _printable(key: object) -> str:
    """A key as it can be shown in a message (lone surrogates escaped, not printed)."""
    if isinstance(key, str):
        return key.encode("utf-8", "backslashreplace").decode("utf-8")
    return repr(key)
