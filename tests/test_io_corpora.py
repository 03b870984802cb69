"""The readers on the real CoNLL-2000 and CoNLL-2002 corpora, checked against plain counts."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from shared_data import corpus_path

from cwal.io import Sentence, read_conll, read_corpus, schemes, write_conll

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def conll2000() -> list[Sentence]:
    """CoNLL-2000 train, read once for the tests of this module."""
    return list(read_corpus(corpus_path("conll2000/train.txt")))


def plain_counts(path: Path) -> tuple[int, int]:
    """(sentences, tokens) by a plain loop: runs of non-blank lines, -DOCSTART- lines excluded."""
    sentences = tokens = 0
    in_sentence = False
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.strip() or raw.startswith(b"-DOCSTART-"):
                in_sentence = False
                continue
            tokens += 1
            if not in_sentence:
                sentences += 1
                in_sentence = True
    return sentences, tokens


@pytest.mark.parametrize(
    ("relative", "n_sentences", "n_tokens"),
    [
        ("conll2000/train.txt", 8936, 211727),  # both numbers also in the corpus README
        ("conll2002/ned.train", 15806, 202644),
        ("conll2002/esp.train", 8323, 264715),
    ],
)
def test_sentence_and_token_counts(
    relative: str, n_sentences: int, n_tokens: int, conll2000: list[Sentence]
) -> None:
    path = corpus_path(relative)
    sents = conll2000 if relative.startswith("conll2000") else list(read_corpus(path))
    assert (len(sents), sum(map(len, sents))) == plain_counts(path) == (n_sentences, n_tokens)
    assert all(s.tags is not None and len(s.tags) == len(s) == len(s.pos) for s in sents)


def test_conll2000_first_sentence_and_exact_rewrite(conll2000: list[Sentence]) -> None:
    path = corpus_path("conll2000/train.txt")
    first = next(read_conll(path, "word,pos,chunk"))
    assert first.line == 1 and first.tags is None
    assert first.tokens[:4] == ["Confidence", "in", "the", "pound"]
    assert first.pos[:4] == ["NN", "IN", "DT", "NN"]
    assert first.columns["chunk"] == conll2000[0].tags
    assert first.columns["chunk"][:4] == ["B-NP", "B-PP", "B-NP", "I-NP"]
    buf = io.StringIO()
    assert write_conll(conll2000, buf) == 8936
    assert buf.getvalue() == path.read_text(encoding="utf-8")


def test_conll2000_chunks_are_valid_iob2_and_np_view(conll2000: list[Sentence]) -> None:
    sents = conll2000
    assert all(schemes.is_valid(s.tags, "IOB2") for s in sents)
    types = schemes.tag_types(t for s in sents for t in s.tags)
    assert "NP" in types and "VP" in types and len(types) == 11
    np_only = schemes.task_view(sents[0].tags, keep={"NP"})
    assert schemes.tag_types(np_only) == ["NP"]
    assert [c for c in schemes.spans(sents[0].tags, "IOB2") if c[0] == "NP"] == schemes.spans(
        np_only, "IOB2"
    )


def test_ned_docstart_lines_are_dropped_and_lines_kept() -> None:
    path = corpus_path("conll2002/ned.train")
    sents = read_conll(path)
    first = next(sents)
    assert first.line == 2  # line 1 is -DOCSTART-
    assert first.tokens[:3] == ["De", "tekst", "van"] and first.pos[:3] == ["Art", "N", "Prep"]
    lines = path.read_text(encoding="utf-8").split("\n")
    for sent in sents:  # every sentence's first token sits on its recorded line
        assert lines[sent.line - 1].split(" ")[0] == sent.tokens[0]


def test_ned_as_latin1_reads_the_same(tmp_path: Path) -> None:
    path = corpus_path("conll2002/ned.train")
    head = "\n".join(path.read_text(encoding="utf-8").split("\n")[:20000]) + "\n"
    assert any(ord(ch) > 127 for ch in head)  # the test needs non-ASCII letters
    latin = tmp_path / "ned.latin1"
    latin.write_bytes(head.encode("latin-1"))
    utf8 = tmp_path / "ned.utf8"
    utf8.write_bytes(head.encode("utf-8"))
    assert list(read_conll(latin)) == list(read_conll(utf8))
