"""``python -m cwal import / export / predict`` end to end against a fresh SQLite store."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from shared_data import corpus_path

from cwal.cli import main
from cwal.io import read_corpus, write_conll
from cwal.io.spans import layout
from cwal.measures import chunk_f1
from db.engine import open_database
from db.exports import iter_export
from db.repository import count_sentences, find_project, list_sentences

DOCS = {
    "a.txt": "Angela Merkel visited Paris on Monday. She met Emmanuel Macron at the Élysée.\n\n"
    "The talks, officials said, were productive.\n",
    "b.txt": "Google opened an office in Zürich. Sundar Pichai spoke there 😀.\r\n",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("CWAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CWAL_DATABASE_URL", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_bytes(text.encode())
    return tmp_path


def test_raw_folder_import_keeps_offsets_and_exports_spans(home: Path, capsys) -> None:
    argv = ["import", "--project", "news", "--input", str(home / "docs"), "--create"]
    assert main([*argv, "--types", "PER,LOC,ORG", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "a.txt: 3 sentences" in out and "b.txt: 2 sentences" in out
    labeled = home / "labeled.jsonl"
    # label the first sentence the way an annotator would, through a file of labels
    first = next(read_corpus(home / "docs" / "a.txt", format="raw"))
    tags = ["B-PER", "I-PER", "O", "B-LOC", "O", "O", "O"]
    assert first.tokens == ["Angela", "Merkel", "visited", "Paris", "on", "Monday", "."]
    labeled.write_text(json.dumps({"tokens": first.tokens, "tags": tags}) + "\n")
    assert main(["import", "--project", "news", "--input", str(labeled), "--quiet"]) == 0
    out_path = home / "gold.jsonl"
    assert main(["export", "--project", "news", "--what", "gold", "--format", "doccano",
                 "--output", str(out_path)]) == 0  # fmt: skip
    (record,) = [json.loads(x) for x in out_path.read_text().splitlines()]
    assert record["label"] == [[0, 13, "PER"], [22, 27, "LOC"]]
    engine = open_database()
    project = find_project(engine, "news")
    assert len(list(iter_export(engine, project.id, what="gold"))) == 1
    stored = list_sentences(engine, project.id)
    engine.dispose()
    text_b = DOCS["b.txt"].replace("\r\n", "\n")
    for s in stored:
        if s.document == "b.txt":
            start = s.meta["start"]
            text, offsets = layout(s.to_sentence())
            assert text_b[start : start + len(text)] == text
            assert [text[a:b] for a, b in offsets] == s.tokens


def test_refused_file_exits_1_and_imports_nothing(home: Path, capsys) -> None:
    good = home / "good.conll"
    good.write_text("Anna B-PER\nwent O\n\n")
    assert main(["import", "--project", "p", "--input", str(good), "--create", "--quiet"]) == 0
    bad = home / "bad"
    bad.mkdir()
    (bad / "1.conll").write_text("Bert B-PER\nran O\n\n")
    (bad / "2.conll").write_text("Carla B-PER\nsat\tO\tX\n\n")
    capsys.readouterr()
    assert main(["import", "--project", "p", "--input", str(bad), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "2.conll:2:" in err and "nothing was imported" in err
    engine = open_database()
    assert count_sentences(engine, find_project(engine, "p").id) == 1
    engine.dispose()


@pytest.mark.parametrize(
    "argv",
    [
        ["import", "--project", "missing", "--input", "{docs}"],
        ["export", "--project", "missing", "--output", "{home}/x.conll"],
        ["predict", "--model", "{home}/none.npz", "--input", "{docs}", "--output", "{home}/o"],
    ],
)
def test_usage_errors_exit_2(home: Path, argv: list[str], capsys) -> None:
    argv = [a.format(home=home, docs=home / "docs") for a in argv]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("error:")


def test_predict_gives_the_f1_that_evaluate_prints(tmp_path: Path, capsys) -> None:
    train = list(itertools.islice(read_corpus(corpus_path("conll2000/train.txt")), 800))
    test = list(itertools.islice(read_corpus(corpus_path("conll2000/test.txt")), 300))
    train_path, test_path = tmp_path / "train.conll", tmp_path / "test.conll"
    write_conll(train, train_path)
    write_conll(test, test_path)
    model = tmp_path / "m.npz"
    assert main(["train", "--train", str(train_path), "--model", str(model), "--epochs", "2",
                 "--quiet"]) == 0  # fmt: skip
    scores = tmp_path / "scores.json"
    assert main(["evaluate", "--model", str(model), "--test", str(test_path), "--json",
                 str(scores)]) == 0  # fmt: skip
    out = tmp_path / "pred.conll"
    argv = ["predict", "--model", str(model), "--input", str(test_path), "--output", str(out)]
    assert main([*argv, "--quiet"]) == 0
    predicted = list(read_corpus(out, columns="word,pos,confidence,tag"))
    assert [p.tokens for p in predicted] == [s.tokens for s in test]
    f1 = chunk_f1([s.tags for s in test], [p.tags for p in predicted]).f1
    assert f1 == json.loads(scores.read_text())["f1"] and f1 > 0.8
    conf = [float(c) for p in predicted for c in p.columns["confidence"]]
    assert all(0.0 <= c <= 1.0 for c in conf) and min(conf) < 1.0


def test_export_history_and_predictions(home: Path, capsys) -> None:
    """Every submitted version (a corrected label too) and the live model's predictions."""
    from db.repository import add_user, submit_annotation

    argv = ["import", "--project", "news", "--input", str(home / "docs"), "--create"]
    assert main([*argv, "--types", "PER,LOC,ORG", "--quiet"]) == 0
    engine = open_database()
    project = find_project(engine, "news")
    stored = list_sentences(engine, project.id)
    ann = add_user(engine, "ann", "a password")
    first = stored[0]
    wrong = ["B-LOC", "I-LOC"] + ["O"] * (len(first.tokens) - 2)
    right = ["B-PER", "I-PER", "O", "B-LOC"] + ["O"] * (len(first.tokens) - 4)
    submit_annotation(engine, first.id, ann, wrong)
    submit_annotation(engine, first.id, ann, right)
    for s in stored[1:3]:
        submit_annotation(engine, s.id, ann, ["O"] * len(s.tokens))
    engine.dispose()
    history = home / "history.jsonl"
    assert main(["export", "--project", "news", "--what", "history", "--format", "jsonl",
                 "--output", str(history), "--quiet"]) == 0  # fmt: skip
    rows = [json.loads(x) for x in history.read_text().splitlines()]
    assert [r["tags"] for r in rows[:2]] == [wrong, right] and len(rows) == 4
    assert rows[1]["supersedes_id"] is None or rows[1]["supersedes_id"] == rows[0]["annotation_id"]
    labels = home / "labels.conll"
    assert main(["export", "--project", "news", "--output", str(labels), "--quiet"]) == 0
    assert [s.tags for s in read_corpus(labels)][0] == right
    predictions = home / "pred.conllu"
    assert main(["export", "--project", "news", "--what", "predictions", "--format", "conllu",
                 "--output", str(predictions), "--quiet"]) == 0  # fmt: skip
    sents = list(read_corpus(predictions))
    assert len(sents) == len(stored) and all(s.tags for s in sents)
    assert "Confidence=" in predictions.read_text()
