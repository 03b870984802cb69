"""Readers and writers of the three formats on small hand-written inputs, and their round trips."""

from __future__ import annotations

import io
import types
from pathlib import Path

import pytest

from cwal.io import (
    Sentence,
    detect_format,
    read_conll,
    read_corpus,
    read_corpus_bytes,
    read_jsonl,
    read_text,
    write_conll,
    write_jsonl,
    write_text,
)

CHUNKS = "He PRP B-NP\nreckons VBZ B-VP\n\nthe DT B-NP\ndeficit NN I-NP\n\n"


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_three_columns_default_to_word_pos_tag(tmp_path: Path) -> None:
    sents = read_conll(_write(tmp_path, "a.conll", CHUNKS))
    assert isinstance(sents, types.GeneratorType)
    assert list(sents) == [
        Sentence(["He", "reckons"], ["B-NP", "B-VP"], {"pos": ["PRP", "VBZ"]}, {}, 1),
        Sentence(["the", "deficit"], ["B-NP", "I-NP"], {"pos": ["DT", "NN"]}, {}, 4),
    ]


@pytest.mark.parametrize(
    ("row", "columns", "tags"),
    [
        ("w", {}, None),
        ("w T", {}, ["T"]),
        ("w p c T", {"pos": ["p"], "col2": ["c"]}, ["T"]),
        ("w p c d T", {"pos": ["p"], "col2": ["c"], "col3": ["d"]}, ["T"]),
    ],
)
def test_default_roles_by_column_count(tmp_path: Path, row: str, columns: dict, tags) -> None:
    (sent,) = read_conll(_write(tmp_path, "a.conll", row + "\n"))
    assert (sent.tokens, sent.columns, sent.tags) == (["w"], columns, tags)


def test_named_roles_and_skipped_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.conll", "Rockwell NNP B-NP B-ORG\nsaid VBD B-VP O\n")
    (sent,) = read_conll(path, "word,pos,chunk,tag")
    assert sent.tags == ["B-ORG", "O"] and sent.columns == {
        "pos": ["NNP", "VBD"],
        "chunk": ["B-NP", "B-VP"],
    }
    (sent,) = read_conll(path, ["word", "_", "tag", "_"])
    assert sent.tags == ["B-NP", "B-VP"] and sent.columns == {}
    (sent,) = read_conll(path, "tag,word,_,_")
    assert sent.tokens == ["NNP", "VBD"] and sent.tags == ["Rockwell", "said"]


def test_crlf_blank_runs_docstart_tabs_and_spaces(tmp_path: Path) -> None:
    data = (
        "-DOCSTART- -X- O\r\n\r\n\r\n"  # lines 1-3
        "Das\tART   O\r\n"  # line 4: tab and a run of spaces
        "  Haus NN\tO\r\n"  # line 5: leading spaces
        "-DOCSTART- -X- O\r\n"  # line 6: ends the sentence without a blank line
        "Ja ITJ O\r\n"  # line 7
        " \t \r\n\n"  # lines 8-9: blank (whitespace only)
        "Nein ITJ O"  # line 10, no final newline
    )
    sents = list(read_conll(_write(tmp_path, "a.conll", data)))
    assert [(s.tokens, s.line) for s in sents] == [
        (["Das", "Haus"], 4),
        (["Ja"], 7),
        (["Nein"], 10),
    ]
    assert sents[0].pos == ["ART", "NN"] and sents[0].tags == ["O", "O"]


def test_latin1_file_decodes(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.conll", "Málaga NP B-LOC\nniño NC O\n".encode("latin-1"))
    (sent,) = read_conll(path)
    assert sent.tokens == ["Málaga", "niño"]
    (sent,) = read_conll(path, encoding="latin-1")
    assert sent.tokens == ["Málaga", "niño"]


def test_conll_round_trip(tmp_path: Path) -> None:
    sents = [
        Sentence(["Zürich", "is"], ["B-LOC", "O"], {"pos": ["NE", "V"], "chunk": ["B-NP", "B-VP"]}),
        Sentence(["ok"], ["O"], {"pos": ["X"], "chunk": ["O"]}),
    ]
    path = tmp_path / "out.conll"
    assert write_conll(sents, path) == 2
    assert path.read_text(encoding="utf-8") == "Zürich NE B-NP B-LOC\nis V B-VP O\n\nok X O O\n\n"
    back = list(read_conll(path, "word,pos,chunk,tag"))
    assert [(s.tokens, s.tags, s.columns) for s in back] == [
        (s.tokens, s.tags, s.columns) for s in sents
    ]
    buf = io.StringIO()
    write_conll(sents, buf, columns="word,tag", sep="\t")
    assert buf.getvalue() == "Zürich\tB-LOC\nis\tO\n\nok\tO\n\n"


def test_conll_writer_refuses_what_cannot_be_read_back() -> None:
    for bad in (Sentence(["a b"], ["O"]), Sentence([""], ["O"]), Sentence(["-DOCSTART-"], ["O"])):
        with pytest.raises(ValueError, match="sentence 0"):
            write_conll([bad], io.StringIO())
    with pytest.raises(ValueError, match="no 'tag' column"):
        write_conll([Sentence(["a"])], io.StringIO(), columns="word,tag")
    with pytest.raises(ValueError, match="has 1 values for 2 tokens"):
        write_conll([Sentence(["a", "b"], ["O"])], io.StringIO())


def test_jsonl_columns_meta_and_round_trip(tmp_path: Path) -> None:
    data = (
        '{"tokens": ["New", "York"], "tags": ["B-LOC", "I-LOC"], "pos": ["NNP", "NNP"], '
        '"id": 7, "source": ["wsj"]}\n'
        "\n"
        '{"tokens": ["hi"], "tags": null, "note": {"by": "me"}}\n'
    )
    sents = list(read_jsonl(_write(tmp_path, "a.jsonl", data)))
    assert sents == [
        Sentence(
            ["New", "York"],
            ["B-LOC", "I-LOC"],
            {"pos": ["NNP", "NNP"]},
            {"id": 7, "source": ["wsj"]},
            1,
        ),
        Sentence(["hi"], None, {}, {"note": {"by": "me"}}, 3),
    ]
    out = tmp_path / "b.jsonl"
    assert write_jsonl(sents, out) == 2
    assert [(s.tokens, s.tags, s.columns, s.meta) for s in read_jsonl(out)] == [
        (s.tokens, s.tags, s.columns, s.meta) for s in sents
    ]
    with pytest.raises(ValueError, match="key 'pos' is used twice"):
        write_jsonl([Sentence(["a"], None, {"pos": ["X"]}, {"pos": 1})], io.StringIO())


def test_text_reader_and_writer(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.txt", "\ufeffHello  world .\n\n\t\nBye\tnow\n")
    sents = list(read_text(path))
    assert [(s.tokens, s.tags, s.line) for s in sents] == [
        (["Hello", "world", "."], None, 1),
        (["Bye", "now"], None, 4),
    ]
    buf = io.StringIO()
    write_text(sents, buf)
    assert buf.getvalue() == "Hello world .\nBye now\n"


@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        ('{"tokens": ["a"]}\n', "jsonl"),
        ("a DT B-NP\nb NN I-NP\n\nc VB O\n", "conll"),
        ("-DOCSTART-\nx y\n", "conll"),
        ("one\ntoken\nper\nline\n", "conll"),
        ("The cat sat .\nDogs bark .\n", "text"),
        ("Two words\nthree more words\n\nand so on\n", "text"),
        ("a DT B-NP\nb NN I-NP\n", "text"),  # columnar but no blank line: one sentence per line
        ("single line here\n", "text"),
    ],
)
def test_detect_format(tmp_path: Path, data: str, fmt: str) -> None:
    assert detect_format(_write(tmp_path, "x.txt", data)) == fmt


def test_read_corpus_dispatch(tmp_path: Path) -> None:
    conll = _write(tmp_path, "a.txt", CHUNKS)
    assert [s.tokens for s in read_corpus(conll)] == [["He", "reckons"], ["the", "deficit"]]
    assert len(list(read_corpus(conll, format="text"))) == 4
    iob = _write(tmp_path, "a.iob", "one line only\n")
    assert [s.tags for s in read_corpus(iob)] == [["only"]]  # extension wins: 3-column CoNLL
    jsonl = _write(tmp_path, "a.json", '{"tokens": ["x"], "tags": ["O"]}\n')
    assert [s.tags for s in read_corpus(jsonl)] == [["O"]]
    assert [
        s.tags for s in read_corpus(conll, columns="word,_,tag", tagset={"B-NP", "I-NP", "B-VP"})
    ][0] == [
        "B-NP",
        "B-VP",
    ]
    with pytest.raises(ValueError, match="unknown corpus format"):
        read_corpus(conll, format="xml")
    with pytest.raises(ValueError, match="applies to CoNLL"):
        read_corpus(jsonl, columns="word,tag")


def test_read_corpus_bytes_from_bytes_and_file_objects() -> None:
    data = CHUNKS.encode()
    by_bytes = list(read_corpus_bytes(data, "upload.conll"))
    stream = io.BytesIO(b"junk" + data)
    stream.seek(4)  # read from the current position, again on each pass
    by_stream = list(read_corpus_bytes(stream, "upload.txt"))
    assert by_bytes == by_stream and len(by_bytes) == 2
    text = list(read_corpus_bytes(b"a b c\nd e\n", "notes.txt"))
    assert [s.tokens for s in text] == [["a", "b", "c"], ["d", "e"]]
