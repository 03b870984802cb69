"""Safe tokens and line ends: every reader refuses a token no format can write back (whitespace,
control characters, lone surrogates) with its line, and reads LF, CRLF and CR-only files alike."""

from __future__ import annotations

import io
import json

import pytest

from cwal.errors import CorpusError
from cwal.io import read_corpus_bytes
from cwal.io import source as source_module
from cwal.io.source import raw_lines, token_problem

CONLL = "He PRP B-NP\nreckons VBZ B-VP\n\nthe DT B-NP\ndeficit NN I-NP\n"


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_every_line_end_reads_the_same(end: str) -> None:
    data = CONLL.replace("\n", end).encode()
    sents = list(read_corpus_bytes(data, "a.conll"))
    assert [s.tokens for s in sents] == [["He", "reckons"], ["the", "deficit"]]
    assert [s.line for s in sents] == [1, 4]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7])
def test_line_ends_split_across_read_chunks(monkeypatch, chunk: int) -> None:
    monkeypatch.setattr(source_module, "_READ_CHUNK", chunk)
    data = b"ab\r\ncd\r\re\nf\r\n\r\ng"
    assert list(raw_lines(io.BytesIO(data))) == [b"ab", b"cd", b"", b"e", b"f", b"", b"g"]


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        ("New York", "whitespace (U+0020)"),
        ("10\u00a0000", "whitespace (U+00A0)"),
        ("a\nb", "whitespace (U+000A)"),
        ("a\u2028b", "whitespace (U+2028)"),
        ("\x1b[31m", "a control character (U+001B)"),
        ("a\x7fb", "a control character (U+007F)"),
        ("\ud800", "a lone surrogate (U+D800)"),
        ("\u200b", "empty token"),
    ],
)
def test_unsafe_tokens_are_named(token: str, problem: str) -> None:
    assert problem in token_problem(token)


@pytest.mark.parametrize(
    "token", ["é", "\U0001f600", "e\u0301", "\u05e9\u05dc\u05d5\u05dd", "a\u200db"]
)
def test_safe_tokens_pass(token: str) -> None:
    assert token_problem(token) is None


@pytest.mark.parametrize(
    ("name", "data", "line"),
    [
        ("a.jsonl", '{"tokens": ["ok"]}\n{"tokens": ["New York"]}\n', 2),
        ("a.jsonl", '{"tokens": ["ok"]}\n\n{"tokens": ["a", "\\ud800"]}\n', 3),
        ("a.jsonl", '{"tokens": ["a"], "tags": ["B-X Y"]}\n', 1),
        ("a.jsonl", '{"tokens": ["a"], "pos": ["N\\u0007"]}\n', 1),
        ("a.conll", "a DT O\nb\x0bc NN O\n", 2),
        ("a.conll", "a DT O\r\rb NN O\x1f\r", 3),
        ("a.txt", "fine line\nbad\u00a0token here\n", 2),
    ],
)
def test_unsafe_tokens_are_refused_with_their_line(name: str, data: str, line: int) -> None:
    with pytest.raises(CorpusError) as caught:
        list(read_corpus_bytes(data.encode("utf-8", "surrogatepass"), name))
    assert caught.value.line == line
    assert "holds" in caught.value.problem


def test_json_escapes_of_safe_characters_still_read() -> None:
    line = json.dumps({"tokens": ["caf\u00e9", "\U0001f600"]})  # ASCII escapes
    (sent,) = read_corpus_bytes(line.encode(), "a.jsonl")
    assert sent.tokens == ["café", "\U0001f600"]
