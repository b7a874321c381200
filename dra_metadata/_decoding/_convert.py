"""Wire objects (as parsed JSON) -> models, with the type checks of Go's JSON decoding.

Rules (spec §3.3): unknown keys are ignored, ``null`` leaves a field at its zero value, integers
must be JSON integers in the int64 range, any other JSON type mismatch is an error naming the
field by its wire path. Attribute maps are checked in bulk and their values built lazily.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable
from itertools import chain, compress, count, repeat
from operator import is_, itemgetter

from dra_metadata._decoding._fields import (
    _STR_ONLY,
    _fail,
    _int64,
    _json,
    _list,
    _object,
    _optional_bool,
    _optional_int64,
    _str,
    _str_map,
    _str_tuple,
    _time,
)
from dra_metadata._model._checks import INT64_MAX, INT64_MIN
from dra_metadata._model._metadata import (
    DeviceMetadata,
    DeviceMetadataRequest,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
    build_metadata,
    build_request,
)
from dra_metadata._model._models import (
    AttributeMap,
    Device,
    NetworkDeviceData,
    build_device,
    build_network_data,
)
from dra_metadata._model._object_meta import (
    build_managed_fields_entry,
    build_object_meta,
    build_owner_reference,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _M = TypeVar("_M")
    _AttributeQueue = list[tuple[dict[str, Any], int, int, AttributeMap]]
    """Attribute maps waiting to be checked: wire object, request and device index, the map."""
    _Pick = Callable[[Any], tuple[Any, ...]]
    _Checker = Callable[[Any, str], Any]


# Objects of ObjectMeta: table driven (wire name, field name, checker), off the hot path.


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
_BUILDERS: dict[type, Callable[..., Any]] = {
    OwnerReference: build_owner_reference,
    ManagedFieldsEntry: build_managed_fields_entry,
    ObjectMeta: build_object_meta,
}


def _from_table(
    model: type[_M], table: tuple[tuple[str, str, _Checker], ...], raw: dict[str, Any], path: str
) -> _M:
    get = raw.get
    build = _BUILDERS[model]
    return build(*[check(get(wire), f"{path}.{wire}") for wire, _, check in table])  # type: ignore[no-any-return]


# The hot path: requests, devices, attributes, network data.

_ATTRIBUTE_SCALARS: dict[str, type] = {"int": int, "bool": bool, "string": str, "version": str}
_ATTRIBUTE_LISTS: dict[str, type] = {"ints": int, "bools": bool, "strings": str, "versions": str}
_MEMBER_TYPES: dict[str, type] = {
    **_ATTRIBUTE_SCALARS,
    **dict.fromkeys(_ATTRIBUTE_LISTS, list),
}
_LIST_NAMES = {
    element_type: frozenset(name for name, kind in _ATTRIBUTE_LISTS.items() if kind is element_type)
    for element_type in (int, bool, str)
}
_IS_LIST_OF = {
    element_type: {name: name in lists for name in _MEMBER_TYPES}
    for element_type, lists in _LIST_NAMES.items()
}
_chain = chain.from_iterable
_ZERO = {int: 0, bool: False, str: ""}
_EXPECTED = {int: "an integer in the int64 range", bool: "true or false", str: "a string"}


class _Layout(tuple):  # type: ignore[type-arg]  # of the four parts below
    """The member name of each attribute of an object, in order, and what the names call for:
    a tuple (the compiled check reads its parts by position) whose parts have names."""

    __slots__ = ()
    if TYPE_CHECKING:
        names: list[str]
        types: list[type]  # a list: comparing lists is faster than comparing tuples
        ints: _Pick | None  # picks the integer members, which must be in the int64 range
        lists_of: tuple[tuple[type, _Pick], ...]  # per element type of some list: its picker
    else:
        names, types, ints, lists_of = map(property, map(itemgetter, range(4)))

    def __new__(cls, *parts: object) -> _Layout:  # noqa: PYI034 - typing.Self is 3.11+
        return tuple.__new__(cls, parts)


_LAYOUTS: dict[str, _Layout] = {}
"""The layout last seen after each first attribute name: the guess tried first."""
_LAYOUTS_KEPT = 16
_LARGEST_LAYOUT_KEPT = 4096
"""Attributes of a layout kept (128 devices of 32): a larger object is checked at a cost
that dwarfs working its layout out, and would take memory."""


def _check_attribute_maps(maps: _AttributeQueue) -> bool:
    """Type-check the wire ``attributes`` objects of all devices at once.

    Returns whether every attribute turned out to hold exactly one scalar member, which spares
    validation and the writer from looking at them again.

    This is the hot path of decoding, so every loop runs in C over all attributes of the object
    together: the member names of a layout are looked up in the attributes, the types they call
    for compared with the types found (in one loop of the compiled module where it is there,
    else with map, itemgetter and list comparison: see `_members_as_laid_out`), and the
    elements of list members checked by element type. The layout is the one last seen for
    attributes of the same first name, else worked out anew (`_derive_layout`). It assumes one
    member per attribute (what a valid file has); anything else (an attribute that is not an
    object, several or no members, null values, unknown members, integers out of range) takes
    the precise path, which also names the culprit.
    """
    first = maps[0][0]
    values: Collection[Any]
    if len(maps) == 1:
        values = first.values()
    else:
        values = list(_chain([entry[0].values() for entry in maps]))
    first_name = next(iter(first))
    layout = _LAYOUTS.get(first_name)
    members = None if layout is None else _members_as_laid_out(values, layout)
    if layout is None or members is None:
        try:
            layout, members = _derive_layout(maps, values)
        except (TypeError, KeyError):
            _check_one_by_one(maps)
            return False
        if len(values) <= _LARGEST_LAYOUT_KEPT:
            if len(_LAYOUTS) >= _LAYOUTS_KEPT:
                _LAYOUTS.clear()
            _LAYOUTS[first_name] = layout
        if layout.ints is not None and max(layout.ints(members)) > INT64_MAX:
            _check_one_by_one(maps)  # raises
    if layout.lists_of:
        if not _list_members_are_typed(layout, members):
            _check_one_by_one(maps)
        return False
    return True


def _python_members_as_laid_out(values: Collection[Any], layout: _Layout) -> list[Any] | None:
    """The member of each attribute if the attributes have the layout, each exactly one
    member of the type its name calls for, integers in the int64 range (the only ones orjson
    gives are at least INT64_MIN); else None."""
    if len(values) != len(layout.names):
        return None
    try:  # dict.__getitem__ refuses anything that is not an object (TypeError)
        members = list(map(_member_of, values, layout.names))
    except (KeyError, TypeError):
        return None
    if list(map(type, members)) != layout.types or sum(map(len, values)) != len(values):
        return None
    if layout.ints is not None and max(layout.ints(members)) > INT64_MAX:
        return None
    return members


_member_of = dict.__getitem__


def _choose_members_as_laid_out() -> Callable[[Collection[Any], _Layout], list[Any] | None]:
    """The compiled `_python_members_as_laid_out` (dra_metadata/_decoding/_speedups.c) when the
    package was built with it and PURE_PYTHON_VARIABLE does not ask for Python; else the Python
    one."""
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return _python_members_as_laid_out
    try:
        from dra_metadata._decoding._speedups import members_as_laid_out  # noqa: PLC0415
    except ImportError:
        return _python_members_as_laid_out
    return members_as_laid_out


PURE_PYTHON_VARIABLE = "DRA_METADATA_PURE_PYTHON"
"""Set to 1 to decode without the compiled attribute check (read once, at import)."""
_members_as_laid_out = _choose_members_as_laid_out()
COMPILED = _members_as_laid_out is not _python_members_as_laid_out
"""Whether this process checks attributes with the compiled module (benchmarks and tests)."""


def _derive_layout(maps: _AttributeQueue, values: Collection[Any]) -> tuple[_Layout, list[Any]]:
    """The layout of the attributes and their members: the first device's repeated, if every
    device has it, else that of all attributes together; raises KeyError or TypeError unless
    every attribute is an object with exactly one member of the type its name calls for."""
    names = list(_chain(maps[0][0].values()))
    if len(maps) > 1 and len(values) == len(names) * len(maps):
        try:
            layout = _layout(names, len(maps))
        except KeyError:
            pass
        else:
            members = _members_as_laid_out(values, layout)
            if members is not None:
                return layout, members
    if len(maps) > 1:
        names = list(_chain(values))
    if len(names) != len(values):
        raise KeyError  # some attribute has several members or none
    # With as many names as attributes, names[i] belongs to values[i] unless some attribute
    # has no member, which the lookup of another's name in it reveals (KeyError).
    layout = _layout(names, 1)
    members = list(map(_member_of, values, names))
    if list(map(type, members)) != layout.types:
        raise KeyError  # a member of another type
    return layout, members


def _layout(names: list[str], repeats: int) -> _Layout:
    """The layout of ``repeats`` runs of attributes with these member names; KeyError for an
    unknown name."""
    look_up = _tuple_getter(names)
    member_types = look_up(_MEMBER_TYPES)
    types = list(member_types) * repeats
    ints = _positions(map(is_, types, repeat(int)))
    lists_of = (
        tuple(
            (kind, _tuple_getter(_positions(look_up(_IS_LIST_OF[kind]) * repeats)))
            for kind, lists in _LIST_NAMES.items()
            if not lists.isdisjoint(names)
        )
        if list in member_types  # the usual attributes hold scalars only: no list names to find
        else ()
    )
    return _Layout(names * repeats, types, _tuple_getter(ints) if ints else None, lists_of)


def _positions(chosen: Iterable[bool]) -> list[int]:
    return list(compress(count(), chosen))


def _tuple_getter(keys: list[Any]) -> _Pick:
    """An itemgetter of ``keys`` that gives a tuple even for one key: what a table holds for
    each name, or the items of a list at these positions, all fetched in C."""
    if len(keys) == 1:
        only = keys[0]
        return lambda container: (container[only],)
    return itemgetter(*keys)


def _list_members_are_typed(layout: _Layout, members: list[Any]) -> bool:
    """Whether each element of the list members has the member's element type (integers in
    the int64 range): the elements of all lists of one element type are checked together."""
    for element_type, pick in layout.lists_of:
        elements = list(_chain(pick(members)))
        if element_type is str:
            try:
                "".join(elements)  # refuses anything but str, faster than looking at types
            except TypeError:
                return False
            continue
        if not set(map(type, elements)) <= {element_type}:
            return False
        if element_type is int and elements and max(elements) > INT64_MAX:
            return False
    return True


def _check_one_by_one(maps: _AttributeQueue) -> None:
    for attributes, request, device, _ in maps:
        path = f"requests[{request}].devices[{device}].attributes"
        _check_attributes_one_by_one(attributes, path)


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


def _network_data(value: object, request: int, device: int) -> NetworkDeviceData:
    if type(value) is dict:
        get = value.get
        interface_name = get("interfaceName", "")
        ips = get("ips", ())
        hardware_address = get("hardwareAddress", "")
        if (
            type(interface_name) is str
            and type(hardware_address) is str
            and ((type(ips) is list and _STR_ONLY.issuperset(map(type, ips))) or ips == ())
        ):
            return build_network_data(interface_name, tuple(ips), hardware_address)
    path = f"requests[{request}].devices[{device}].networkData"
    raw = _object(value, path)
    return build_network_data(
        _str(raw.get("interfaceName"), f"{path}.interfaceName"),
        _str_tuple(raw.get("ips"), f"{path}.ips"),
        _str(raw.get("hardwareAddress"), f"{path}.hardwareAddress"),
    )


_NO_ATTRIBUTES: dict[str, Any] = {}


def _devices(
    raw_devices: object, request: int, attribute_maps: _AttributeQueue
) -> tuple[Device, ...]:
    """The devices of a request; their attributes are queued in ``attribute_maps`` to be
    checked all together. Paths of fields are only made when something is wrong."""
    if type(raw_devices) is not list:
        raw_devices = _list(raw_devices, f"requests[{request}].devices")
    devices: list[Device] = []
    for index, item in enumerate(raw_devices):
        raw = item if type(item) is dict else _object(item, f"requests[{request}].devices[{index}]")
        get = raw.get
        driver = get("driver", "")
        pool = get("pool", "")
        name = get("name", "")
        if type(driver) is not str or type(pool) is not str or type(name) is not str:
            path = f"requests[{request}].devices[{index}]"
            driver = _str(driver, f"{path}.driver")
            pool = _str(pool, f"{path}.pool")
            name = _str(name, f"{path}.name")
        attributes = get("attributes")
        if type(attributes) is not dict:
            attributes = (
                _NO_ATTRIBUTES
                if attributes is None
                else _object(attributes, f"requests[{request}].devices[{index}].attributes")
            )
        attribute_map = _new_object(AttributeMap)
        _set_entries(attribute_map, attributes)
        if attributes:
            attribute_maps.append((attributes, request, index, attribute_map))
        network_data = get("networkData")
        if network_data is not None:
            network_data = _network_data(network_data, request, index)
        devices.append(build_device(driver, pool, name, attribute_map, network_data))
    return tuple(devices)


_SIMPLE_META_KEYS = frozenset({"name", "namespace", "uid", "generation"})


def metadata_from_wire(raw: dict[str, Any], api_version: str) -> DeviceMetadata:
    """A DeviceMetadata from one parsed wire object; raises WireTypeError.

    The hot path of decoding: values of the usual types pass an inline test; anything else
    goes to the checker that names the field, or reads a null as the zero value.
    """
    attribute_maps: _AttributeQueue = []
    get = raw.get
    raw_requests = get("requests")
    requests: list[DeviceMetadataRequest] = []
    if raw_requests is not None:
        if type(raw_requests) is not list:
            raw_requests = _list(raw_requests, "requests")
        for index, item in enumerate(raw_requests):
            request = item if type(item) is dict else _object(item, f"requests[{index}]")
            name = request.get("name", "")
            if type(name) is not str:
                name = _str(name, f"requests[{index}].name")
            devices = request.get("devices")
            requests.append(
                build_request(
                    name, () if devices is None else _devices(devices, index, attribute_maps)
                )
            )
    if attribute_maps and _check_attribute_maps(attribute_maps):
        for entry in attribute_maps:
            entry[3].one_scalar_member_each = True
    pod_claim_name = get("podClaimName")
    if pod_claim_name is not None and type(pod_claim_name) is not str:
        _fail("podClaimName", "a string", pod_claim_name)
    meta = get("metadata")
    if (  # what drivers write: skip the full table
        type(meta) is dict
        and meta.keys() <= _SIMPLE_META_KEYS
        and type(meta_name := meta.get("name", "")) is str
        and type(namespace := meta.get("namespace", "")) is str
        and type(uid := meta.get("uid", "")) is str
        and type(generation := meta.get("generation", 0)) is int
        and 0 <= generation <= INT64_MAX
    ):
        object_meta = build_object_meta(
            meta_name, "", namespace, "", uid, "", generation,
            None, None, None,  # creation/deletion timestamps, grace period
            {}, {}, (), (), (),
        )  # fmt: skip
    else:  # anything else, field by field (_object passes an object as it is)
        object_meta = _from_table(
            ObjectMeta, _OBJECT_META_FIELDS, _object(meta, "metadata"), "metadata"
        )
    return build_metadata(api_version, object_meta, pod_claim_name, tuple(requests), ())


_new_object = object.__new__
_set_entries = AttributeMap._entries.__set__  # type: ignore[attr-defined]  # noqa: SLF001
