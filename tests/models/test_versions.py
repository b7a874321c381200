"""dra_metadata.Version: a str that orders by semantic-version precedence (semver 2.0.0 §11).

The order is checked against a reference written here from the rules of the specification,
step by step; equality and hashing are those of the string.
"""

from __future__ import annotations

import copy
import itertools
import json
import pickle
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dra_metadata
from dra_metadata import Device, DeviceAttribute, Version
from dra_metadata.testing import MetadataTree
from dra_metadata.writer import encode_stream, update_metadata_file

from helpers import stream, wire_object

# Strategies: semantic versions with the identifiers that make precedence interesting.

_NUMBERS = st.one_of(st.integers(0, 12), st.integers(0, 2**70))
_ALPHANUMERIC = st.from_regex(r"[0-9]*[a-zA-Z-][0-9a-zA-Z-]{0,4}", fullmatch=True)
_PRERELEASE_IDENTIFIER = st.one_of(_NUMBERS.map(str), _ALPHANUMERIC)
_BUILD_IDENTIFIER = st.from_regex(r"[0-9a-zA-Z-]{1,5}", fullmatch=True)


@st.composite
def semantic_versions(draw: st.DrawFn) -> str:
    major, minor, patch = draw(_NUMBERS), draw(_NUMBERS), draw(_NUMBERS)
    text = f"{major}.{minor}.{patch}"
    prerelease = draw(st.lists(_PRERELEASE_IDENTIFIER, max_size=3))
    if prerelease:
        text += "-" + ".".join(prerelease)
    build = draw(st.lists(_BUILD_IDENTIFIER, max_size=2))
    if build:
        text += "+" + ".".join(build)
    return text


# Versions that share their parts often, so that ties and near-ties are common.
_CLOSE = st.builds(
    lambda release, prerelease, build: release + prerelease + build,
    st.sampled_from(["1.0.0", "1.0.1", "1.10.0", "1.9.0"]),
    st.sampled_from(
        ["", "-alpha", "-alpha.1", "-alpha.beta", "-beta.2", "-beta.11", "-rc.1", "-1"]
    ),
    st.sampled_from(["", "+build.1", "+001", "+exp.sha.5114f85"]),
)
VERSIONS = st.one_of(semantic_versions(), _CLOSE)


def reference_precedence(one: str, other: str) -> int:
    """-1, 0 or 1 by semver 2.0.0 §11, written from the specification's text."""
    # §10: build metadata is ignored when determining precedence.
    one, other = one.split("+", 1)[0], other.split("+", 1)[0]
    one_release, _, one_pre = one.partition("-")
    other_release, _, other_pre = other.partition("-")
    # §11.2: major, minor and patch, compared numerically, from left to right.
    for mine, theirs in zip(one_release.split("."), other_release.split("."), strict=True):
        if int(mine) != int(theirs):
            return -1 if int(mine) < int(theirs) else 1
    # §11.3: when those are equal, a pre-release version has lower precedence than a normal one.
    if not one_pre or not other_pre:
        return (not one_pre) - (not other_pre)
    # §11.4: compare each dot-separated pre-release identifier from left to right.
    one_ids, other_ids = one_pre.split("."), other_pre.split(".")
    for mine, theirs in zip(one_ids, other_ids, strict=False):
        if mine == theirs:
            continue
        mine_numeric, theirs_numeric = mine.isdigit(), theirs.isdigit()
        if mine_numeric and theirs_numeric:  # §11.4.1: numerically
            return -1 if int(mine) < int(theirs) else 1
        if mine_numeric != theirs_numeric:  # §11.4.3: numeric ones are lower
            return -1 if mine_numeric else 1
        return -1 if mine < theirs else 1  # §11.4.2: lexically in ASCII sort order
    # §11.4.4: a larger set of fields has a higher precedence, all preceding being equal.
    return (len(one_ids) > len(other_ids)) - (len(one_ids) < len(other_ids))


def order(one: Version, other: Version) -> int:
    return (one > other) - (one < other)


@settings(max_examples=400, deadline=None)
@given(VERSIONS, VERSIONS)
def test_order_follows_precedence_then_the_build_text(one: str, other: str) -> None:
    first, second = Version(one), Version(other)
    precedence = reference_precedence(one, other)
    if precedence:
        assert order(first, second) == precedence
    else:  # same precedence: only the build metadata differs, which orders them (documented)
        build = (one.partition("+")[2], other.partition("+")[2])
        assert order(first, second) == (build[0] > build[1]) - (build[0] < build[1])


@settings(max_examples=300, deadline=None)
@given(VERSIONS, VERSIONS)
def test_a_total_order_consistent_with_string_equality(one: str, other: str) -> None:
    first, second = Version(one), Version(other)
    assert [first < second, first == second, first > second].count(True) == 1
    assert (first == second) == (one == other)
    assert (first <= second) == (not first > second)
    assert (first >= second) == (not first < second)
    assert (first < second) == (second > first)
    # A plain str on the other side reads as a Version, either way round.
    assert (first < other) == (first < second)
    assert (one < second) == (first < second)
    assert (other >= first) == (second >= first)


@settings(max_examples=200, deadline=None)
@given(VERSIONS, VERSIONS, VERSIONS)
def test_the_order_is_transitive(one: str, two: str, three: str) -> None:
    first, second, third = sorted(map(Version, (one, two, three)))
    assert first <= second <= third
    assert first <= third
    if first < second or second < third:
        assert first < third


@settings(max_examples=200, deadline=None)
@given(VERSIONS)
def test_a_version_is_its_string(text: str) -> None:
    version = Version(text)
    assert version == text
    assert text == version
    assert hash(version) == hash(text)
    assert {version} == {text}
    assert str(version) == text
    assert type(str(version)) is str
    assert f"{version}" == text
    assert json.dumps(version) == json.dumps(text)
    assert orjson.dumps(version) == orjson.dumps(text)
    assert repr(version) == f"Version({text!r})"
    assert version != text + "x"
    for copied in (copy.copy(version), copy.deepcopy(version), pickle.loads(pickle.dumps(version))):  # noqa: S301
        assert type(copied) is Version
        assert copied == version


def test_the_examples_of_the_specification() -> None:
    # semver 2.0.0 §11: 1.0.0-alpha < 1.0.0-alpha.1 < ... < 1.0.0.
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "2.0.0",
        "2.1.0",
        "2.1.1",
    ]
    versions = [Version(text) for text in ordered]
    shuffled = versions[5:] + versions[:5]
    assert sorted(shuffled) == versions
    assert all(one < other for one, other in itertools.pairwise(versions))
    assert sorted(["1.10.0", "1.9.0", "1.10.0-alpha"], key=Version) == [
        "1.9.0",
        "1.10.0-alpha",
        "1.10.0",
    ]


def test_the_examples_of_the_issue() -> None:
    assert Version("1.10.0") > Version("1.9.0")
    assert Version("1.10.0") > "1.9.0"
    assert Version("1.0.0-rc.1") < Version("1.0.0")
    assert max(map(Version, ["580.65.6", "580.9.0", "575.100.1"])) == "580.65.6"
    version = Version("580.65.6")
    assert (version.major, version.minor, version.patch) == (580, 65, 6)
    assert version.prerelease is None
    assert version.build is None
    assert version == "580.65.6"
    assert version.startswith("580.")  # a str
    rc = Version("1.2.3-rc.1.x-y+build.5.z")
    assert (rc.major, rc.minor, rc.patch, rc.prerelease, rc.build) == (
        1,
        2,
        3,
        "rc.1.x-y",
        "build.5.z",
    )
    assert Version("18446744073709551616.0.0").major == 2**64  # no limit on the numbers


def test_build_metadata_orders_equal_precedence_by_its_text() -> None:
    plain, first, second = Version("1.0.0"), Version("1.0.0+a"), Version("1.0.0+b")
    assert plain < first < second
    assert first != second
    assert len({plain, first, second}) == 3
    assert Version("1.0.0+zzz") < Version("1.0.1")  # precedence first


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1",
        "1.2",
        "v1.2.3",
        "01.0.0",
        "1.00.0",
        "1.0.0-01",
        "1.0.0-",
        "1.0.0+",
        "1.0.0-a..b",
        "1.0.0+a..b",
        " 1.0.0",
        "1.0.0\n",
        "1.0.0-\u00e9",
        "\u0661.0.0",  # an Arabic-Indic digit: not ASCII
        "1.0.0.0",
    ],
)
def test_what_is_not_a_semantic_version(text: str) -> None:
    with pytest.raises(ValueError, match="is not a semantic version") as raised:
        Version(text)
    assert repr(text) in str(raised.value)


def test_the_validation_rule_and_version_agree() -> None:
    # One pattern: validation reports exactly the versions that Version refuses.
    for text in ["1.2", "1.0.0-01", "1.0.0", "1.0.0-rc.1+b", "v1.0.0"]:
        metadata = dra_metadata.DeviceMetadata(
            requests=[
                dra_metadata.DeviceMetadataRequest(
                    "r",
                    [Device("d", "p", "n", attributes={"v": DeviceAttribute(version=text)})],
                )
            ]
        )
        findings = [
            finding
            for finding in dra_metadata.validate(metadata, profile="strict")
            if finding.path.endswith(".version")
        ]
        try:
            Version(text)
        except ValueError:
            assert findings, text
        else:
            assert not findings, text


def test_what_cannot_be_compared() -> None:
    version = Version("1.0.0")
    with pytest.raises(TypeError, match=r"'<' needs two semantic versions: '1.2' is not one"):
        assert version < "1.2"
    with pytest.raises(TypeError, match=r"'>=' needs two semantic versions: 'abc' is not one"):
        assert version >= "abc"  # reflected: Version.__ge__
    with pytest.raises(TypeError):
        assert version < 1  # type: ignore[operator]
    assert version != 1
    with pytest.raises(TypeError, match="made from a str, not int"):
        Version(1)  # type: ignore[arg-type]
    assert type(Version(Version("1.0.0"))) is Version


def test_version_attributes_read_as_versions() -> None:
    device = {
        "driver": "gpu.example.com",
        "pool": "p",
        "name": "gpu-0",
        "attributes": {
            "driverVersion": {"version": "580.65.6"},
            "model": {"string": "580.65.6"},
            "cuda": {"versions": ["12.4.0", "12.10.0"]},
        },
    }
    decoded = dra_metadata.decode_stream(
        stream(wire_object(requests=[{"name": "r", "devices": [device]}]))
    ).metadata.devices[0]
    version = decoded.attribute("driverVersion")
    assert type(version) is Version
    assert version == "580.65.6"  # as before
    assert type(decoded.attribute("model")) is str  # a string attribute stays a plain str
    assert decoded.attribute("cuda") == ("12.4.0", "12.10.0")
    assert max(decoded.attribute("cuda", type=tuple[Version, ...])) == "12.10.0"
    assert type(decoded.attributes["driverVersion"].value) is Version
    assert decoded.attributes["driverVersion"].version == "580.65.6"


def test_versions_stay_versions_when_written_again(tmp_path: Path) -> None:
    tree = MetadataTree(tmp_path)
    gpu = Device(
        name="gpu-0",
        attributes={
            "driverVersion": Version("580.65.6"),  # a Version builds a version attribute
            "cuda": [Version("12.4.0"), Version("12.10.0")],
            "model": "H200",
        },
    )
    path = tree.add_claim("training-gpus", "gpu", "gpu.example.com", [gpu])
    device = dra_metadata.read_metadata_file(path).devices[0]
    assert device.attributes["driverVersion"] == DeviceAttribute(version="580.65.6")
    assert device.attributes["cuda"] == DeviceAttribute(versions=["12.4.0", "12.10.0"])

    # The values attribute() returns build the same attributes again.
    rebuilt = Device(
        driver=device.driver,
        pool=device.pool,
        name=device.name,
        attributes={name: device.attribute(name) for name in device.attributes},  # type: ignore[misc]
    )
    assert rebuilt == device
    updated = update_metadata_file(path, [rebuilt])
    again = dra_metadata.read_metadata_file(path).devices[0]
    assert again.attributes["driverVersion"].members == ("version",)
    assert again == updated.devices[0] == device

    document = dra_metadata.read_metadata_file(path).to_document()
    attributes = document["requests"][0]["devices"][0]["attributes"]
    assert attributes["driverVersion"] == {"version": "580.65.6"}
    assert json.loads(json.dumps(document)) == document
    wire = dra_metadata.read_metadata_file(path).to_wire()
    written = wire["requests"][0]["devices"][0]["attributes"]["driverVersion"]["version"]
    assert type(written) is str  # the wire form is plain JSON values


def test_a_plain_string_is_never_taken_for_a_version() -> None:
    device = Device(attributes={"v": "1.2.3", "vs": ["1.2.3"]})
    assert device.attributes["v"] == DeviceAttribute(string="1.2.3")
    assert device.attributes["vs"] == DeviceAttribute(strings=["1.2.3"])
    with pytest.raises(TypeError, match=r"\['mixed'\]: mixes Version and str"):
        Device(attributes={"mixed": [Version("1.0.0"), "1.0.0"]})  # type: ignore[dict-item]


def test_encoding_a_version_writes_its_text() -> None:
    metadata = dra_metadata.DeviceMetadata(
        requests=[
            dra_metadata.DeviceMetadataRequest(
                "r", [Device("d", "p", "n", attributes={"v": Version("1.0.0-rc.1")})]
            )
        ]
    )
    assert b'"version": "1.0.0-rc.1"' in encode_stream(metadata)
