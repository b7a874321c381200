"""Which way the decoder goes: the fast path for what writers write, the exact one when needed.

The realistic stream must stay on a fast path, the exact, slower path must be taken only when
the input needs it, and a run of many small objects must cost about one orjson call. A result
cannot show which way it was reached, so these tests watch the decoder's seams: each orjson
parse it makes (what it parsed, and whether that succeeded) and the calls of the functions of
its slower ways, and check them along with the result.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from dra_metadata import (
    MetadataDecodeError,
    NoCompatibleVersionError,
    decode_stream,
    read_metadata_file,
)
from dra_metadata._decoding import _decode as decode_module
from dra_metadata._decoding import _split as split_module
from dra_metadata._model._versions import normalize_api_version
from dra_metadata.writer import encode_stream

from helpers import REPO, V1ALPHA1, V1BETA1, compact, outcome, stream, wire_object

V1 = "metadata.resource.k8s.io/v1"

WATCHED = (
    "_decode_objects",  # the general way, object by object (not the writer's stream of two)
    "_read_value_exactly",  # the exact parser, from where an object starts
    "_has_type_meta_in_another_case",  # the case-insensitive search for apiVersion and kind
    "_object_api_version",  # the general classification of an object
    "_read_object",  # reading one object (one by one)
    "_read_value",  # finding where an object ends and parsing it
    "_parse_run",  # reading a run of small objects at once
    "_skipped_prefix_of_any_objects",  # the check of a run of objects with other members
    "_go_text",  # Go's replacements in a run that orjson refuses
    "_as_bytes",  # converting data that is not bytes
    "resolve_profile",  # the validate= option
)
DECODER_MODULES = (decode_module, split_module)
WHITESPACE = "_WHITESPACE.match"


class DecoderWatch:
    """What the decoder did: each orjson parse, as (input, succeeded), and how often each
    function of ``WATCHED`` and the search for whitespace were called."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parses: list[tuple[Any, bool]] = []
        self.calls: Counter[str] = Counter()
        loads = orjson.loads

        def watched_loads(data: Any) -> Any:
            try:
                value = loads(data)
            except orjson.JSONDecodeError:
                self.parses.append((data, False))
                raise
            self.parses.append((data, True))
            return value

        namespace = SimpleNamespace(loads=watched_loads, JSONDecodeError=orjson.JSONDecodeError)
        # The decoder is two modules: _split reads values, _decode the stream. A function is
        # watched in each module that calls it (by its name there); a call counts once.
        for module in DECODER_MODULES:
            monkeypatch.setattr(module, "orjson", namespace)
        for name in WATCHED:
            counted = self._counted(name)
            for module in DECODER_MODULES:
                if hasattr(module, name):
                    monkeypatch.setattr(module, name, counted)
        pattern = decode_module._WHITESPACE
        counted_match = self._counted(WHITESPACE, pattern.match)
        monkeypatch.setattr(decode_module, "_WHITESPACE", SimpleNamespace(match=counted_match))

    def _counted(self, name: str, function: Callable[..., Any] | None = None) -> Callable[..., Any]:
        function = function or getattr(
            decode_module if hasattr(decode_module, name) else split_module, name
        )

        def counted(*arguments: Any, **options: Any) -> Any:
            self.calls[name] += 1
            return function(*arguments, **options)

        return counted

    @property
    def parsed(self) -> list[bytes]:
        """What each successful parse parsed, without the whitespace around it."""
        return [data.strip() for data, succeeded in self.parses if succeeded]

    @property
    def failed_parses(self) -> int:
        return sum(not succeeded for _, succeeded in self.parses)


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch) -> DecoderWatch:
    return DecoderWatch(monkeypatch)


# What writers write: each object read is parsed once, alone, and nothing slower is taken.


def large_wire_object(*, devices: int = 16, boundary_in_a_string: bool = False) -> dict[str, Any]:
    """The upstream test object with many devices (several KiB, larger than any guess window).

    With ``boundary_in_a_string``, its last device has a string that looks like the boundary of
    two objects: beyond the first KiB, where the end of a small first object is looked for.
    """
    obj = wire_object()
    template = obj["requests"][0]["devices"][0]
    obj["requests"][0]["devices"] = [
        {
            **copy.deepcopy(template),
            "name": f"gpu-{index}",
            "attributes": {
                "model": {"string": "LATEST-GPU-MODEL"},
                "index": {"int": index},
                "nvlink": {"bool": True},
                "driverVersion": {"version": "580.65.6"},
            },
        }
        for index in range(devices)
    ]
    if boundary_in_a_string:
        config = {"string": '{"a": 1} {"b": 2}'}
        obj["requests"][0]["devices"][-1]["attributes"]["config"] = config
    return obj


def written(obj: dict[str, Any], versions: tuple[str, ...] = (V1BETA1, V1ALPHA1)) -> bytes:
    """``obj`` as the writer writes it, one object per version."""
    return encode_stream(decode_stream(compact(obj)).metadata, versions=versions)


def first_object(data: bytes) -> bytes:
    end = data.find(b"}\n{")
    return (data if end == -1 else data[: end + 1]).strip()


def file_cases() -> list[Any]:
    files = sorted((REPO / "examples" / "tree").rglob("*.json"))
    files += sorted((REPO / "tests" / "data" / "upstream").rglob("metadata.json"))
    return [
        pytest.param(path.read_bytes(), id=str(path.relative_to(REPO).parent)) for path in files
    ]


@pytest.mark.parametrize("data", file_cases())
def test_the_files_of_the_examples_and_of_upstream(watch: DecoderWatch, data: bytes) -> None:
    # A writer's stream of two versions takes the shortest way, which no watched function is
    # on; a stream of one object takes the general way and reads that object only.
    result = decode_stream(data)
    assert result.skipped_versions == ()
    assert watch.parsed == [first_object(data)]
    assert watch.failed_parses == 0
    if data.count(b"}\n{") == 1:
        assert sum(watch.calls.values()) == 0
    else:
        assert watch.calls["_decode_objects"] == watch.calls["_read_object"] == 1
        assert watch.calls["_read_value"] == 1
        assert sum(watch.calls.values()) == 3


class RecordingBytes(bytes):
    """Bytes that record how many bytes each search (``find``) and each slice covers: what a
    guess of the decoder costs."""

    def __init__(self, data: bytes) -> None:  # noqa: ARG002 - bytes.__new__ took it
        super().__init__()
        self.searched: list[int] = []
        self.sliced: list[int] = []

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:
        self.searched.append(len(range(len(self))[start:end]))
        return super().find(sub, start, end)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            self.sliced.append(len(range(len(self))[key]))
        return super().__getitem__(key)


@pytest.mark.parametrize("blank_lines", [0, 3])
@pytest.mark.parametrize("versions", [2, 3])
def test_the_guess_of_a_writers_first_object_searches_a_window_only(
    blank_lines: int, versions: int
) -> None:
    # Near the middle (or the first third): two windows at most, whatever the object's size.
    obj = large_wire_object(devices=64)
    newest = written(obj, (V1BETA1,)).replace(V1BETA1.encode(), V1.encode(), 1)
    data = b"\n" * blank_lines + b"".join([newest, written(obj)][3 - versions :])
    assert len(data) > 20 * split_module._WINDOW
    recording = RecordingBytes(data)
    end = split_module._first_object_end(recording, blank_lines)
    assert data[blank_lines:end] == first_object(data)
    assert recording.searched
    assert max(recording.searched) <= 2 * split_module._WINDOW


def test_a_character_offset_reads_four_bytes_a_character_at_most() -> None:
    # UTF-8 needs at most four bytes a character: more would be decoded for nothing.
    data = RecordingBytes(b'"\xc3\xa9t\xc3\xa9"' + b"x" * 100)
    assert split_module._char_offset_to_bytes(data, 0, 5) == 7
    assert data.sliced == [20]


def test_a_whole_slice_of_bytes_is_the_same_object() -> None:
    # tools/mutation-equivalents.txt holds _read_first_value's "data[start:] if start else
    # data" to be no copy either way: decode_stream hands the splitter exact bytes (anything
    # else is converted first), and slicing all of an exact bytes object gives it back.
    data = compact(wire_object())
    assert data[0:] is data
    assert decode_module._as_bytes(bytearray(data)).__class__ is bytes
    assert decode_module._as_bytes(RecordingBytes(data)).__class__ is bytes


SHORTEST = "shortest"
HANDED_OVER = "handed over"
GENERAL = "general"


def streams_of_writers() -> list[Any]:
    small = b'{"kind":"K","apiVersion":"x/v1"}'
    tiny_known = b'{"kind":"DeviceMetadata","apiVersion":"%s"}' % V1ALPHA1.encode()
    large = large_wire_object()

    def newer() -> list[bytes]:
        v1 = written(large, (V1BETA1,)).replace(V1BETA1.encode(), V1.encode(), 1)
        return [v1, written(large)]

    def case(build: Callable[[], list[bytes]], way: str, name: str) -> Any:
        return pytest.param(build, way, id=name)

    return [
        case(lambda: [stream(wire_object())], GENERAL, "the upstream object"),
        case(lambda: [stream(wire_object(V1BETA1), wire_object())], SHORTEST, "two small"),
        case(lambda: [written(large_wire_object(), (V1ALPHA1,))], GENERAL, "one version"),
        case(lambda: [written(large_wire_object())], SHORTEST, "two versions"),
        case(
            lambda: [written(large_wire_object(boundary_in_a_string=True), (V1ALPHA1,))],
            GENERAL,
            "one version, a string like a boundary",
        ),
        case(
            lambda: [written(large_wire_object(boundary_in_a_string=True))],
            SHORTEST,
            "two versions, a string like a boundary",
        ),
        case(newer, GENERAL, "a newer writer's three versions"),
        case(lambda: [*newer()[:1], written(large, (V1BETA1,))], HANDED_OVER, "a newer one first"),
        case(lambda: [b"\n" * 100, written(large_wire_object())], GENERAL, "after blank lines"),
        case(lambda: [small, b"\n", written(large, (V1ALPHA1,))], GENERAL, "a small one first"),
        case(lambda: [small, written(large, (V1ALPHA1,))], GENERAL, "back to back"),
        case(lambda: [small, b"\n", small, b"\n", tiny_known], HANDED_OVER, "three small"),
        case(lambda: [b" ", small, b"\n", small, b"\n", tiny_known], GENERAL, "after a space"),
        case(lambda: [small, b"\n", tiny_known], HANDED_OVER, "two small, under 128 bytes"),
        case(lambda: [small, small, tiny_known], GENERAL, "three small back to back"),
    ]


@pytest.mark.parametrize(("build", "way"), streams_of_writers())
def test_each_object_read_is_parsed_once_alone(
    monkeypatch: pytest.MonkeyPatch, build: Callable[[], list[bytes]], way: str
) -> None:
    # The writer's copies of one object in several versions differ only in their apiVersion:
    # the decoder finds where the first ends by that, then parses it alone, once (benchmarks/bench_decode.py
    # measures it against orjson parsing just that object). A writer's stream of two versions
    # is looked at near its middle only, before anything else is tried.
    parts = build()
    data = b"".join(parts)
    watch = DecoderWatch(monkeypatch)
    result = decode_stream(data)
    objects = [first_object(part) for part in parts if part.strip()]
    read = objects[: len(result.skipped_versions) + 1]
    assert result.api_version in {V1BETA1, V1ALPHA1}
    assert watch.parsed == read
    assert watch.failed_parses == 0
    read_alone = len(read) - (way == HANDED_OVER)
    assert watch.calls["_decode_objects"] == (way != SHORTEST)
    assert watch.calls["_read_object"] == (0 if way == SHORTEST else len(read))
    assert watch.calls["_read_value"] == (0 if way == SHORTEST else read_alone)
    assert watch.calls["_object_api_version"] == len(result.skipped_versions)
    assert watch.calls["_read_value_exactly"] == watch.calls["_has_type_meta_in_another_case"] == 0
    assert watch.calls["_as_bytes"] == watch.calls["resolve_profile"] == 0


@pytest.mark.parametrize(
    "after",
    [
        pytest.param(b"\n\x00\x00\x00\x00", id="NUL bytes"),
        pytest.param(b"]", id="a bracket"),
        pytest.param(b"\nnot JSON", id="text"),
    ],
)
def test_what_follows_the_object_is_never_read(
    monkeypatch: pytest.MonkeyPatch, after: bytes
) -> None:
    # Go's reader stops after the first object of a known version, whatever follows. The object
    # is found by the offset where orjson reports more content; it holds characters of several
    # bytes, which orjson counts as one.
    obj = large_wire_object()
    obj["metadata"]["name"] = "réseau-µ"
    alone = written(obj, (V1ALPHA1,))
    watch = DecoderWatch(monkeypatch)
    assert decode_stream(alone + after).metadata.name == "réseau-µ"
    assert watch.parsed == [alone.strip()]
    assert watch.failed_parses <= 1  # the whole stream, which shows where the object ends
    assert watch.calls["_read_value_exactly"] == 0


def test_a_large_object_first_after_blank_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    other = orjson.dumps({"kind": "Widget", "apiVersion": "example.com/v1", "data": "x" * 4000})
    known = written(large_wire_object())
    watch = DecoderWatch(monkeypatch)
    assert decode_stream(b"\n\n" + other + b"\n" + known).skipped_versions == ("example.com/v1",)
    assert watch.parsed == [other, first_object(known)]
    assert watch.failed_parses <= 1
    assert watch.calls["_read_value_exactly"] == 0


# What needs the exact path takes it, and gets Go's result.


@pytest.mark.parametrize("boundaries", [1, 3], ids=["one", "three"])
@pytest.mark.parametrize("last", [True, False], ids=["last", "followed by another"])
@pytest.mark.parametrize("boundary", [b"}{", b"} {", b"}  {"])
def test_a_string_like_a_boundary_after_a_skipped_object(
    watch: DecoderWatch, boundary: bytes, boundaries: int, last: bool
) -> None:
    # Such a string only makes a guess of where the object ends fail: the next separator is
    # tried, and orjson reads the object; the exact parser is not needed.
    known = compact(wire_object()).replace(
        b'"LATEST-GPU-MODEL"', b'"' + b"x".join([boundary] * boundaries) + b'"'
    )
    data = SMALL + b"\n" + known + (SMALL if not last else b"")
    result = decode_stream(data)
    assert result.skipped_versions == ("x/v1",)
    model = result.metadata.devices[0].attributes["model"].value
    assert model == "x".join([boundary.decode()] * boundaries)
    assert watch.calls["_read_value_exactly"] == 0
    assert watch.parsed == [SMALL, known.strip()]
    assert watch.failed_parses == boundaries


def test_an_object_refused_for_another_reason_is_not_guessed_again(watch: DecoderWatch) -> None:
    # Invalid UTF-8 is not a guess too short: the exact parser reads the object at once.
    known = compact(wire_object()).replace(b'"my-claim"', b'"my-\xffclaim"')
    result = decode_stream(SMALL + b"\n" + known + SMALL + b"\n" + SMALL)
    assert result.metadata.name == "my-\ufffdclaim"
    assert watch.failed_parses == 1
    assert watch.calls["_read_value_exactly"] == 1


def test_four_strings_like_a_boundary_take_the_exact_path(watch: DecoderWatch) -> None:
    # Each guess parses more of the object: after four, the exact parser reads it once, which
    # keeps the time linear in the size of the object.
    known = compact(wire_object()).replace(b'"LATEST-GPU-MODEL"', b'"}{ }{ }{ }{ }{"')
    result = decode_stream(SMALL + b"\n" + known + SMALL)
    assert result.metadata.devices[0].attributes["model"].value == "}{ }{ }{ }{ }{"
    assert watch.failed_parses == 4
    assert watch.calls["_read_value_exactly"] == 1


def test_invalid_utf8_takes_the_exact_path(watch: DecoderWatch) -> None:
    data = compact(wire_object()).replace(b'"my-claim"', b'"my-\xffclaim"')
    assert decode_stream(data).metadata.name == "my-\ufffdclaim"
    assert watch.calls["_read_value_exactly"] == 1


def test_a_key_in_another_case_takes_the_exact_path(watch: DecoderWatch) -> None:
    obj = wire_object()
    obj["KIND"] = "Widget"  # the last key that matches "kind" wins, as in Go
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(compact(obj))
    assert str(info.value) == (
        f'decode {V1ALPHA1}: object 1 has kind "Widget"; '
        "the only kind of this version is DeviceMetadata"
    )
    assert watch.calls["_has_type_meta_in_another_case"] == 1
    assert watch.calls["_read_value_exactly"] == 1


def test_a_number_in_a_field_of_another_type_takes_the_exact_path(
    watch: DecoderWatch, tmp_path: Path
) -> None:
    path = tmp_path / "gpu.example.com-metadata.json"
    path.write_bytes(compact(wire_object(podClaimName=0)).replace(b":0", b":1.50e3"))
    with pytest.raises(MetadataDecodeError) as info:
        read_metadata_file(path)
    assert (info.value.path, info.value.object_index, info.value.field) == (path, 1, "podClaimName")
    assert str(info.value) == (
        f"{path}: decode {V1ALPHA1}: object 1, field podClaimName: "
        "expected a string, got the number 1.50e3"
    )
    assert watch.calls["_read_value_exactly"] == 1


@pytest.mark.parametrize("twice", [False, True], ids=["one object", "a writer's two"])
def test_a_number_in_a_field_of_another_type_in_a_stream(watch: DecoderWatch, twice: bool) -> None:
    # On the shortest way too (a writer's stream of two), the message quotes the number as
    # written, which only the exact parser sees.
    obj = compact(wire_object(V1BETA1, podClaimName=0)).replace(b":0", b":-0.0")
    data = obj + obj.replace(V1BETA1.encode(), V1ALPHA1.encode()) if twice else obj
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    assert (info.value.object_index, info.value.api_version, info.value.field) == (
        1,
        V1BETA1,
        "podClaimName",
    )
    assert str(info.value).endswith("expected a string, got the number -0.0")
    assert watch.calls["_read_value_exactly"] == 1
    assert watch.calls["_decode_objects"] == 1


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(b" ", id="a space first"),
        pytest.param(b"", id="at the first byte"),
    ],
)
def test_a_field_of_the_wrong_type_in_a_writers_stream(watch: DecoderWatch, first: bytes) -> None:
    # The same error, with the object's index, version and field, whichever way is taken.
    obj = large_wire_object()
    obj["requests"][0]["devices"][3]["attributes"]["index"] = {"int": "3"}
    data = first + b"\n".join(
        orjson.dumps({**obj, "apiVersion": version}) for version in (V1BETA1, V1ALPHA1)
    )
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    error = info.value
    assert (error.object_index, error.api_version) == (1, V1BETA1)
    assert error.field == "requests[0].devices[3].attributes[index].int"
    assert str(error) == (
        f"decode {V1BETA1}: object 1, field {error.field}: "
        "expected an integer in the int64 range, got a string ('3')"
    )
    assert watch.calls["_decode_objects"] == (1 if first else 0)
    assert watch.parsed == [data.split(b"\n")[0].strip()]


@pytest.mark.parametrize(
    ("versions", "index"),
    [((V1BETA1, V1ALPHA1), 1), ((V1, V1BETA1), 2)],
    ids=["the first", "after a newer one"],
)
def test_the_error_of_a_file_names_it(
    watch: DecoderWatch, tmp_path: Path, versions: tuple[str, str], index: int
) -> None:
    # On the shortest way, and when it hands over to the general way after a skipped object.
    obj = large_wire_object()
    obj["requests"][0]["devices"][0]["name"] = 0
    path = tmp_path / "gpu.example.com-metadata.json"
    path.write_bytes(
        b"\n".join(orjson.dumps({**obj, "apiVersion": version}) for version in versions)
    )
    with pytest.raises(MetadataDecodeError) as info:
        read_metadata_file(path)
    assert (info.value.path, info.value.object_index) == (path, index)
    assert info.value.field == "requests[0].devices[0].name"
    assert str(info.value).startswith(f"{path}: decode {versions[index - 1]}: object {index}, ")
    assert watch.calls["_read_value"] == index - 1  # the first object is parsed near the middle


# Runs of small objects: read at once, with the result of reading them one by one.

SMALL = b'{"kind":"K","apiVersion":"x/v1"}'


def one_by_one(data: bytes) -> tuple[Any, ...]:
    """The outcome of reading each object alone."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decode_module, "_AT_ONCE_AFTER", -1)
        return outcome(data)


def run_of(objects: list[bytes], separator: bytes = b"\n", count: int = 200) -> bytes:
    return separator.join(objects[index % len(objects)] for index in range(count))


RUNS = [
    pytest.param(run_of([SMALL]), True, id="the usual run"),
    pytest.param(run_of([SMALL], b""), True, id="back to back"),
    pytest.param(run_of([SMALL], b" \r\n\t"), True, id="any whitespace between"),
    pytest.param(run_of([SMALL]) + b"\n" + compact(wire_object()), True, id="then a known one"),
    pytest.param(run_of([SMALL, b'{"apiVersion":"y/v2","kind":"L"}']), True, id="two kinds"),
    pytest.param(run_of([b'{"kind":"K","apiVersion":"/v1"}']), True, id="normalized versions"),
    pytest.param(run_of([b'{"kind":"K","apiVersion":"x/v1","n":1}']), False, id="more members"),
    pytest.param(
        run_of([SMALL] * 20 + [b'{"kind":"K","apiVersion":"x/v\xff"}']), True, id="invalid UTF-8"
    ),
    pytest.param(
        run_of([SMALL] * 20 + [b'{"kind":"K","apiVersion":"x/\\udc00"}']),
        True,
        id="a lone surrogate",
    ),
    pytest.param(
        run_of([SMALL] * 20 + [b'{"kind":"K","apiVersion":"x/\\uDC00"}']),
        True,
        id="a lone surrogate in capitals",
    ),
]


@pytest.mark.parametrize(("data", "only_type_fields"), RUNS)
def test_a_run_of_small_objects_is_read_at_once(
    monkeypatch: pytest.MonkeyPatch, data: bytes, only_type_fields: bool
) -> None:
    expected = one_by_one(data)
    watch = DecoderWatch(monkeypatch)
    assert outcome(data) == expected
    assert watch.calls["_read_object"] <= 10  # eight, then the last alone: not 200
    assert watch.calls["_parse_run"] == 1
    assert watch.calls["_read_value_exactly"] == 0
    if only_type_fields:  # checked by their few distinct values, not object by object
        assert watch.calls["_skipped_prefix_of_any_objects"] == 0
    assert watch.calls["_go_text"] == (b"\xff" in data or b"\\udc00" in data.lower())


def test_skipped_versions_of_a_run_are_normalized() -> None:
    with pytest.raises(NoCompatibleVersionError) as info:
        decode_stream(run_of([b'{"kind":"K","apiVersion":"/v1"}'], count=30))
    assert info.value.unknown_versions == ("v1",) * 30


def test_an_object_of_a_known_version_is_classified_without_normalizing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # kind DeviceMetadata and a version the decoder knows, as written: the version is taken as
    # it is, wherever the object is classified (the loop, a run read at once, the exact path);
    # only other versions are normalized (and checked).
    normalized: list[Any] = []
    normalize = normalize_api_version

    def counted(api_version: Any) -> Any:
        normalized.append(api_version)
        return normalize(api_version)

    monkeypatch.setattr(decode_module, "normalize_api_version", counted)
    known = compact(wire_object())
    in_another_case = wire_object()
    in_another_case["KIND"] = "DeviceMetadata"  # read by the exact parser, kept in order
    streams = [
        stream(wire_object()),
        stream(wire_object(V1BETA1), wire_object()),
        run_of([SMALL] * 20 + [known], count=21) + b"\n" + SMALL,
        compact(in_another_case),
    ]
    for data in streams:
        assert decode_stream(data).metadata.name == "my-claim"
    assert set(normalized) <= {"x/v1"}
    with pytest.raises(NoCompatibleVersionError):  # the watch sees the versions it normalizes
        decode_stream(stream(wire_object(V1BETA1.upper())))
    assert normalized[-1] == V1BETA1.upper()


def test_a_run_that_cannot_be_read_at_once_is_tried_once(watch: DecoderWatch) -> None:
    # A string with both braces might hold a separator that was replaced: such a run is read
    # one by one, in linear time; trying at once again after each object would be quadratic.
    data = run_of([b'{"kind":"K","apiVersion":"x/{v1}"}'])
    with pytest.raises(NoCompatibleVersionError) as info:
        decode_stream(data)
    assert info.value.unknown_versions == ("x/{v1}",) * 200
    assert watch.calls["_parse_run"] == 1
    assert watch.calls["_read_value_exactly"] == 0


def test_a_run_refused_for_what_go_does_not_replace_is_parsed_once(watch: DecoderWatch) -> None:
    # Go's replacements cannot make such a run parse: it is read one by one at once, without
    # parsing it again as text with nothing replaced.
    bad = b'{"kind":"K","apiVersion":"x/v1",}'
    data = run_of([SMALL] * 20 + [bad])
    assert outcome(data) == one_by_one(data)
    assert watch.calls["_parse_run"] == 1
    assert watch.calls["_go_text"] == 1
    assert [type(data) for data, _ in watch.parses] == [bytes] * len(watch.parses)


def test_a_separator_inside_a_string_next_to_a_comma() -> None:
    # Made an array, "}{" inside the string becomes "},{" and the comma between the objects
    # looks like the one put there: the count of the objects agrees, yet Go fails at the comma.
    data = SMALL * 8 + b'{"kind":"K","apiVersion":"x}{v1"},' + SMALL + SMALL
    seen = outcome(data)
    assert seen == one_by_one(data)
    assert seen[0] == "MetadataDecodeError"
    assert seen[2] == 10  # the object index
    assert "invalid character ','" in seen[1]


def padded(size: int) -> bytes:
    """A small object of an unknown version, exactly ``size`` bytes long."""
    obj = b'{"kind":"K","apiVersion":"x/v1","pad":""}'
    return obj[:-2] + b"x" * (size - len(obj)) + obj[-2:]


@pytest.mark.parametrize(
    ("data", "at_once"),
    [
        pytest.param(padded(1024) * 8 + SMALL * 100, True, id="eight objects of 1 KiB"),
        pytest.param(padded(1025) + padded(1024) * 7 + SMALL * 100, False, id="more than 8 KiB"),
        pytest.param(SMALL * 9, False, id="nine objects: the ninth is the last"),
        pytest.param(SMALL * 8 + b"5" + SMALL * 100, False, id="a number after eight"),
    ],
)
def test_when_a_run_is_read_at_once(
    monkeypatch: pytest.MonkeyPatch, data: bytes, at_once: bool
) -> None:
    # After eight skipped objects of 1 KiB or less on average, the objects from the ninth up to
    # the last one are parsed together; the last, and a ninth that is not an object, are read
    # alone.
    expected = one_by_one(data)
    watch = DecoderWatch(monkeypatch)
    assert outcome(data) == expected
    assert watch.calls["_parse_run"] == at_once


# The hint for a byte order mark, wherever it is.


def test_a_byte_order_mark_before_a_later_object() -> None:
    data = SMALL + b"\n\xef\xbb\xbf" + compact(wire_object())
    with pytest.raises(MetadataDecodeError) as info:
        decode_stream(data)
    assert info.value.object_index == 2
    assert str(info.value) == (
        "read metadata object from stream: object 2: invalid character 'ï' looking for "
        f"beginning of value at byte {len(SMALL) + 1} "
        "(a UTF-8 byte order mark, which JSON does not allow)"
    )
