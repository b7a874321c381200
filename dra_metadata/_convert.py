"""Wire objects (as parsed JSON) -> models, with the type checks of Go's JSON decoding.

Rules (spec §3.3): unknown keys are ignored, ``null`` leaves a field at its zero value, integers
must be JSON integers in the int64 range, any other JSON type mismatch is an error naming the
field by its wire path. Attribute maps are checked in bulk and their values built lazily.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from itertools import chain, compress, repeat
from typing import Any, NoReturn, TypeVar

from dra_metadata._models import (
    INT64_MAX,
    INT64_MIN,
    AttributeMap,
    Device,
    DeviceMetadata,
    DeviceMetadataRequest,
    ManagedFieldsEntry,
    NetworkDeviceData,
    ObjectMeta,
    OwnerReference,
    builder,
)

_M = TypeVar("_M")
_AttributeQueue = list[tuple[dict[str, Any], str, AttributeMap]]
"""Attribute maps waiting to be checked: wire object, device path, the map made of it."""


class WireTypeError(Exception):
    """A value of the wrong JSON type; `field` is its wire path."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def describe(value: object) -> str:
    """A JSON-flavoured description of a parsed value for error messages."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _fail(path: str, expected: str, value: object) -> NoReturn:
    raise WireTypeError(path, f"expected {expected}, got {describe(value)}")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# Scalars. Each takes the value and the path of the field; None means "unset" (Go zero value).


def _str(value: object, path: str) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    _fail(path, "a string", value)


def _optional_str(value: object, path: str) -> str | None:
    if value is None or type(value) is str:
        return value
    _fail(path, "a string", value)


def _int64(value: object, path: str) -> int:
    if value is None:
        return 0
    if type(value) is int and INT64_MIN <= value <= INT64_MAX:
        return value
    _fail(path, "an integer in the int64 range", value)


def _optional_int64(value: object, path: str) -> int | None:
    return None if value is None else _int64(value, path)


def _bool(value: object, path: str) -> bool:
    if value is None:
        return False
    if value is True or value is False:
        return value
    _fail(path, "true or false", value)


def _optional_bool(value: object, path: str) -> bool | None:
    return None if value is None else _bool(value, path)


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))\Z"
)
_GO_ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)


def _time(value: object, path: str) -> datetime | None:
    if value is None:
        return None
    if type(value) is not str:
        _fail(path, "an RFC 3339 time string", value)
    match = _RFC3339.match(value)
    if match is None:
        _fail(path, "an RFC 3339 time such as 2006-01-02T15:04:05Z", value)
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    try:
        offset = timedelta(0)
        if not zulu:
            offset = timedelta(hours=int(off_h), minutes=int(off_m))
            offset = -offset if sign == "-" else offset
        parsed = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=timezone(offset),
        ).astimezone(timezone.utc)
    except ValueError as error:
        _fail(path, f"a valid time ({error})", value)
    return None if parsed == _GO_ZERO_TIME else parsed


def _object(value: object, path: str) -> dict[str, Any]:
    if type(value) is dict:
        return value
    if value is None:
        return {}
    _fail(path, "an object", value)


def _list(value: object, path: str) -> list[Any]:
    if type(value) is list:
        return value
    if value is None:
        return []
    _fail(path, "an array", value)


_STR_ONLY = frozenset({str})


def _str_tuple(value: object, path: str) -> tuple[str, ...]:
    items = _list(value, path)
    if set(map(type, items)) <= _STR_ONLY:
        return tuple(items)
    return tuple(_str(item, f"{path}[{index}]") for index, item in enumerate(items))


def _str_map(value: object, path: str) -> dict[str, str]:
    items = _object(value, path)
    return {key: _str(item, f"{path}[{key}]") for key, item in items.items()}


def _json(value: object, path: str) -> Any:  # noqa: ARG001 - same shape as the other checkers
    return value


# Objects of ObjectMeta: table driven (wire name, field name, checker), off the hot path.

_Checker = Callable[[Any, str], Any]


def _owner_reference(value: object, path: str) -> OwnerReference:
    return _from_table(OwnerReference, _OWNER_REFERENCE_FIELDS, _object(value, path), path)


def _managed_fields_entry(value: object, path: str) -> ManagedFieldsEntry:
    return _from_table(ManagedFieldsEntry, _MANAGED_FIELDS_FIELDS, _object(value, path), path)


def _tuple_of(item: _Checker) -> _Checker:
    def check(value: object, path: str) -> tuple[Any, ...]:
        return tuple(
            item(entry, f"{path}[{index}]") for index, entry in enumerate(_list(value, path))
        )

    return check


_OWNER_REFERENCE_FIELDS: tuple[tuple[str, str, _Checker], ...] = (
    ("apiVersion", "api_version", _str),
    ("kind", "kind", _str),
    ("name", "name", _str),
    ("uid", "uid", _str),
    ("controller", "controller", _optional_bool),
    ("blockOwnerDeletion", "block_owner_deletion", _optional_bool),
)
_MANAGED_FIELDS_FIELDS: tuple[tuple[str, str, _Checker], ...] = (
    ("manager", "manager", _str),
    ("operation", "operation", _str),
    ("apiVersion", "api_version", _str),
    ("time", "time", _time),
    ("fieldsType", "fields_type", _str),
    ("fieldsV1", "fields_v1", _json),
    ("subresource", "subresource", _str),
)
_OBJECT_META_FIELDS: tuple[tuple[str, str, _Checker], ...] = (
    ("name", "name", _str),
    ("generateName", "generate_name", _str),
    ("namespace", "namespace", _str),
    ("selfLink", "self_link", _str),
    ("uid", "uid", _str),
    ("resourceVersion", "resource_version", _str),
    ("generation", "generation", _int64),
    ("creationTimestamp", "creation_timestamp", _time),
    ("deletionTimestamp", "deletion_timestamp", _time),
    ("deletionGracePeriodSeconds", "deletion_grace_period_seconds", _optional_int64),
    ("labels", "labels", _str_map),
    ("annotations", "annotations", _str_map),
    ("ownerReferences", "owner_references", _tuple_of(_owner_reference)),
    ("finalizers", "finalizers", _str_tuple),
    ("managedFields", "managed_fields", _tuple_of(_managed_fields_entry)),
)
WIRE_FIELD_TABLES: dict[type, tuple[tuple[str, str, _Checker], ...]] = {
    OwnerReference: _OWNER_REFERENCE_FIELDS,
    ManagedFieldsEntry: _MANAGED_FIELDS_FIELDS,
    ObjectMeta: _OBJECT_META_FIELDS,
}
"""Wire name and field name of every field, in field order (a test ties them to the models)."""
_BUILDERS: dict[type, Callable[..., Any]] = {model: builder(model) for model in WIRE_FIELD_TABLES}


def _from_table(
    model: type[_M], table: tuple[tuple[str, str, _Checker], ...], raw: dict[str, Any], path: str
) -> _M:
    get = raw.get
    build = _BUILDERS[model]
    return build(*[check(get(wire), _join(path, wire)) for wire, _, check in table])  # type: ignore[no-any-return]


# The hot path: requests, devices, attributes, network data.

_ATTRIBUTE_SCALARS: dict[str, type] = {"int": int, "bool": bool, "string": str, "version": str}
_ATTRIBUTE_LISTS: dict[str, type] = {"ints": int, "bools": bool, "strings": str, "versions": str}
_MEMBER_TYPES: dict[str, type] = {
    **_ATTRIBUTE_SCALARS,
    **dict.fromkeys(_ATTRIBUTE_LISTS, list),
}
_getitem = operator.getitem
_chain = chain.from_iterable
_compress = compress
_repeat = repeat
_is = operator.is_
_ZERO = {int: 0, bool: False, str: ""}
_EXPECTED = {int: "an integer in the int64 range", bool: "true or false", str: "a string"}


def _check_attribute_maps(maps: _AttributeQueue) -> bool:
    """Type-check the wire ``attributes`` objects of all devices at once.

    Returns whether every attribute turned out to hold exactly one scalar member, which spares
    validation from looking at them again.

    This is the hot path of decoding, so every loop runs in C (map, chain, list comparison)
    over all attributes of the object together: the type each member name calls for is compared
    with the type found. It assumes one member per attribute (what a valid file has); anything
    else (null values, several or unknown members, lists, integers out of range) takes the
    precise path, which also names the culprit.
    """
    values = list(_chain(map(dict.values, [attributes for attributes, _, _ in maps])))
    try:
        names = list(_chain(values))
        if len(names) != len(values):
            raise KeyError  # noqa: TRY301 - some attribute has no member or several
        # With as many names as attributes and none empty (getitem would raise), every
        # attribute has exactly one member and names[i] belongs to values[i].
        members: list[Any] = list(map(_getitem, values, names))
    except (TypeError, KeyError):
        _check_one_by_one(maps)
        return False
    found = list(map(type, members))
    if list(map(_MEMBER_TYPES.get, names)) != found or list in found:
        _check_one_by_one(maps)
        return False
    if int in found:
        ints: list[int] = list(_compress(members, map(_is, found, _repeat(int))))
        if max(ints) > INT64_MAX or min(ints) < INT64_MIN:
            _check_one_by_one(maps)  # raises
    return True


def _check_one_by_one(maps: _AttributeQueue) -> None:
    for attributes, device_path, _ in maps:
        _check_attributes_one_by_one(attributes, f"{device_path}.attributes")


def _is_of_kind(value: object, kind: type) -> bool:
    return type(value) is kind and (kind is not int or INT64_MIN <= value <= INT64_MAX)  # type: ignore[operator]


def _check_attributes_one_by_one(attributes: dict[str, Any], path: str) -> None:
    """Check every attribute; zero the ``null`` elements of list members in place (as Go does)."""
    for key, value in attributes.items():
        attribute_path = f"{path}[{key}]"
        if value is None:
            continue
        if type(value) is not dict:
            _fail(attribute_path, "an object", value)
        for name, kind in _ATTRIBUTE_SCALARS.items():
            member = value.get(name)
            if member is not None and not _is_of_kind(member, kind):
                _fail(f"{attribute_path}.{name}", _EXPECTED[kind], member)
        for name, kind in _ATTRIBUTE_LISTS.items():
            member_path = f"{attribute_path}.{name}"
            elements = _list(value.get(name), member_path)
            for index, element in enumerate(elements):
                if element is None:
                    elements[index] = _ZERO[kind]
                elif not _is_of_kind(element, kind):
                    _fail(f"{member_path}[{index}]", _EXPECTED[kind], element)


def _network_data(value: object, device_path: str) -> NetworkDeviceData:
    raw = value if type(value) is dict else _object(value, f"{device_path}.networkData")
    get = raw.get
    interface_name, ips, hardware_address = get("interfaceName"), get("ips"), get("hardwareAddress")
    if type(interface_name) is not str:
        interface_name = _str(interface_name, f"{device_path}.networkData.interfaceName")
    if type(hardware_address) is not str:
        hardware_address = _str(hardware_address, f"{device_path}.networkData.hardwareAddress")
    if type(ips) is list and set(map(type, ips)) <= _STR_ONLY:
        ips = tuple(ips)
    else:
        ips = _str_tuple(ips, f"{device_path}.networkData.ips")
    return _build_network_data(interface_name, ips, hardware_address)


def _device(value: object, path: str, attribute_maps: _AttributeQueue) -> Device:
    """A Device; its attributes are queued in ``attribute_maps`` to be checked all together."""
    raw = value if type(value) is dict else _object(value, path)
    get = raw.get
    driver, pool, name = get("driver"), get("pool"), get("name")
    attributes = get("attributes")
    if type(attributes) is not dict:
        attributes = _object(attributes, f"{path}.attributes")
    attribute_map = AttributeMap.from_checked_wire(attributes)
    if attributes:
        attribute_maps.append((attributes, path, attribute_map))
    if type(driver) is not str:
        driver = _str(driver, f"{path}.driver")
    if type(pool) is not str:
        pool = _str(pool, f"{path}.pool")
    if type(name) is not str:
        name = _str(name, f"{path}.name")
    network_data = get("networkData")
    return _build_device(
        driver,
        pool,
        name,
        attribute_map,
        None if network_data is None else _network_data(network_data, path),
    )


def _request(value: object, path: str, attribute_maps: _AttributeQueue) -> DeviceMetadataRequest:
    raw = _object(value, path)
    devices_path = f"{path}.devices"
    devices = _list(raw.get("devices"), devices_path)
    return _build_request(
        _str(raw.get("name"), f"{path}.name"),
        tuple(
            [
                _device(device, f"{devices_path}[{index}]", attribute_maps)
                for index, device in enumerate(devices)
            ]
        ),
    )


_SIMPLE_META_KEYS = frozenset({"name", "namespace", "uid", "generation"})
_META_TAIL = (None, None, None)  # creation/deletion timestamps, grace period
_NO_OWNERS_FINALIZERS_MANAGERS = ((), (), ())


def _object_meta(value: object) -> ObjectMeta:
    meta = _object(value, "metadata")
    if meta.keys() <= _SIMPLE_META_KEYS:  # what drivers write: skip the full table
        get = meta.get
        name, namespace, uid = get("name", ""), get("namespace", ""), get("uid", "")
        generation = get("generation", 0)
        if (
            type(name) is str
            and type(namespace) is str
            and type(uid) is str
            and type(generation) is int
            and 0 <= generation <= INT64_MAX
        ):
            return _build_object_meta(
                name, "", namespace, "", uid, "", generation, *_META_TAIL, {}, {},
                *_NO_OWNERS_FINALIZERS_MANAGERS,
            )  # fmt: skip
    return _from_table(ObjectMeta, _OBJECT_META_FIELDS, meta, "metadata")


def metadata_from_wire(raw: dict[str, Any], api_version: str) -> DeviceMetadata:
    """A DeviceMetadata from one parsed wire object; raises WireTypeError."""
    attribute_maps: _AttributeQueue = []
    requests = tuple(
        _request(request, f"requests[{index}]", attribute_maps)
        for index, request in enumerate(_list(raw.get("requests"), "requests"))
    )
    if attribute_maps and _check_attribute_maps(attribute_maps):
        for _, _, attribute_map in attribute_maps:
            attribute_map.one_scalar_member_each = True
    return _build_metadata(
        api_version,
        _object_meta(raw.get("metadata")),
        _optional_str(raw.get("podClaimName"), "podClaimName"),
        requests,
        (),
    )


_build_object_meta = builder(ObjectMeta)
_build_network_data = builder(NetworkDeviceData)
_build_device = builder(Device)
_build_request = builder(DeviceMetadataRequest)
_build_metadata = builder(DeviceMetadata)
