"""Hypothesis strategies for DeviceMetadata objects and metadata streams.

For property-testing code that consumes device metadata. Needs ``hypothesis`` (not a dependency
of the library itself). Objects from ``device_metadata()`` satisfy both validation profiles.

>>> from hypothesis import given
>>> from dra_metadata import strategies
>>> @given(strategies.metadata_streams())
... def test_my_consumer(stream): ...
"""

from __future__ import annotations

import functools
import ipaddress
import string
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import orjson
from hypothesis import strategies as st

from dra_metadata._model._checks import INT64_MAX, INT64_MIN
from dra_metadata._model._metadata import (
    DeviceMetadata,
    DeviceMetadataRequest,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
)
from dra_metadata._model._models import (
    AttributeMap,
    Device,
    DeviceAttribute,
    NetworkDeviceData,
)
from dra_metadata._model._versions import KIND, KNOWN_API_VERSIONS
from dra_metadata.writer import encode_stream

__all__ = [
    "MetadataStream",
    "device_attributes",
    "device_metadata",
    "device_metadata_requests",
    "devices",
    "dns_labels",
    "dns_subdomains",
    "metadata_streams",
    "network_device_data",
    "object_meta",
    "qualified_names",
]

# Every strategy here is built once (module constants, cached factories), and each string is
# one draw of bytes mapped to characters: building strategies inside each draw, st.text() and
# st.from_regex() cost seconds on the first draws with an empty Hypothesis database (Unicode
# tables are computed then) and a draw per character, which failed HealthCheck.too_slow under
# default settings. Bytes shrink towards b"", and so the strings towards "a".

_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_IDENTIFIER_START = string.ascii_letters + "_"
_IDENTIFIER_REST = _IDENTIFIER_START + string.digits

_TEXT_CHARACTERS = (
    string.ascii_letters
    + string.digits
    + string.punctuation
    + " \t\n\r\x00\x01\x1b\x1f\x7f\x80\xa0"
    + "\u00e9\u00df\u0394\u044f\u05d0\u0627\u0939\u3042\u4e2d\uac00\u20ac"
    + "\u2028\u2029\u200b\ufeff\ufffd\uffff"
    + "\U0001f600\U0001f1fa\U00010000\U0010ffff"
)
"""Characters text is mostly made of: ASCII, controls, what Go's writer escapes (<>&, U+2028,
U+2029) and characters of two, three and four UTF-8 bytes."""
_ANY_CHARACTER = 224
"""A byte from here on starts a character chosen from every code point but the surrogates (one
in eight); below, it picks from _TEXT_CHARACTERS."""
_CODE_POINTS = 0x110000 - 0x800


def _text_of(max_size: int, data: bytes) -> str:
    characters: list[str] = []
    index = 0
    while index < len(data) and len(characters) < max_size:
        byte = data[index]
        if byte < _ANY_CHARACTER or index + 3 >= len(data):
            characters.append(_TEXT_CHARACTERS[byte % len(_TEXT_CHARACTERS)])
            index += 1
        else:
            code = int.from_bytes(data[index + 1 : index + 4], "big") % _CODE_POINTS
            characters.append(chr(code + 0x800 if code >= 0xD800 else code))
            index += 4
    return "".join(characters)


def _texts(max_size: int) -> st.SearchStrategy[str]:
    """Text of at most ``max_size`` characters (so at most 4 * max_size bytes of UTF-8)."""
    return st.binary(max_size=4 * max_size).map(functools.partial(_text_of, max_size))


def _name_of(first: str, rest: str, last: str, data: bytes) -> str:
    """A name from bytes: its first and last characters from their own alphabets."""
    if len(data) == 1:
        return first[data[0] % len(first)]
    middle = "".join(rest[byte % len(rest)] for byte in data[1:-1])
    return first[data[0] % len(first)] + middle + last[data[-1] % len(last)]


def _names(
    first: str, rest: str, last: str, min_size: int, max_size: int
) -> st.SearchStrategy[str]:
    return st.binary(min_size=min_size, max_size=max_size).map(
        functools.partial(_name_of, first, rest, last)
    )


@functools.cache
def _dns_labels(limit: int) -> st.SearchStrategy[str]:
    return _names(_ALNUM, _ALNUM + "-", _ALNUM, 1, limit)


def dns_labels(max_size: int = 63) -> st.SearchStrategy[str]:
    """DNS-1123 labels (``k8s-short-name``): claim, request, device and pod claim names."""
    if max_size < 1:
        raise ValueError(f"max_size must be at least 1, not {max_size}")
    return _dns_labels(min(max_size, 63))


@functools.cache
def _dns_subdomains(max_size: int) -> st.SearchStrategy[str]:
    # Up to 4 labels, short enough that the longest joined name still fits: nothing filtered.
    labels = min(4, (max_size + 1) // 2)
    label_size = min(20, (max_size - (labels - 1)) // labels)
    return st.lists(_dns_labels(label_size), min_size=1, max_size=labels).map(".".join)


def dns_subdomains(max_size: int = 253) -> st.SearchStrategy[str]:
    """Lower-case DNS-1123 subdomains such as ``gpu.example.com`` (driver and pool names)."""
    if max_size < 1:
        raise ValueError(f"max_size must be at least 1, not {max_size}")
    return _dns_subdomains(max_size)


_C_IDENTIFIERS = _names(_IDENTIFIER_START, _IDENTIFIER_REST, _IDENTIFIER_REST, 1, 32)
_DRIVER_NAMES = dns_subdomains(63)


@functools.cache
def _qualified_names(driver: str | None) -> st.SearchStrategy[str]:
    domains = st.just(driver) if driver else _DRIVER_NAMES
    qualified = st.tuples(domains, _C_IDENTIFIERS).map("/".join)
    return st.one_of(_C_IDENTIFIERS, qualified)


def qualified_names(driver: str | None = None) -> st.SearchStrategy[str]:
    """Attribute keys: a C identifier, optionally qualified by a domain (the driver's, if given)."""
    return _qualified_names(driver)


_SHORT_TEXT = _texts(16)  # at most 64 bytes of UTF-8, as validation allows
_SEMVER = st.builds(
    lambda major, minor, patch, pre: f"{major}.{minor}.{patch}{pre}",
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.sampled_from(["", "-rc.1", "-alpha", "+build.5"]),
)
_INT64 = st.integers(INT64_MIN, INT64_MAX)
_DEVICE_ATTRIBUTES = st.one_of(
    _INT64.map(lambda value: DeviceAttribute(int=value)),
    st.booleans().map(lambda value: DeviceAttribute(bool=value)),
    _SHORT_TEXT.map(lambda value: DeviceAttribute(string=value)),
    _SEMVER.map(lambda value: DeviceAttribute(version=value)),
    st.lists(_INT64, min_size=1, max_size=4).map(lambda v: DeviceAttribute(ints=v)),
    st.lists(st.booleans(), min_size=1, max_size=4).map(lambda v: DeviceAttribute(bools=v)),
    st.lists(_SHORT_TEXT, min_size=1, max_size=4).map(lambda v: DeviceAttribute(strings=v)),
    st.lists(_SEMVER, min_size=1, max_size=4).map(lambda v: DeviceAttribute(versions=v)),
)


def device_attributes() -> st.SearchStrategy[DeviceAttribute]:
    """Attributes with exactly one member set, of every member kind.

    ``int``/``ints`` in the int64 range, ``bool``/``bools``, ``string``/``strings`` of short
    text (control and non-ASCII characters included), ``version``/``versions`` semantic
    versions; lists of one to four elements.
    """
    return _DEVICE_ATTRIBUTES


_INTERFACE_ADDRESSES = st.one_of(
    st.builds(
        lambda address, prefix: f"{ipaddress.IPv4Address(address)}/{prefix}",
        st.integers(0, 2**32 - 1),
        st.integers(0, 32),
    ),
    st.builds(
        lambda address, prefix: f"{ipaddress.IPv6Address(address)}/{prefix}",
        st.integers(0, 2**128 - 1),
        st.integers(0, 128),
    ),
)
_NETWORK_DEVICE_DATA = st.builds(
    NetworkDeviceData,
    interface_name=st.one_of(
        st.just(""),
        st.builds(
            lambda name, number: f"{name}{number}",
            _names(string.ascii_lowercase, string.ascii_lowercase, string.ascii_lowercase, 2, 4),
            st.integers(0, 99),
        ),
    ),
    ips=st.lists(_INTERFACE_ADDRESSES, max_size=4, unique=True),
    hardware_address=st.one_of(
        st.just(""),
        st.lists(st.integers(0, 255), min_size=6, max_size=6).map(
            lambda octets: ":".join(f"{octet:02x}" for octet in octets)
        ),
    ),
)


def network_device_data() -> st.SearchStrategy[NetworkDeviceData]:
    """Network data with canonical interface addresses (``10.0.0.5/24``), unique, at most 16."""
    return _NETWORK_DEVICE_DATA


_POOL_NAMES = dns_subdomains(60)
_DEVICE_NAMES = dns_labels()
_MAYBE_NETWORK_DATA = st.none() | _NETWORK_DEVICE_DATA
# (qualified by the device's driver, name): the driver is only known once drawn.
_ATTRIBUTE_ENTRIES = st.lists(
    st.tuples(st.booleans(), _C_IDENTIFIERS, _DEVICE_ATTRIBUTES),
    max_size=8,
    unique_by=lambda entry: (entry[0], entry[1]),
)


def _draw_device(draw: st.DrawFn, driver: str) -> Device:
    attributes = {
        f"{driver}/{name}" if qualified else name: attribute
        for qualified, name, attribute in draw(_ATTRIBUTE_ENTRIES)
    }
    return Device(
        driver=driver,
        pool=draw(_POOL_NAMES),
        name=draw(_DEVICE_NAMES),
        attributes=AttributeMap(attributes),
        network_data=draw(_MAYBE_NETWORK_DATA),
    )


@st.composite
def devices(draw: st.DrawFn, driver: str | None = None) -> Device:
    """A device of ``driver`` (or of a generated driver) with up to 8 attributes.

    Its pool is a generated pool name and its name a DNS label; attribute keys are
    qualified_names of the driver's domain or of none, and network data is present or not.
    """
    return _draw_device(draw, driver if driver is not None else draw(_DRIVER_NAMES))


_REQUEST_NAMES = st.one_of(dns_labels(30), st.tuples(dns_labels(30), dns_labels(30)).map("/".join))
_DEVICE_COUNTS = st.integers(0, 3)


def _draw_request(draw: st.DrawFn, name: str, driver: str | None) -> DeviceMetadataRequest:
    return DeviceMetadataRequest(
        name=name,
        devices=[
            _draw_device(draw, driver if driver is not None else draw(_DRIVER_NAMES))
            for _ in range(draw(_DEVICE_COUNTS))
        ],
    )


@st.composite
def device_metadata_requests(draw: st.DrawFn, driver: str | None = None) -> DeviceMetadataRequest:
    """A request (``name`` or ``name/subrequest``) with up to 3 devices.

    Each device is of ``driver`` when given, else of a generated driver.
    """
    return _draw_request(draw, draw(_REQUEST_NAMES), driver)


_TIMES = st.datetimes(
    min_value=datetime(1970, 1, 1),  # noqa: DTZ001 - hypothesis wants naive bounds
    max_value=datetime(2200, 1, 1),  # noqa: DTZ001
    timezones=st.just(timezone.utc),
).map(lambda moment: moment.replace(microsecond=0))  # the wire has second precision
_BASIC_OBJECT_META = {
    "name": dns_labels(),
    "namespace": dns_labels(),
    "uid": st.uuids().map(str),
    "generation": st.integers(1, 2**31),
}
_TEXTS = _texts(12)
_FILLED_TEXTS = st.binary(min_size=1, max_size=48).map(functools.partial(_text_of, 12))
_OBJECT_META = {
    False: st.builds(ObjectMeta, **_BASIC_OBJECT_META),
    True: st.builds(
        ObjectMeta,
        **_BASIC_OBJECT_META,
        generate_name=_TEXTS,
        self_link=_TEXTS,
        resource_version=_TEXTS,
        creation_timestamp=st.none() | _TIMES,
        deletion_timestamp=st.none() | _TIMES,
        deletion_grace_period_seconds=st.none() | st.integers(0, 2**40),
        labels=st.dictionaries(_TEXTS, _TEXTS, max_size=3),
        annotations=st.dictionaries(_TEXTS, _TEXTS, max_size=3),
        owner_references=st.lists(
            st.builds(
                OwnerReference,  # the four names are required (metadata validator)
                api_version=_FILLED_TEXTS,
                kind=_FILLED_TEXTS,
                name=_FILLED_TEXTS,
                uid=_FILLED_TEXTS,
                controller=st.none() | st.booleans(),
                block_owner_deletion=st.none() | st.booleans(),
            ),
            max_size=2,
        ),
        finalizers=st.lists(_TEXTS, max_size=2),
        managed_fields=st.lists(
            st.builds(
                ManagedFieldsEntry,
                manager=_TEXTS,
                operation=st.sampled_from(["Apply", "Update"]),
                api_version=_TEXTS,
                time=st.none() | _TIMES,
                fields_type=st.just("FieldsV1"),
                fields_v1=st.none() | st.just({}) | st.just({"f:metadata": {"f:name": {}}}),
                subresource=_TEXTS,
            ),
            max_size=2,
        ),
    ),
}


def object_meta(*, full: bool = True) -> st.SearchStrategy[ObjectMeta]:
    """Object metadata as a driver writes it, or (``full``) with every field possibly set."""
    return _OBJECT_META[bool(full)]


_MAYBE_POD_CLAIM_NAMES = st.none() | dns_labels()
_REQUEST_NAME_LISTS = st.lists(_REQUEST_NAMES, max_size=3, unique=True)


@st.composite
def device_metadata(
    draw: st.DrawFn,
    *,
    drivers: st.SearchStrategy[str] | None = None,
    full_object_meta: bool = False,
) -> DeviceMetadata:
    """A valid DeviceMetadata of one driver (as one file holds), with up to 3 requests.

    Valid under both validation profiles. ``drivers`` draws the driver's name;
    ``full_object_meta`` fills every field of the object metadata (labels, owner references,
    managed fields, times), not only what drivers write. Encode it with
    ``dra_metadata.writer.encode_stream`` to test a reader on the bytes a driver writes.
    """
    driver = draw(drivers if drivers is not None else _DRIVER_NAMES)
    return DeviceMetadata(
        metadata=draw(object_meta(full=full_object_meta)),
        pod_claim_name=draw(_MAYBE_POD_CLAIM_NAMES),
        requests=[_draw_request(draw, name, driver) for name in draw(_REQUEST_NAME_LISTS)],
    )


@dataclass(frozen=True)
class MetadataStream:
    """A generated stream and what decoding it must give (what metadata_streams draws).

    ``decode_stream(stream.data)`` must give ``stream.metadata`` with ``stream.skipped_versions``.
    """

    data: bytes
    metadata: DeviceMetadata
    """The expected decoded object (``api_version`` = the first known version in the stream)."""
    skipped_versions: tuple[str, ...]


_UNKNOWN_VERSIONS = st.sampled_from(
    ["metadata.resource.k8s.io/v1", "metadata.resource.k8s.io/v2alpha1", "metadata.k8s.io/v99"]
)
_SEPARATORS = st.sampled_from([b"", b"\n", b" ", b"\r\n", b"\t\n  "])
_UNKNOWN_VERSION_LISTS = st.lists(_UNKNOWN_VERSIONS, max_size=2)
_SHUFFLED_VERSIONS = st.permutations(KNOWN_API_VERSIONS)
_VERSION_COUNTS = st.integers(1, len(KNOWN_API_VERSIONS))
_DEVICE_METADATA = device_metadata()


@st.composite
def metadata_streams(
    draw: st.DrawFn,
    metadata: st.SearchStrategy[DeviceMetadata] | None = None,
    *,
    unknown_versions: bool = True,
    shuffle_versions: bool = True,
    compact: bool | None = None,
) -> MetadataStream:
    """A stream encoding one object in some known versions, maybe after unknown-version objects.

    Objects are pretty-printed (as the upstream writer does) or compact (``compact``; drawn
    when None), separated by any JSON whitespace or none.
    """
    value = draw(metadata if metadata is not None else _DEVICE_METADATA)
    versions = draw(_SHUFFLED_VERSIONS) if shuffle_versions else list(KNOWN_API_VERSIONS)
    versions = versions[: draw(_VERSION_COUNTS)]
    skipped = tuple(draw(_UNKNOWN_VERSION_LISTS)) if unknown_versions else ()
    is_compact = draw(st.booleans()) if compact is None else compact
    parts = [
        orjson.dumps({"kind": KIND, "apiVersion": version, "spec": {"future": True}})
        for version in skipped
    ]
    known = encode_stream(value, versions=versions)
    if is_compact:
        parts += [orjson.dumps(orjson.loads(chunk)) for chunk in _split_objects(known)]
    else:
        parts += [chunk.rstrip(b"\n") for chunk in _split_objects(known)]
    data = b""
    for part in parts:
        data += part + draw(_SEPARATORS)
    expected = replace(value, api_version=versions[0])
    return MetadataStream(data=data, metadata=expected, skipped_versions=skipped)


def _split_objects(stream: bytes) -> list[bytes]:
    """Split the writer's own output (objects end with a newline and a '}' in column 0)."""
    chunks = stream.split(b"\n}\n")
    return [chunk + b"\n}\n" for chunk in chunks[:-1]]
