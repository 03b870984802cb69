"""CoNLL-U and Label Studio: each tool's documentation example, round trips on the shared
corpora, detection, and errors that name the line."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import conllu
import pytest
from shared_data import corpus_path

from cwal.errors import CorpusError
from cwal.io import read_corpus, read_corpus_bytes
from cwal.io.corpus import detect_format, write_corpus
from cwal.io.sentence import Sentence
from cwal.io.spans import layout

FIXTURES = Path(__file__).parent / "fixtures" / "formats"


def _round_trip(sents: list[Sentence], fmt: str) -> tuple[str, list[Sentence]]:
    buf = io.StringIO()
    assert write_corpus(sents, buf, fmt) == len(sents)
    data = buf.getvalue()
    return data, list(read_corpus_bytes(data.encode(), "x", format=fmt))


def test_conllu_documentation_example() -> None:
    """https://universaldependencies.org/format.html (two sentences, one multiword token)."""
    first, second = read_corpus(FIXTURES / "ud_docs.conllu")
    assert first.tokens == ["They", "buy", "and", "sell", "books", "."] and first.tags is None
    assert layout(first)[0] == "They buy and sell books."
    assert layout(first)[1][4:] == [(18, 23), (23, 24)]  # SpaceAfter=No on "books"
    assert first.columns["pos"][0] == "PRON" and first.columns["xpos"][0] == "PRP"
    assert second.tokens == ["vamos", "nos", "a", "el", "mar"]  # words, not the 1-2 / 3-4 ranges
    assert second.tags == ["O", "O", "O", "O", "B-LOC"]


def test_conllu_written_by_cwal_parses_with_the_reference_parser() -> None:
    sents = list(read_corpus(FIXTURES / "ud_docs.conllu"))
    data, back = _round_trip(sents, "conllu")
    parsed = conllu.parse(data)
    assert [[w["form"] for w in s] for s in parsed] == [s.tokens for s in sents]
    assert parsed[0].metadata["text"] == "They buy and sell books."
    assert [s.tokens for s in back] == [s.tokens for s in sents]
    assert back[1].tags == sents[1].tags


def test_labelstudio_documentation_example() -> None:
    """https://labelstud.io/guide/export#Label-Studio-JSON-format-of-annotated-tasks"""
    labeled, unlabeled = read_corpus(FIXTURES / "labelstudio_docs.json")
    assert labeled.tokens[0] == "Opossums" and labeled.tags[0] == "B-Animal"
    assert labeled.tags[labeled.tokens.index("Ohio")] == "B-Location"
    assert unlabeled.tags is None  # predictions are not labels


def test_labelstudio_predictions_carry_scores() -> None:
    sent = Sentence(
        ["Anna", "Berg", "sang"], ["B-PER", "I-PER", "O"], {"confidence": ["0.9", "0.6", "1.0"]}
    )
    data, back = _round_trip([sent], "labelstudio")
    (task,) = json.loads(data)
    (pred,) = task["predictions"]
    assert pred["result"][0]["value"] == {
        "start": 0,
        "end": 9,
        "text": "Anna Berg",
        "labels": ["PER"],
    }
    assert pred["result"][0]["score"] == 0.6 and abs(pred["score"] - 2.5 / 3) < 1e-12
    assert back[0].tags is None  # a prediction file reads back as text to label


@pytest.mark.parametrize("relative", ["conll2002/ned.train", "conll2000/train.txt"])
@pytest.mark.parametrize("fmt", ["conllu", "labelstudio"])
def test_shared_corpora_round_trip(relative: str, fmt: str) -> None:
    sents = list(itertools.islice(read_corpus(corpus_path(relative), format="conll"), 1500))
    _, back = _round_trip(sents, fmt)
    assert [s.tokens for s in back] == [s.tokens for s in sents]
    assert [s.tags for s in back] == [s.tags for s in sents]


@pytest.mark.parametrize(
    ("name", "data", "fmt"),
    [
        ("x.txt", (FIXTURES / "ud_docs.conllu").read_text(), "conllu"),
        ("x.txt", "1\tHi\t_\t_\t_\t_\t_\t_\t_\t_\n", "conllu"),
        ("x.json", (FIXTURES / "labelstudio_docs.json").read_text(), "labelstudio"),
        ("x.txt", '{\n  "data": {"text": "a"}\n}\n', "labelstudio"),
    ],
)
def test_detection(tmp_path: Path, name: str, data: str, fmt: str) -> None:
    path = tmp_path / name
    path.write_text(data)
    assert detect_format(path) == fmt
    assert list(read_corpus(path))


@pytest.mark.parametrize(
    ("fmt", "data", "line", "problem"),
    [
        (
            "conllu",
            "1\tok\t_\t_\t_\t_\t_\t_\t_\t_\n\n1\tbad\u00a0tok\t_\t_\t_\t_\t_\t_\t_\t_\n",
            3,
            "whitespace",
        ),
        ("conllu", "# text = a\n1\ta\t_\t_\t_\t_\t_\t_\t_\tNER=BPER\n", 2, "malformed tag"),
        ("labelstudio", '[\n{"data": {"text": "ab"}},\n{"data": {"x": 1}}\n]', 3, "without text"),
        (
            "labelstudio",
            '[\n{"data": {"text": "ab"}},\n{"data": {"text": "ab"}, "annotations": [{"result": [{"type": "labels", "value": {"start": 0, "end": 9, "labels": ["X"]}}]}]}\n]',
            3,
            "outside the text",
        ),
        (
            "labelstudio",
            '[\n{"data": {"text": "ab"}}\n{"data": {"text": "ab"}}]',
            3,
            "expected ','",
        ),
    ],
)
def test_errors_name_the_line(fmt: str, data: str, line: int, problem: str) -> None:
    kw = {"scheme": "IOB2"} if fmt == "conllu" else {}
    with pytest.raises(CorpusError) as caught:
        list(read_corpus_bytes(data.encode(), "x", format=fmt, **kw))
    assert caught.value.line == line and problem in caught.value.problem
