"""A plain read (the standard library's sockets, for a probe) takes an HTTP answer only when it is
complete and in a form it knows; any other bytes are declined, never misread or raised as
something else, and then the GET is made the usual way (httpx2).

The answers are bytes fed to the reader as a socket would hand them over, cut anywhere: every
framing an API server uses (Content-Length, chunked, to the close), and broken ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_metadata.kube._plain_http import BODY_LIMIT, LINE_LIMIT, Answer, Declined, read_response


def feeder(pieces: Iterable[bytes]) -> Callable[[], bytes]:
    """receive() handing out ``pieces`` one per call, then b"" (the connection closed)."""
    remaining = list(pieces)

    def receive() -> bytes:
        return remaining.pop(0) if remaining else b""

    return receive


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """``data`` cut at ``points`` (indexes into it), as a socket may hand it over."""
    edges = sorted({0, len(data), *(point % (len(data) + 1) for point in points)})
    return [data[start:end] for start, end in itertools.pairwise(edges) if end > start]


def read(data: bytes, points: list[int] | None = None) -> Answer:
    return read_response(feeder(cut(data, points or [])))


BODY = b'{"kind":"Pod","metadata":{"name":"dra-meta"}}'


def chunked(body: bytes, size: int, extension: bytes = b"") -> bytes:
    pieces = [body[start : start + size] for start in range(0, len(body), size)]
    framed = b"".join(b"%x%s\r\n%s\r\n" % (len(piece), extension, piece) for piece in pieces)
    return framed + b"0\r\n"


@given(
    st.binary(max_size=3000),
    st.sampled_from(["length", "chunked", "chunked-extended", "to-the-close", "http/1.0"]),
    st.integers(1, 700),
    st.lists(st.integers(0, 10_000), max_size=12),
)
def test_an_answer_reads_the_same_however_it_is_cut(
    body: bytes, framing: str, chunk_size: int, points: list[int]
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    keep_alive = True
    if framing == "length":
        data = head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    elif framing.startswith("chunked"):
        extension = b";name=value" if framing == "chunked-extended" else b""
        trailer = b"X-Trailer: yes\r\n" if extension else b""
        data = head + b"Transfer-Encoding: chunked\r\n\r\n"
        data += chunked(body, chunk_size, extension) + trailer + b"\r\n"
    elif framing == "to-the-close":
        data, keep_alive = head + b"\r\n" + body, False
    else:
        data = b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        keep_alive = False
    answer = read(data, points)
    assert (answer.status, answer.body, answer.keep_alive) == (200, body, keep_alive)


def test_status_and_body_of_a_refusal_are_kept() -> None:
    status = b'{"kind":"Status","reason":"Forbidden","code":403}'
    data = b"HTTP/1.1 403 Forbidden\r\nContent-Length: %d\r\n\r\n" % len(status) + status
    answer = read(data)
    assert (answer.status, answer.body) == (403, status)


@pytest.mark.parametrize(
    ("headers", "keep_alive"),
    [
        (b"Connection: close\r\n", False),
        (b"Connection: keep-alive, Close\r\n", False),
        (b"", True),
    ],
)
def test_a_connection_is_kept_only_when_the_server_keeps_it(
    headers: bytes, *, keep_alive: bool
) -> None:
    data = b"HTTP/1.1 200 OK\r\n" + headers + b"Content-Length: 2\r\n\r\n{}"
    assert read(data).keep_alive is keep_alive


def test_bytes_beyond_the_answer_end_the_connection() -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n"
    answer = read(data)
    assert (answer.body, answer.keep_alive) == (b"{}", False)


def test_a_header_spread_over_several_lines_is_joined() -> None:
    data = b"HTTP/1.1 200 OK\r\nVary: Accept\r\nvary: Origin\r\nContent-Length: 2\r\n\r\n{}"
    assert read(data).body == b"{}"


@pytest.mark.parametrize(
    "data",
    [
        b"",  # closed at once
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",  # closed before the body's end
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n",  # closed in the headers
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n",  # no last chunk
        b"HTTP/2 200\r\n\r\n",
        b"HTTP/1.1 20 OK\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 OK\r\n\r\n",
        b"http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: 0x2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (BODY_LIMIT + 1),
        b"HTTP/1.1 200 OK\r\nX-Folded: one\r\n two\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nNo colon here\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nName : value\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1_0\r\n" + b"x" * 16,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-Long: " + b"x" * (LINE_LIMIT + 1) + b"\r\n\r\n",
    ],
    ids=lambda data: data[:60].decode("latin-1"),
)
def test_an_answer_it_does_not_take_is_declined(data: bytes) -> None:
    with pytest.raises(Declined):
        read(data)


def test_a_body_to_the_close_beyond_the_limit_is_declined() -> None:
    pieces = [b"HTTP/1.1 200 OK\r\n\r\n"] + [b"x" * (1 << 20)] * ((BODY_LIMIT >> 20) + 1)
    with pytest.raises(Declined):
        read_response(feeder(pieces))


@given(st.binary(max_size=400), st.lists(st.integers(0, 500), max_size=6))
def test_any_bytes_are_an_answer_or_declined(data: bytes, points: list[int]) -> None:
    try:
        answer = read(data, points)
    except Declined:
        return
    assert 200 <= answer.status <= 999
    assert data.startswith((b"HTTP/1.1 ", b"HTTP/1.0 "))


@given(
    st.lists(
        st.sampled_from(
            [
                b"HTTP/1.1 200 OK\r\n",
                b"Content-Length: 3\r\n",
                b"Transfer-Encoding: chunked\r\n",
                b"Connection: close\r\n",
                b"\r\n",
                b"3\r\nabc\r\n",
                b"0\r\n",
                b"abc",
                b";x\r\n",
                b" \r\n",
            ]
        ),
        max_size=10,
    )
)
def test_answers_made_of_real_parts_are_an_answer_or_declined(parts: list[bytes]) -> None:
    data = b"".join(parts)
    try:
        answer = read(data)
    except Declined:
        return
    assert answer.status == 200
    head, _, rest = data.partition(b"\r\n\r\n")
    if b"Transfer-Encoding: chunked" in head:  # only "3\r\nabc\r\n" is a chunk that fits
        assert answer.body == b"abc" * (len(answer.body) // 3)
    else:  # Content-Length: 3, or to the close
        assert rest.startswith(answer.body)
        assert len(answer.body) == 3 or b"Content-Length: 3" not in head
