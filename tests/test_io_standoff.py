"""brat standoff and spaCy (DocBin, JSON): documentation examples, round trips on the shared
corpora, folders and zips of documents, and the clear message when spaCy is missing."""

from __future__ import annotations

import builtins
import itertools
import zipfile
from pathlib import Path

import pytest
from shared_data import corpus_path

from cwal.errors import CorpusError, MissingExtraError
from cwal.io import read_corpus
from cwal.io.bundle import expand
from cwal.io.corpus import detect_format, write_corpus
from cwal.io.sentence import Sentence
from cwal.io.spans import char_spans, layout

FIXTURES = Path(__file__).parent / "fixtures" / "formats"


def _labeled_text(sent: Sentence) -> tuple[str, list]:
    return layout(sent)[0], [span[:3] for span in char_spans(sent)]


def test_brat_documentation_example() -> None:
    """https://brat.nlplab.org/standoff.html: entities (T), an event (E), an attribute (A) and a
    note (#); only the text-bound annotations are tags."""
    first, second = read_corpus(FIXTURES / "brat" / "sony.txt")
    assert first.tokens[:4] == ["Sony", "Corporation", "and", "Ericsson"]
    assert first.tags[:5] == [
        "B-Organization",
        "I-Organization",
        "O",
        "B-Organization",
        "B-Merge-Org",
    ]
    assert second.tags[second.tokens.index("London")] == "B-Location"
    assert (first.line, second.line) == (1, 2) and second.meta["start"] == 70


def test_brat_read_from_the_ann_file_and_from_a_zip(tmp_path: Path) -> None:
    by_txt = list(read_corpus(FIXTURES / "brat" / "sony.txt"))
    assert list(read_corpus(FIXTURES / "brat" / "sony.ann")) == by_txt
    archive = tmp_path / "docs.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name in ("sony.txt", "sony.ann"):
            z.write(FIXTURES / "brat" / name, f"corpus/{name}")
    (src,) = expand(archive)
    assert [s.tags for s in read_corpus(src)] == [s.tags for s in by_txt]


@pytest.mark.parametrize("relative", ["conll2002/esp.testa", "conll2000/test.txt"])
def test_brat_round_trip_keeps_text_and_entities(tmp_path: Path, relative: str) -> None:
    sents = list(itertools.islice(read_corpus(corpus_path(relative), format="conll"), 800))
    assert write_corpus(sents, tmp_path / "out", "brat") == len(sents)
    (txt,) = sorted((tmp_path / "out").glob("*.txt"))
    back = list(read_corpus(txt))
    assert len(back) >= len(sents)  # a sentence a line; syntok may split a line further
    expected, base = [], 0
    for sent in sents:
        text, spans = _labeled_text(sent)
        expected += [(base + a, base + b, label) for a, b, label in spans]
        base += len(text) + 1
    found = [
        (s.meta["start"] + a, s.meta["start"] + b, lab)
        for s in back
        for a, b, lab in _labeled_text(s)[1]
    ]
    assert found == expected
    doc = txt.read_text(encoding="utf-8")
    assert all(doc[s.meta["start"] :].startswith(layout(s)[0]) for s in back)


@pytest.mark.parametrize(
    ("ann", "line", "problem"),
    [
        ("T1\tORG 0 4\tSony\nT2\tORG 2 8\tny Cor\n", 2, "overlaps"),
        ("T1\tORG 0 4\tSon\n", 1, "is not 'Son'"),
        ("T1\tORG 0 900\tSony\n", 1, "outside the text"),
        ("T1\tORG zero 4\tSony\n", 1, "malformed"),
    ],
)
def test_bad_brat_annotations_name_the_ann_line(
    tmp_path: Path, ann: str, line: int, problem: str
) -> None:
    (tmp_path / "d.txt").write_text("Sony Corporation\n")
    (tmp_path / "d.ann").write_text(ann)
    with pytest.raises(CorpusError) as caught:
        list(read_corpus(tmp_path / "d.txt"))
    assert caught.value.path.endswith("d.ann") and caught.value.line == line
    assert problem in caught.value.problem


def test_spacy_json_documentation_example() -> None:
    """https://spacy.io/api/data-formats#json-input (BILUO ner tags)."""
    (sent,) = read_corpus(FIXTURES / "spacy_docs.json")
    assert sent.tokens == ["I", "like", "London", "and", "Berlin", "."]
    assert sent.tags == ["O", "O", "B-GPE", "O", "B-GPE", "O"]
    assert sent.columns["pos"][2] == "NNP" and layout(sent)[0] == "I like London and Berlin."


@pytest.mark.parametrize("fmt", ["spacy", "spacy-json"])
@pytest.mark.parametrize("relative", ["conll2002/ned.testa", "conll2000/test.txt"])
def test_spacy_round_trip(tmp_path: Path, fmt: str, relative: str) -> None:
    if fmt == "spacy":
        pytest.importorskip("spacy", reason="the .spacy format needs the optional spaCy extra")
    sents = list(itertools.islice(read_corpus(corpus_path(relative), format="conll"), 800))
    path = tmp_path / ("x.spacy" if fmt == "spacy" else "x.json")
    write_corpus(sents, path, fmt)
    assert detect_format(path) == fmt or fmt == "spacy"
    back = list(read_corpus(path))
    assert [s.tokens for s in back] == [s.tokens for s in sents]
    assert [s.tags for s in back] == [s.tags for s in sents]


def test_docbin_agrees_with_spacy_itself(tmp_path: Path) -> None:
    spacy = pytest.importorskip("spacy", reason="the .spacy format needs the optional spaCy extra")
    from spacy.tokens import DocBin

    sent = Sentence(["Anna", "Berg", "visited", "Köln", "."], ["B-PER", "I-PER", "O", "B-LOC", "O"])
    write_corpus([sent], tmp_path / "a.spacy", "spacy")
    (doc,) = DocBin().from_disk(tmp_path / "a.spacy").get_docs(spacy.blank("en").vocab)
    assert doc.text == "Anna Berg visited Köln ."
    assert [(e.text, e.label_) for e in doc.ents] == [("Anna Berg", "PER"), ("Köln", "LOC")]
    nlp = spacy.blank("de")
    made = nlp("Anna Berg besuchte Köln.")
    made.ents = [made.char_span(0, 9, "PER"), made.char_span(19, 23, "LOC")]
    DocBin(docs=[made]).to_disk(tmp_path / "b.spacy")
    (back,) = read_corpus(tmp_path / "b.spacy")
    assert back.tokens == ["Anna", "Berg", "besuchte", "Köln", "."]
    assert back.tags == ["B-PER", "I-PER", "O", "B-LOC", "O"]


def test_missing_spacy_is_a_clear_message(tmp_path: Path, monkeypatch) -> None:
    real_import = builtins.__import__

    def no_spacy(name, *args, **kwargs):
        if name == "spacy" or name.startswith("spacy."):
            raise ImportError("No module named 'spacy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_spacy)
    with pytest.raises(MissingExtraError, match="pip install spacy"):
        write_corpus([Sentence(["a"], ["O"])], tmp_path / "x.spacy", "spacy")
