"""The CoNLL reader's whole-file route (``_read_whole``: one read, one decode, fields split a
file at a time) gives exactly what the line-by-line route gives: the same sentences (tokens,
tags, columns, documents, start lines) and the same errors, and is taken for clean files."""

from __future__ import annotations

import pytest

from cwal.errors import CorpusError
from cwal.io import conll
from cwal.io.sentence import Sentence
from cwal.io.source import Source

CLEAN = (
    b"-DOCSTART- -X- O\n\nEl DA O\nTribunal NC B-ORG\n\n\nde SP O\n-DOCSTART-x NC B-MISC\n"
    b"-DOCSTART- -X- O\nMadrid NC B-LOC\n"
)


def _both(data: bytes, monkeypatch: pytest.MonkeyPatch, **kw) -> tuple[object, object]:
    """(whole-file result, line-by-line result): sentences, or the CorpusError's text."""

    def run() -> object:
        try:
            return list(conll.read_conll(Source(data, "f.txt"), **kw))
        except CorpusError as exc:
            return f"error: {exc}"

    whole = run()
    with monkeypatch.context() as m:
        m.setattr(conll, "clean_text", lambda *a: None)
        lines = run()
    return whole, lines


def test_hand_worked_file(monkeypatch: pytest.MonkeyPatch) -> None:
    whole, lines = _both(CLEAN, monkeypatch)
    assert whole == [
        Sentence(["El", "Tribunal"], ["O", "B-ORG"], {"pos": ["DA", "NC"]}, {"document": 0}, 3),
        Sentence(["de", "-DOCSTART-x"], ["O", "B-MISC"], {"pos": ["SP", "NC"]}, {"document": 0}, 7),
        Sentence(["Madrid"], ["B-LOC"], {"pos": ["NC"]}, {"document": 1}, 10),
    ]
    assert whole == lines


def test_whole_route_is_taken_for_clean_files(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = []
    real = conll._read_whole

    def spy(*a):
        out = real(*a)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(conll, "_read_whole", spy)
    list(conll.read_conll(Source(CLEAN)))
    list(conll.read_conll(Source(b"a\tDT\tO\n")))
    assert taken == [True, False]  # a tab: the line-by-line route


@pytest.mark.parametrize(
    "data",
    [
        CLEAN,
        CLEAN.replace(b"\n", b"\r\n"),
        CLEAN.replace(b"\n", b"\r"),
        CLEAN.rstrip(b"\n"),
        b"\xef\xbb\xbf" + CLEAN,  # UTF-8 BOM
        CLEAN.replace(b"Madrid", b"Mad\xe9rid"),  # not UTF-8: latin-1
        CLEAN.replace(b"Madrid", "Madri\u2028d".encode()),  # a line separator inside a token
        CLEAN.replace(b"El DA", b"El\tDA"),
        CLEAN.replace(b"El DA", b"El  DA"),
        CLEAN.replace(b"El DA", b" El DA"),
        CLEAN.replace(b"El DA O", b"El DA O "),
        b"\n\n" + CLEAN + b"\n  \n",
        b"a O\nb\n",  # a short row
        b"a B O\nb O\n",  # rows of different lengths
        b"a\xc2\xa0b O\n",  # a no-break space inside a token
        b"a \xe2\x80\x8b\n",  # a field with no visible character
        b"a O\x00\n",
        b"\n\n",
        b"-DOCSTART- O\n\n",
        b"",
    ],
)
def test_same_as_line_by_line(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, lines = _both(data, monkeypatch)
    assert whole == lines


@pytest.mark.parametrize("kw", [{"columns": "word,_,tag"}, {"columns": "word,pos,chunk"},
                                {"scheme": "iob2"}, {"scheme": "iob2", "strict": False},
                                {"tagset": ["O", "B-ORG"]}, {"encoding": "latin-1"},
                                {"encoding": "utf-8-sig"}, {"encoding": "cp1252"},
                                {"max_line": 8}])  # fmt: skip
def test_options_same_as_line_by_line(kw: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"\xef\xbb\xbf" + CLEAN + b"\nx NC I-PER\n"
    whole, lines = _both(data, monkeypatch, **kw)
    assert whole == lines
    assert whole != [] and (kw.get("max_line") != 8 or isinstance(whole, str))
