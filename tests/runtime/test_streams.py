"""The token-admitted streams both gRPC servers share: the hello's token, the gate on silent peers, the reader."""

import json
import threading

from hypothesis import given
from hypothesis import strategies as st

from distrl.runtime.streams import (
    HELLO_BYTES,
    PRE_HELLO_STREAMS,
    HelloGate,
    StreamReader,
    hello_token,
    same_token,
)


def test_the_token_of_a_hello():
    assert hello_token(json.dumps({"token": "abc"}).encode()) == "abc"
    assert hello_token(b"{}") == ""  # names none: only a run without a token admits it
    assert hello_token(None) is None
    assert hello_token(json.dumps({"token": 7}).encode()) is None
    assert hello_token(json.dumps({"token": "x" * HELLO_BYTES}).encode()) is None  # too long to be a hello: unread
    assert hello_token(b"[" * 3000 + b"]" * 3000) is None  # nested deeper than JSON's recursion: refused, no crash


@given(st.binary(max_size=HELLO_BYTES + 8))
def test_any_bytes_give_a_string_or_none_and_never_raise(hello):
    got = hello_token(hello)
    assert got is None or isinstance(got, str)
    assert not same_token(got, "the-run's-token") or got == "the-run's-token"


def test_the_comparison_takes_only_the_exact_token():
    assert same_token("tok", "tok")
    assert not same_token("to", "tok") and not same_token(None, "tok") and not same_token("tök", "tok")
    surrogate = hello_token(b'{"token": "\\ud800"}')  # JSON lets a lone surrogate through; str.encode() would raise
    assert surrogate == "\ud800" and not same_token(surrogate, "tok")


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40))
def test_no_token_string_makes_the_comparison_raise(given_token):
    assert same_token(given_token, "tok") == (given_token == "tok")


def silent(release: threading.Event):
    """A stream that says nothing until ``release`` is set, then ends."""
    release.wait(30)
    yield from ()


def test_a_newcomer_drops_the_longest_waiting_silent_stream():
    gate, releases, results = HelloGate(), [threading.Event() for _ in range(PRE_HELLO_STREAMS)], {}
    waiters = []
    for i, release in enumerate(releases):
        t = threading.Thread(target=lambda i=i, r=release: results.update({i: gate.hello(StreamReader(silent(r)), 30)}))
        t.start()
        waiters.append(t)
        while gate.waiting < i + 1:  # each joins before the next: the first is the oldest
            threading.Event().wait(0.01)
    talker = StreamReader(iter([b"hello"]))
    assert gate.hello(talker, 30) == b"hello"  # the newcomer took the oldest's place
    waiters[0].join(30)
    assert results == {0: None}  # the oldest was dropped; the others still wait
    assert gate.waiting == PRE_HELLO_STREAMS - 1
    for release in releases:
        release.set()
    for t in waiters:
        t.join(30)
    assert gate.waiting == 0


def test_the_reader_returns_none_after_the_stream_ends_or_a_timeout():
    reader = StreamReader(iter([b"a", b"b"]))
    assert reader.get(5) == b"a" and reader.get(5) == b"b"
    assert reader.get(5) is None
    release = threading.Event()
    quiet = StreamReader(silent(release))
    assert quiet.get(0.3) is None  # nothing said in time
    quiet.drop()
    release.set()
