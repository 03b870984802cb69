"""Raw text, Prodigy, doccano, CSV/TSV: examples from each tool's documentation, round trips on
the shared corpora, and the offsets every token keeps into its text."""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path

import pytest
from shared_data import corpus_path

from cwal.errors import CorpusError
from cwal.io import read_corpus, read_corpus_bytes, schemes
from cwal.io.corpus import detect_format, write_corpus
from cwal.io.raw import read_raw
from cwal.io.sentence import Sentence
from cwal.io.spans import char_spans, layout

FIXTURES = Path(__file__).parent / "fixtures" / "formats"


def _round_trip(sents: list[Sentence], fmt: str, **kw) -> list[Sentence]:
    buf = io.StringIO()
    assert write_corpus(sents, buf, fmt, **kw) == len(sents)
    return list(read_corpus_bytes(buf.getvalue().encode(), f"x.{fmt}", format=fmt))


def test_prodigy_documentation_example() -> None:
    """https://prodi.gy/docs/api-interfaces#ner_manual (the MacBook Pro task)."""
    (sent,) = read_corpus(FIXTURES / "prodigy_docs.jsonl")
    assert sent.tokens == ["First", "look", "at", "the", "new", "MacBook", "Pro"]
    assert sent.tags == ["O"] * 5 + ["B-PRODUCT", "I-PRODUCT"]
    text, offsets = layout(sent)
    assert text == "First look at the new MacBook Pro"
    assert text[offsets[5][0] : offsets[6][1]] == "MacBook Pro"


def test_doccano_documentation_examples() -> None:
    """https://doccano.github.io/doccano/tutorial/ (sequence labeling; relation export)."""
    sents = list(read_corpus(FIXTURES / "doccano_docs.jsonl"))
    first = sents[0]
    assert first.tokens == [
        "EU",
        "rejects",
        "German",
        "call",
        "to",
        "boycott",
        "British",
        "lamb",
        ".",
    ]
    assert first.tags == ["B-ORG", "O", "B-MISC", "O", "O", "O", "B-MISC", "O", "O"]
    assert sents[2].tags == ["O", "B-PERSON"]
    assert schemes.spans(sents[4].tags, "IOB2") == [
        ("ORG", 0, 1),
        ("DATE", 4, 8),  # September 4 , 1998
        ("PERSON", 10, 12),
        ("PERSON", 13, 15),
    ]
    assert sents[4].meta["relations"][0]["type"] == "foundedAt"
    assert sents[3].meta["cats"] == ["flight"]
    for sent in sents:  # every label is the text it marks
        text, offsets = layout(sent)
        assert all(text[s:e] == tok for tok, (s, e) in zip(sent.tokens, offsets, strict=True))


@pytest.mark.parametrize("fmt", ["prodigy", "doccano", "jsonl"])
def test_documentation_examples_round_trip(fmt: str) -> None:
    sents = [
        *read_corpus(FIXTURES / "prodigy_docs.jsonl"),
        *read_corpus(FIXTURES / "doccano_docs.jsonl"),
    ]
    back = _round_trip(sents, fmt)
    assert [_labeled_text(s) for s in back] == [_labeled_text(s) for s in sents]
    if fmt != "doccano":  # doccano keeps no tokens: its text is tokenized again
        assert [(s.tokens, s.tags, layout(s)) for s in back] == [
            (s.tokens, s.tags, layout(s)) for s in sents
        ]


def _labeled_text(sent: Sentence) -> tuple[str, list[tuple[int, int, str]]]:
    return layout(sent)[0], [span[:3] for span in char_spans(sent)]


@pytest.mark.parametrize(
    ("relative", "scheme"), [("conll2002/esp.train", "IOB2"), ("conll2000/train.txt", "IOB2")]
)
@pytest.mark.parametrize("fmt", ["prodigy", "doccano", "jsonl", "conll"])
def test_shared_corpora_round_trip(relative: str, scheme: str, fmt: str) -> None:
    path = corpus_path(relative)
    sents = list(itertools.islice(read_corpus(path, format="conll"), 2000))
    back = _round_trip(sents, fmt)
    if fmt == "doccano":  # no tokens in doccano: the same text and labeled spans come back
        assert [_labeled_text(s) for s in back] == [_labeled_text(s) for s in sents]
        return
    assert [s.tokens for s in back] == [s.tokens for s in sents]
    assert [s.tags for s in back] == [s.tags for s in sents]  # IOB2 in, IOB2 out


RAW = (
    "Dr. Müller moved to São Paulo in 2019. He said, “Ça va?”\r\n"
    "\r\n"
    "Zweiter Absatz 😀 mit Emoji. 東京は大きい。\r"
    "Last line without an end"
)


def test_raw_text_keeps_offsets_lines_and_document() -> None:
    sents = list(read_raw(io.BytesIO(RAW.encode()), document="doc-1"))
    normalized = RAW.replace("\r\n", "\n").replace("\r", "\n")
    assert len(sents) >= 4
    for sent in sents:
        text, offsets = layout(sent)
        start = sent.meta["start"]
        assert normalized[start : start + len(text)] == text
        assert [text[s:e] for s, e in offsets] == sent.tokens
        assert sent.meta["doc"] == "doc-1" and sent.tags is None
    assert sents[0].tokens[:2] == ["Dr", "."] or sents[0].tokens[0] == "Dr."
    assert [s.line for s in sents][0] == 1
    assert next(s for s in sents if "Zweiter" in s.tokens).line == 3
    assert sents[-1].line == 4 and sents[-1].tokens[-1] == "end"


def test_raw_text_refuses_control_characters_with_their_line() -> None:
    data = b"Fine.\nStill fine.\nA bell \x07 rings.\n"
    with pytest.raises(CorpusError) as caught:
        list(read_corpus_bytes(data, "a.txt", format="raw"))
    assert caught.value.line == 3 and "control character" in caught.value.problem


def test_raw_round_trips_through_every_span_format() -> None:
    sents = list(read_raw(io.BytesIO(RAW.encode())))
    for fmt in ("prodigy", "doccano", "jsonl"):
        back = _round_trip(sents, fmt)
        assert [layout(s) for s in back] == [layout(s) for s in sents], fmt


def test_doccano_spans_inside_a_token_cut_it() -> None:
    data = '{"text": "Visit the U.S.A. today", "label": [[10, 13, "LOC"]]}\n'
    (sent,) = read_corpus_bytes(data.encode(), "a.jsonl")
    text, offsets = layout(sent)
    marked = [tok for tok, tag in zip(sent.tokens, sent.tags, strict=True) if tag != "O"]
    assert "".join(marked) == "U.S" == text[10:13]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"text": "abc", "label": [[0, 9, "X"]]}', "outside the text"),
        ('{"text": "ab cd", "label": [[0, 5, "X"], [3, 5, "Y"]]}', "overlaps"),
        ('{"text": "ab", "label": [[0, "2", "X"]]}', "must be [start, end"),
        ('{"label": [[0, 2, "X"]]}', 'missing key "text"'),
        (
            '{"text": "ab", "tokens": [{"text": "b", "start": 0, "end": 1}], "spans": []}',
            "is not the text",
        ),
        (
            '{"text": "ab c", "tokens": [{"text": "ab", "start": 0, "end": 2}, {"text": "c", "start": 3, "end": 4}], "spans": [{"start": 1, "end": 4, "label": "X"}]}',
            "token boundaries",
        ),
    ],
)
def test_bad_span_files_name_line_and_problem(line: str, problem: str) -> None:
    data = '{"text": "fine"}\n' + line + "\n"
    with pytest.raises(CorpusError) as caught:
        list(
            read_corpus_bytes(
                data.encode(), "a.jsonl", format="prodigy" if "tokens" in line else "doccano"
            )
        )
    assert caught.value.line == 2 and problem in caught.value.problem


def test_prodigy_reject_answers_stay_unlabeled() -> None:
    data = '{"text": "a b", "spans": [{"start": 0, "end": 1, "label": "X"}], "answer": "reject"}\n'
    (sent,) = read_corpus_bytes(data.encode(), "a.jsonl")
    assert sent.tokens == ["a", "b"] and sent.tags is None


@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        ('{"tokens": ["a"], "tags": ["O"]}\n', "jsonl"),
        ('{"text": "a b"}\n', "prodigy"),
        ('{"text": "a b", "spans": []}\n', "prodigy"),
        ('{"text": "a b", "label": []}\n', "doccano"),
        ("He said, fine.\nThen he left.\n", "raw"),
        ("He said , fine .\nThen he left .\n", "text"),
    ],
)
def test_detect_span_formats(tmp_path: Path, data: str, fmt: str) -> None:
    path = tmp_path / "x.txt"
    path.write_text(data, encoding="utf-8")
    assert detect_format(path) == fmt


@pytest.mark.parametrize("sep", [",", "\t"])
def test_csv_and_tsv_escape_formula_cells(sep: str) -> None:
    sents = [
        Sentence(
            ["=1+1", "+x", "-", "@SUM(A1)", "ok", "a,b"],
            ["O"] * 6,
            {"pos": ["=", "N", "-", "N", "N", "N"]},
        )
    ]
    buf = io.StringIO()
    write_corpus(sents, buf, "csv" if sep == "," else "tsv")
    rows = list(csv.reader(io.StringIO(buf.getvalue()), delimiter=sep))
    assert rows[0] == ["sentence", "token", "word", "pos", "tag"]
    assert [r[2] for r in rows[1:]] == ["'=1+1", "'+x", "'-", "'@SUM(A1)", "ok", "a,b"]
    assert [r[3] for r in rows[1:]] == ["'=", "N", "'-", "N", "N", "N"]
    cells = [c for r in rows for c in r]
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)
