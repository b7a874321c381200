"""Validation of DeviceMetadata, apart from decoding (spec §5).

Profile ``"metadata"`` applies exactly the rules of the upstream metadata validator (§5.1), with
its findings: the same paths, types and number of findings as Go's ``field.ErrorList``.
Profile ``"strict"`` adds the API server's rules for the same embedded types in ResourceSlices
and claim status (§5.2), so a driver author learns whether the data would pass those too.
Rules are kept per API version so that they can diverge; today both versions share them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping, Sequence

from dra_metadata._model._metadata import DeviceMetadata, ObjectMeta
from dra_metadata._model._models import (
    ATTRIBUTE_MEMBERS,
    Device,
    DeviceAttribute,
    NetworkDeviceData,
)
from dra_metadata._model._semver import semver_groups
from dra_metadata._model._versions import KNOWN_API_VERSIONS, V1ALPHA1, V1BETA1
from dra_metadata._validation._findings import FieldError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from dra_metadata._validation._profiles import ErrorType, Profile

    _Finding = tuple[ErrorType, str]

# Formats (spec §5.1). Lengths are byte lengths unless a rule says characters.

LABEL_PATTERN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
SUBDOMAIN_PATTERN = rf"{LABEL_PATTERN}(\.{LABEL_PATTERN})*"
# Go's case-insensitive [a-z] also matches the two letters that fold to k and s: KELVIN SIGN
# and LONG S. Python's re.IGNORECASE adds two more (dotted and dotless i) that Go's does not.
_CASELESS_LETTERS = "a-zA-Z\u017f\u212a"
_CASELESS_LABEL = rf"[{_CASELESS_LETTERS}0-9]([-{_CASELESS_LETTERS}0-9]*[{_CASELESS_LETTERS}0-9])?"
_CASELESS_SUBDOMAIN = rf"{_CASELESS_LABEL}(\.{_CASELESS_LABEL})*"
# The checks of these three spell the patterns out (compiling them costs more than a run of
# validate on a tree); a test holds each to its pattern.
_LABEL_CHARACTERS = frozenset("-0123456789abcdefghijklmnopqrstuvwxyz")
_CASELESS_LABEL_CHARACTERS = _LABEL_CHARACTERS | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ\u017f\u212a")


def is_label(text: str, *, caseless: bool = False) -> bool:
    """Whether ``text`` is spelled as LABEL_PATTERN says (or _CASELESS_LABEL): letters,
    digits and '-', starting and ending with a letter or digit. Length apart."""
    characters = _CASELESS_LABEL_CHARACTERS if caseless else _LABEL_CHARACTERS
    return text[:1] not in {"", "-"} and text[-1] != "-" and characters.issuperset(text)


def is_subdomain(text: str, *, caseless: bool = False) -> bool:
    """Whether ``text`` is spelled as SUBDOMAIN_PATTERN says (or _CASELESS_SUBDOMAIN):
    dot-separated labels. Length apart."""
    return all(is_label(label, caseless=caseless) for label in text.split("."))


_C_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
"""Compiled on first use (re caches it): validation is optional, import time is not."""


_LABEL_DETAIL = (
    "must be a lowercase RFC 1123 label: a-z, 0-9 and '-', starting and ending with a "
    "letter or digit (regex [a-z0-9]([-a-z0-9]*[a-z0-9])?)"
)
_SUBDOMAIN_DETAIL = (
    "must be a lowercase RFC 1123 subdomain: dot-separated labels of a-z, 0-9 and '-', each "
    "starting and ending with a letter or digit"
)
_CASELESS_SUBDOMAIN_DETAIL = (
    "must be an RFC 1123 subdomain: dot-separated labels of letters, digits and '-', each "
    "starting and ending with a letter or digit"
)

"""A finding about one value, before it has a path: its type and detail."""


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _label_findings(text: str) -> tuple[_Finding, ...]:
    """Go's short-name format: one `invalid` for the length, one for the spelling."""
    findings: list[_Finding] = []
    if _size(text) > 63:
        findings.append(("invalid", "must be no more than 63 bytes"))
    if not is_label(text):
        dotted = is_subdomain(text)
        findings.append(("invalid", "must not contain dots" if dotted else _LABEL_DETAIL))
    return tuple(findings)


def _subdomain_problems(text: str, *, caseless: bool = False) -> list[str]:
    """Go's long-name formats: a problem for the length, one for the spelling."""
    problems = []
    if _size(text) > 253:
        problems.append("must be no more than 253 bytes")
    if caseless:
        if not is_subdomain(text, caseless=True):
            problems.append(_CASELESS_SUBDOMAIN_DETAIL)
    elif not is_subdomain(text):
        problems.append(_SUBDOMAIN_DETAIL)
    return problems


def _is_subdomain(text: str) -> bool:
    return not _subdomain_problems(text)


def _driver_findings(text: str) -> tuple[_Finding, ...]:
    """A caseless subdomain of at most 63 characters (Go's maxLength counts characters)."""
    findings: list[_Finding] = [
        ("invalid", problem) for problem in _subdomain_problems(text, caseless=True)
    ]
    if len(text) > 63:
        findings.append(("too_long", "may not be more than 63 characters"))
    return tuple(findings)


def _pool_findings(text: str) -> tuple[_Finding, ...]:
    """The total length, then each `/`-separated segment on its own, as Go checks them."""
    findings: list[_Finding] = []
    if _size(text) > 253:
        findings.append(("too_long", "may not be more than 253 bytes"))
    for index, segment in enumerate(text.split("/")):
        if not segment:
            findings.append(("invalid", f"segment {index}: must not be empty"))
            continue
        findings.extend(
            ("invalid", f"segment {index}: {problem}") for problem in _subdomain_problems(segment)
        )
    return tuple(findings)


_NAME_FINDINGS: dict[str, Callable[[str], tuple[_Finding, ...]]] = {
    "driver": _driver_findings,
    "pool": _pool_findings,
    "name": _label_findings,
}

_Errors = list[FieldError]


class _Rules:
    """The rules of one API version; `strict` adds the API server's rules."""

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict
        # Names repeat across devices (drivers, pools): remember what was found for each.
        self._name_findings: dict[str, dict[str, tuple[_Finding, ...]]] = {
            kind: {} for kind in _NAME_FINDINGS
        }
        self._key_problems: dict[str, str] = {}  # attribute names repeat across devices too

    def check(self, metadata: DeviceMetadata) -> _Errors:
        errors: _Errors = []
        self._object_meta(metadata.metadata, errors)
        if metadata.pod_claim_name is not None:
            errors.extend(
                FieldError("podClaimName", kind, metadata.pod_claim_name, detail)
                for kind, detail in _label_findings(metadata.pod_claim_name)
            )
        for request_index, request in enumerate(metadata.requests):
            request_path = f"requests[{request_index}]"
            if not request.name:
                errors.append(FieldError(f"{request_path}.name", "required", request.name))
            for device_index, device in enumerate(request.devices):
                self._device(device, f"{request_path}.devices[{device_index}]", errors)
        return errors

    @staticmethod
    def _object_meta(meta: ObjectMeta, errors: _Errors) -> None:
        """The create rules of Kubernetes object metadata (the rest of it is free-form)."""
        if meta.generation < 0:
            errors.append(
                FieldError("metadata.generation", "invalid", meta.generation, "must be 0 or more")
            )
        for index, reference in enumerate(meta.owner_references):
            path = f"metadata.ownerReferences[{index}]"
            for wire_name, value in (
                ("apiVersion", reference.api_version),
                ("kind", reference.kind),
                ("name", reference.name),
                ("uid", reference.uid),
            ):
                if not value:
                    errors.append(FieldError(f"{path}.{wire_name}", "required", value))
        for index, entry in enumerate(meta.managed_fields):
            path = f"metadata.managedFields[{index}].operation"
            if not entry.operation:
                errors.append(FieldError(path, "required", entry.operation))
            elif entry.operation not in {"Apply", "Update"}:
                errors.append(
                    FieldError(
                        path,
                        "not_supported",
                        entry.operation,
                        'supported values: "Apply", "Update"',
                    )
                )

    def _name(self, kind: str, value: str, path: str, errors: _Errors) -> None:
        """Check a required device name: `required` alone when empty, else its format."""
        if not value:
            errors.append(FieldError(f"{path}.{kind}", "required", value))
            return
        known = self._name_findings[kind]
        findings = known.get(value)
        if findings is None:
            findings = known[value] = _NAME_FINDINGS[kind](value)
        if findings:
            errors.extend(
                FieldError(f"{path}.{kind}", error_type, value, detail)
                for error_type, detail in findings
            )

    def _device(self, device: Device, path: str, errors: _Errors) -> None:
        self._name("driver", device.driver, path, errors)
        self._name("pool", device.pool, path, errors)
        self._name("name", device.name, path, errors)
        attributes = device.attributes
        if attributes:
            self._attributes(attributes, f"{path}.attributes", errors)
        if device.network_data is not None:
            self._network_data(device.network_data, f"{path}.networkData", errors)

    def _attributes(
        self, attributes: Mapping[str, DeviceAttribute], path: str, errors: _Errors
    ) -> None:
        if len(attributes) > 32:
            errors.append(
                FieldError(path, "too_many", len(attributes), "must have at most 32 attributes")
            )
            return
        if self.strict:
            self._strict_keys(attributes, path, errors)
        if _all_single_scalar(attributes):
            # The common case, decided in bulk by the decoder: one member and one value each,
            # so only texts can be wrong, and only in the strict profile.
            if self.strict:
                self._strict_single_scalars(attributes, path, errors)
            return
        values = 0
        for key, attribute in attributes.items():
            values += self._attribute(attribute, f"{path}[{key}]", errors)
        if self.strict and values > 48:
            errors.append(
                FieldError(
                    path,
                    "too_many",
                    values,
                    "must have at most 48 attribute values per device (list elements count)",
                )
            )

    def _strict_keys(
        self, attributes: Mapping[str, DeviceAttribute], path: str, errors: _Errors
    ) -> None:
        for key in attributes:
            problem = self._key_problems.get(key)
            if problem is None:
                problem = self._key_problems[key] = _qualified_name_problem(key)
            if problem:
                errors.append(FieldError(f"{path}[{key}]", "invalid", key, problem))

    def _strict_single_scalars(
        self, attributes: Mapping[str, DeviceAttribute], path: str, errors: _Errors
    ) -> None:
        """The strict text checks, on the wire objects: no DeviceAttribute is built."""
        wire_objects: dict[str, dict[str, Any]] = attributes._entries  # type: ignore[attr-defined]  # noqa: SLF001
        for key, wire in wire_objects.items():
            if "string" in wire or "version" in wire:
                self._strict_texts(
                    f"{path}[{key}]", wire.get("string"), wire.get("version"), (), errors
                )

    def _attribute(self, attribute: DeviceAttribute, path: str, errors: _Errors) -> int:
        """Check one attribute; return how many values it holds."""
        members = attribute.members
        # A union: one `invalid` whether no member or several are set. The value is what Go
        # reports: "" for none, the members set for several.
        if not members:
            errors.append(FieldError(path, "invalid", "", _ONE_OF))
        elif len(members) > 1:
            errors.append(
                FieldError(path, "invalid", "{" + ", ".join(members) + "}", _EXACTLY_ONE_OF)
            )
        for index, text in enumerate(attribute.strings):
            if _size(text) > 64:
                errors.append(
                    FieldError(
                        f"{path}.strings[{index}]",
                        "too_long",
                        text,
                        "may not be more than 64 bytes",
                    )
                )
        if self.strict:
            self._strict_texts(
                path, attribute.string, attribute.version, attribute.versions, errors
            )
        scalars = sum(
            getattr(attribute, name) is not None for name in ("int", "bool", "string", "version")
        )
        lists = sum(
            len(getattr(attribute, name)) for name in ("ints", "bools", "strings", "versions")
        )
        return scalars + lists

    def _strict_texts(
        self,
        path: str,
        string: str | None,
        version: str | None,
        versions: Sequence[str],
        errors: _Errors,
    ) -> None:
        """The API server's limits on an attribute's string and versions (§5.2)."""
        if string is not None and _size(string) > 64:
            errors.append(
                FieldError(f"{path}.string", "too_long", string, "may not be more than 64 bytes")
            )
        named = [("version", version)] if version is not None else []
        named += [(f"versions[{i}]", text) for i, text in enumerate(versions)]
        for name, text in named:
            if _size(text) > 64:
                errors.append(
                    FieldError(f"{path}.{name}", "too_long", text, "may not be more than 64 bytes")
                )
            elif semver_groups(text) is None:
                errors.append(
                    FieldError(
                        f"{path}.{name}",
                        "invalid",
                        text,
                        "must be a semantic version (semver 2.0.0)",
                    )
                )

    def _network_data(self, data: NetworkDeviceData, path: str, errors: _Errors) -> None:
        if _size(data.interface_name) > 256:
            errors.append(
                FieldError(
                    f"{path}.interfaceName",
                    "too_long",
                    data.interface_name,
                    "may not be more than 256 bytes",
                )
            )
        ips = data.ips
        if len(ips) > 16:
            errors.append(
                FieldError(f"{path}.ips", "too_many", len(ips), "must have at most 16 items")
            )
        else:
            seen: set[str] = set()
            for index, ip in enumerate(ips):
                if ip in seen:
                    errors.append(FieldError(f"{path}.ips[{index}]", "duplicate", ip))
                seen.add(ip)
                if self.strict:
                    problem = _interface_address_problem(ip)
                    if problem:
                        errors.append(FieldError(f"{path}.ips[{index}]", "invalid", ip, problem))
        if _size(data.hardware_address) > 128:
            errors.append(
                FieldError(
                    f"{path}.hardwareAddress",
                    "too_long",
                    data.hardware_address,
                    "may not be more than 128 bytes",
                )
            )


_MEMBER_LIST = ", ".join(f"`{name}`" for name in ATTRIBUTE_MEMBERS)
_ONE_OF = f"must specify one of: {_MEMBER_LIST}"
_EXACTLY_ONE_OF = f"must specify exactly one of: {_MEMBER_LIST}"


def _all_single_scalar(attributes: Mapping[str, DeviceAttribute]) -> bool:
    """Whether the decoder found exactly one scalar member in every attribute."""
    return getattr(attributes, "one_scalar_member_each", False) is True


def _qualified_name_problem(key: str) -> str:
    domain, separator, identifier = key.rpartition("/")
    if separator and (not domain or "/" in domain):
        return "must be a C identifier, optionally prefixed by one domain and '/'"
    if not re.fullmatch(_C_IDENTIFIER, identifier):
        return "the name part must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)"
    if len(identifier) > 32:
        return "the name part may not be more than 32 characters"
    if separator:
        if _size(domain) > 63:
            return "the domain may not be more than 63 bytes"
        if not _is_subdomain(domain.lower()):
            return "the domain must be a DNS subdomain (dot-separated labels of a-z, 0-9 and '-')"
    return ""


def _interface_address_problem(text: str) -> str:
    try:
        interface = ipaddress.ip_interface(text)
    except ValueError:
        return "must be an interface address in CIDR form, such as 10.0.0.5/24 or 2001:db8::5/64"
    if "/" not in text:
        return "must include a prefix length, such as 10.0.0.5/24"
    address = interface.ip
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    canonical = f"{address}/{interface.network.prefixlen}"
    if text != canonical:
        return f"must be in canonical form ({canonical})"
    return ""


_RULES: dict[str, Callable[[bool], _Rules]] = {
    V1BETA1: lambda strict: _Rules(strict=strict),
    V1ALPHA1: lambda strict: _Rules(strict=strict),
}


def _path_key(error: FieldError) -> tuple[Any, ...]:
    parts = re.split(r"\[(\d+)\]", error.path)
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts))


def validate(metadata: DeviceMetadata, *, profile: Profile = "metadata") -> tuple[FieldError, ...]:
    """Validation findings for ``metadata``, sorted by path; empty when valid.

    The rules are those of the API version the object was decoded from (the newest for objects
    built by hand or merged from several versions). ``profile="strict"`` adds the API server's
    rules for ResourceSlices and claim status.
    """
    if not isinstance(metadata, DeviceMetadata):
        raise TypeError(f"metadata must be a DeviceMetadata, not {type(metadata).__name__}")
    if profile not in {"metadata", "strict"}:
        raise ValueError(f"profile must be 'metadata' or 'strict', not {profile!r}")
    make_rules = _RULES.get(metadata.api_version, _RULES[KNOWN_API_VERSIONS[0]])
    errors = make_rules(profile == "strict").check(metadata)
    return tuple(sorted(errors, key=_path_key))


def iter_source_errors(metadata: DeviceMetadata, profile: Profile) -> Iterator[FieldError]:
    """Validate each file behind ``metadata`` in its own version (the object itself if none)."""
    if not metadata.sources:
        yield from validate(metadata, profile=profile)
        return
    for source in metadata.sources:
        for error in validate(source.metadata, profile=profile):
            yield FieldError(error.path, error.type, error.value, error.detail, source.path)
