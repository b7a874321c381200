"""Hypothesis strategies for DeviceMetadata objects and metadata streams.

For property-testing code that consumes device metadata. Needs ``hypothesis`` (not a dependency
of the library itself). Objects from ``device_metadata()`` satisfy both validation profiles.

>>> from hypothesis import given
>>> from dra_metadata import strategies
>>> @given(strategies.metadata_streams())
... def test_my_consumer(stream): ...
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import orjson
from hypothesis import strategies as st

from dra_metadata._models import (
    INT64_MAX,
    INT64_MIN,
    AttributeMap,
    Device,
    DeviceAttribute,
    DeviceMetadata,
    DeviceMetadataRequest,
    ManagedFieldsEntry,
    NetworkDeviceData,
    ObjectMeta,
    OwnerReference,
)
from dra_metadata._versions import KIND, KNOWN_API_VERSIONS
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

_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def dns_labels(max_size: int = 63) -> st.SearchStrategy[str]:
    """DNS-1123 labels (``k8s-short-name``): claim, request, device and pod claim names."""
    edge = st.sampled_from(_ALNUM)
    middle = st.text(alphabet=_ALNUM + "-", max_size=max(0, min(max_size, 63) - 2))
    single = edge
    longer = st.builds(lambda first, inner, last: first + inner + last, edge, middle, edge)
    return st.one_of(single, longer).filter(lambda name: len(name) <= max_size)


def dns_subdomains(max_size: int = 253) -> st.SearchStrategy[str]:
    """Lower-case DNS-1123 subdomains such as ``gpu.example.com`` (driver and pool names)."""
    return (
        st.lists(dns_labels(20), min_size=1, max_size=4)
        .map(".".join)
        .filter(lambda name: len(name) <= max_size)
    )


_C_IDENTIFIERS = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,31}\Z")


def qualified_names(driver: str | None = None) -> st.SearchStrategy[str]:
    """Attribute keys: a C identifier, optionally qualified by a domain (the driver's, if given)."""
    domains = st.just(driver) if driver else dns_subdomains(63)
    qualified = st.builds(lambda domain, name: f"{domain}/{name}", domains, _C_IDENTIFIERS)
    return st.one_of(_C_IDENTIFIERS, qualified)


_SHORT_TEXT = st.text(max_size=16).filter(lambda text: len(text.encode()) <= 64)
_SEMVER = st.builds(
    lambda major, minor, patch, pre: f"{major}.{minor}.{patch}{pre}",
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.sampled_from(["", "-rc.1", "-alpha", "+build.5"]),
)


def device_attributes() -> st.SearchStrategy[DeviceAttribute]:
    """Attributes with exactly one member set."""
    int64 = st.integers(INT64_MIN, INT64_MAX)
    return st.one_of(
        int64.map(lambda value: DeviceAttribute(int=value)),
        st.booleans().map(lambda value: DeviceAttribute(bool=value)),
        _SHORT_TEXT.map(lambda value: DeviceAttribute(string=value)),
        _SEMVER.map(lambda value: DeviceAttribute(version=value)),
        st.lists(int64, min_size=1, max_size=4).map(lambda v: DeviceAttribute(ints=tuple(v))),
        st.lists(st.booleans(), min_size=1, max_size=4).map(
            lambda v: DeviceAttribute(bools=tuple(v))
        ),
        st.lists(_SHORT_TEXT, min_size=1, max_size=4).map(
            lambda v: DeviceAttribute(strings=tuple(v))
        ),
        st.lists(_SEMVER, min_size=1, max_size=4).map(lambda v: DeviceAttribute(versions=tuple(v))),
    )


def _interface_addresses() -> st.SearchStrategy[str]:
    v4 = st.builds(
        lambda address, prefix: f"{ipaddress.IPv4Address(address)}/{prefix}",
        st.integers(0, 2**32 - 1),
        st.integers(0, 32),
    )
    v6 = st.builds(
        lambda address, prefix: f"{ipaddress.IPv6Address(address)}/{prefix}",
        st.integers(0, 2**128 - 1),
        st.integers(0, 128),
    )
    return st.one_of(v4, v6)


def network_device_data() -> st.SearchStrategy[NetworkDeviceData]:
    """Network data with canonical interface addresses (``10.0.0.5/24``), unique, at most 16."""
    return st.builds(
        NetworkDeviceData,
        interface_name=st.one_of(st.just(""), st.from_regex(r"\A[a-z]{2,4}[0-9]{1,2}\Z")),
        ips=st.lists(_interface_addresses(), max_size=4, unique=True).map(tuple),
        hardware_address=st.one_of(
            st.just(""),
            st.lists(st.integers(0, 255), min_size=6, max_size=6).map(
                lambda octets: ":".join(f"{octet:02x}" for octet in octets)
            ),
        ),
    )


@st.composite
def devices(draw: st.DrawFn, driver: str | None = None) -> Device:
    """A device of ``driver`` (or of a generated driver) with up to 8 attributes."""
    driver_name = driver if driver is not None else draw(dns_subdomains(63))
    attributes = draw(
        st.dictionaries(qualified_names(driver_name), device_attributes(), max_size=8)
    )
    return Device(
        driver=driver_name,
        pool=draw(dns_subdomains(60)),
        name=draw(dns_labels()),
        attributes=AttributeMap(attributes),
        network_data=draw(st.none() | network_device_data()),
    )


def device_metadata_requests(driver: str | None = None) -> st.SearchStrategy[DeviceMetadataRequest]:
    """A request (``name`` or ``name/subrequest``) with up to 3 devices."""
    names = st.one_of(
        dns_labels(30), st.builds(lambda top, sub: f"{top}/{sub}", dns_labels(30), dns_labels(30))
    )
    return st.builds(
        DeviceMetadataRequest,
        name=names,
        devices=st.lists(devices(driver), max_size=3).map(tuple),
    )


_TIMES = st.datetimes(
    min_value=datetime(1970, 1, 1),  # noqa: DTZ001 - hypothesis wants naive bounds
    max_value=datetime(2200, 1, 1),  # noqa: DTZ001
    timezones=st.just(timezone.utc),
).map(lambda moment: moment.replace(microsecond=0))  # the wire has second precision


def object_meta(*, full: bool = True) -> st.SearchStrategy[ObjectMeta]:
    """Object metadata as a driver writes it, or (``full``) with every field possibly set."""
    basic = {
        "name": dns_labels(),
        "namespace": dns_labels(),
        "uid": st.uuids().map(str),
        "generation": st.integers(1, 2**31),
    }
    if not full:
        return st.builds(ObjectMeta, **basic)
    texts = st.text(max_size=12)
    filled_texts = st.text(min_size=1, max_size=12)
    return st.builds(
        ObjectMeta,
        **basic,
        generate_name=texts,
        self_link=texts,
        resource_version=texts,
        creation_timestamp=st.none() | _TIMES,
        deletion_timestamp=st.none() | _TIMES,
        deletion_grace_period_seconds=st.none() | st.integers(0, 2**40),
        labels=st.dictionaries(texts, texts, max_size=3),
        annotations=st.dictionaries(texts, texts, max_size=3),
        owner_references=st.lists(
            st.builds(
                OwnerReference,  # the four names are required (metadata validator)
                api_version=filled_texts,
                kind=filled_texts,
                name=filled_texts,
                uid=filled_texts,
                controller=st.none() | st.booleans(),
                block_owner_deletion=st.none() | st.booleans(),
            ),
            max_size=2,
        ).map(tuple),
        finalizers=st.lists(texts, max_size=2).map(tuple),
        managed_fields=st.lists(
            st.builds(
                ManagedFieldsEntry,
                manager=texts,
                operation=st.sampled_from(["Apply", "Update"]),
                api_version=texts,
                time=st.none() | _TIMES,
                fields_type=st.just("FieldsV1"),
                fields_v1=st.none() | st.just({}) | st.just({"f:metadata": {"f:name": {}}}),
                subresource=texts,
            ),
            max_size=2,
        ).map(tuple),
    )


@st.composite
def device_metadata(
    draw: st.DrawFn,
    *,
    drivers: st.SearchStrategy[str] | None = None,
    full_object_meta: bool = False,
) -> DeviceMetadata:
    """A valid DeviceMetadata of one driver (as one file holds), with up to 3 requests."""
    driver = draw(drivers if drivers is not None else dns_subdomains(63))
    requests = draw(
        st.lists(device_metadata_requests(driver), max_size=3, unique_by=lambda r: r.name)
    )
    return DeviceMetadata(
        metadata=draw(object_meta(full=full_object_meta)),
        pod_claim_name=draw(st.none() | dns_labels()),
        requests=tuple(requests),
    )


@dataclass(frozen=True)
class MetadataStream:
    """A generated stream and what decoding it must give."""

    data: bytes
    metadata: DeviceMetadata
    """The expected decoded object (``api_version`` = the first known version in the stream)."""
    skipped_versions: tuple[str, ...]


_UNKNOWN_VERSIONS = st.sampled_from(
    ["metadata.resource.k8s.io/v1", "metadata.resource.k8s.io/v2alpha1", "metadata.k8s.io/v99"]
)
_SEPARATORS = st.sampled_from([b"", b"\n", b" ", b"\r\n", b"\t\n  "])


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
    value = draw(metadata if metadata is not None else device_metadata())
    versions = list(KNOWN_API_VERSIONS)
    if shuffle_versions:
        versions = draw(st.permutations(versions))
    versions = versions[: draw(st.integers(1, len(versions)))]
    skipped = tuple(draw(st.lists(_UNKNOWN_VERSIONS, max_size=2))) if unknown_versions else ()
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
