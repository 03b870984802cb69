"""``python -m cwal train`` / ``evaluate`` end to end on small corpora written by the tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cwal.cli import compacted, guess_template, main
from cwal.io import Sentence

REPO = Path(__file__).resolve().parent.parent


def write_chunk_corpus(path: Path, n: int, seed: int) -> None:
    """A CoNLL 'word pos tag' file of separable NP/VP/PP chunks."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        for _ in range(int(rng.integers(1, 4))):
            noun = f"noun{rng.integers(6)}"
            lines += ["the DT B-NP", f"{noun} NN I-NP", "sees VBZ B-VP", "in IN B-PP"]
            lines += [f"{noun} NN B-NP"]
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_ner_corpus(path: Path, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    people, places = ["Anna", "Bert", "Carla"], ["Paris", "Rome", "Oslo"]
    lines = []
    for _ in range(n):
        lines += [f"{people[rng.integers(3)]} B-PER", "went O", "to O"]
        lines += [f"{places[rng.integers(3)]} B-LOC", ". O", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_train_then_evaluate_in_process(tmp_path: Path, capsys) -> None:
    train, dev, model = tmp_path / "train.txt", tmp_path / "dev.txt", tmp_path / "m.npz"
    write_chunk_corpus(train, 40, 0)
    write_chunk_corpus(dev, 10, 1)
    argv = ["train", "--train", str(train), "--model", str(model), "--dev", str(dev)]
    assert main([*argv, "--epochs", "3", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "features: chunk" in err and "learner: arow" in err
    assert [line.split()[1] for line in out.splitlines() if line.startswith("epoch")] == [
        "1/3", "2/3", "3/3",
    ]  # fmt: skip
    assert out.splitlines()[2].endswith("dev F1 1.0000") and model.exists()
    scores = tmp_path / "scores.json"
    assert main(["evaluate", "--model", str(model), "--test", str(dev), "--json", str(scores)]) == 0
    out, _ = capsys.readouterr()
    assert "F1 1.0000" in out and "NP" in out and "PP" in out
    data = json.loads(scores.read_text())
    assert set(data) == {"precision", "recall", "f1", "token_accuracy", "per_type"}
    assert data["f1"] == 1.0 and set(data["per_type"]) == {"NP", "VP", "PP"}
    assert data["per_type"]["NP"]["support"] == 2 * data["per_type"]["VP"]["support"]


def test_dev_keeps_the_best_epoch_and_stops_after_the_patience(tmp_path: Path, capsys) -> None:
    """Noisy training tags make dev F1 move; the kept model scores the best F1 printed."""
    train, dev, model = tmp_path / "train.txt", tmp_path / "dev.txt", tmp_path / "m.npz"
    write_chunk_corpus(train, 60, 3)
    rng = np.random.default_rng(0)
    lines = train.read_text(encoding="utf-8").splitlines()
    flip = {"B-NP": "B-VP", "B-VP": "B-PP", "B-PP": "I-NP", "I-NP": "B-NP"}
    noisy = [" ".join([*ln.split()[:2], flip[ln.split()[2]]]) if ln and rng.random() < 0.3
             else ln for ln in lines]  # fmt: skip
    train.write_text("\n".join(noisy) + "\n", encoding="utf-8")
    write_chunk_corpus(dev, 30, 4)
    argv = ["train", "--train", str(train), "--model", str(model), "--dev", str(dev), "--quiet"]
    assert main([*argv, "--epochs", "20", "--patience", "2"]) == 0
    out, _ = capsys.readouterr()
    f1 = [float(ln.split()[-1]) for ln in out.splitlines() if ln.startswith("epoch")]
    best = f1.index(max(f1)) + 1
    assert f"kept epoch {best} (best dev F1; stopped after epoch {len(f1)})" in out
    assert len(f1) == min(20, best + 2) and f"{best} epochs" in out
    assert main(["evaluate", "--model", str(model), "--test", str(dev)]) == 0
    assert f"F1 {max(f1):.4f}" in capsys.readouterr()[0]
    assert main([*argv, "--patience", "0"]) == 2


def test_learner_columns_and_ner_guess(tmp_path: Path, capsys) -> None:
    train, model = tmp_path / "ner.conll", tmp_path / "ner.npz"
    write_ner_corpus(train, 30, 2)
    argv = ["train", "--train", str(train), "--model", str(model), "--learner", "cw"]
    assert main([*argv, "--columns", "word,tag", "--epochs", "2"]) == 0
    out, err = capsys.readouterr()
    assert "features: ner" in err and "epoch 2/2" in err and "saved" in out
    assert main(["evaluate", "--model", str(model), "--test", str(train)]) == 0
    assert "F1 1.0000" in capsys.readouterr().out


def test_compacted_sentences_are_equal_fresh_copies_with_each_string_once() -> None:
    text = "".join(["Ab", "c"])  # built at run time: not a shared constant
    sents = [
        Sentence([text, "x", text], ["B-NP", "I-NP", "O"], {"pos": ["NN", "NN", "DT"]},
                 {"document": 2}, 7),
        Sentence(["y", text], None, {"pos": None}),
    ]  # fmt: skip
    out = compacted(sents)
    assert out == sents
    a, b = out
    assert a.tokens[0] is not text and a.tokens[0] is a.tokens[2] is b.tokens[1]
    assert a.meta is not sents[0].meta and a.tags is not sents[0].tags
    assert b.tags is None and b.columns == {"pos": None}


def test_guess_template() -> None:
    chunky = [Sentence(["a", "b"], ["B-NP", "B-VP"])]
    assert guess_template(chunky)[0] == "chunk"
    assert guess_template([Sentence(["a"], ["B-PER"]), *chunky])[0] == "ner"
    assert guess_template([Sentence(["a"], ["NN"])])[0] == "ner"


def test_user_errors_print_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    bad_model = tmp_path / "bad.npz"
    bad_model.write_bytes(b"PK\x03\x04 definitely not a zip")
    corpus = tmp_path / "c.txt"
    write_ner_corpus(corpus, 3, 0)
    ragged = tmp_path / "ragged.conll"
    ragged.write_text("a DT B-NP\nb NN\n", encoding="utf-8")
    untagged = tmp_path / "words.txt"
    untagged.write_text("a\nb\n\nc\n", encoding="utf-8")
    cases = [
        (["evaluate", "--model", str(bad_model), "--test", str(corpus)], "not a cwal model"),
        (["evaluate", "--model", str(tmp_path / "none.npz"), "--test", str(corpus)], "none.npz"),
        (["train", "--train", str(ragged), "--model", str(tmp_path / "x")], "ragged.conll:2"),
        (["train", "--train", str(untagged), "--model", str(tmp_path / "x")], "no tagged"),
        (["train", "--train", str(tmp_path / "nope.txt"), "--model", "x"], "nope.txt"),
    ]
    for argv, needle in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and needle in err and err.count("\n") == 1
        assert "Traceback" not in err


def test_python_dash_m_cwal_runs_as_a_program(tmp_path: Path) -> None:
    train, model = tmp_path / "t.txt", tmp_path / "m.npz"
    write_chunk_corpus(train, 15, 3)
    run = [sys.executable, "-m", "cwal", "train", "--train", str(train), "--model", str(model)]
    done = subprocess.run([*run, "--epochs", "2"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "[" in done.stderr and "epoch 2/2" in done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "cwal", "evaluate", "--model", str(train), "--test", str(train)],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "Traceback" not in bad.stderr


@pytest.mark.parametrize("argv", [["train", "--train", "x", "--model", "y", "--learner", "svm"]])
def test_argparse_rejects_bad_choices(argv, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


def test_cli_knows_every_learner() -> None:
    from cwal.cli import LEARNER_NAMES
    from cwal.learners import LEARNERS

    assert sorted(LEARNER_NAMES) == sorted(LEARNERS)


def test_train_on_two_shards(tmp_path: Path, capsys) -> None:
    train, model = tmp_path / "train.txt", tmp_path / "m.npz"
    write_chunk_corpus(train, 60, 3)
    argv = ["train", "--train", str(train), "--model", str(model), "--learner", "cw"]
    assert main([*argv, "--shards", "2", "--combine", "kl", "--epochs", "3", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(train)]) == 0
    assert "F1 1.0000" in capsys.readouterr().out


def test_word_clusters_from_the_training_text_and_unlabeled_files(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """By default a chunk model learns word clusters from its text plus ``--unlabeled`` files
    and stores them; ``--no-clusters`` leaves them out."""
    from cwal.features import clusters
    from cwal.learners import load

    monkeypatch.setenv("CWAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(clusters, "MIN_TOKENS", 500)
    monkeypatch.setattr(clusters, "SIZES", (2, 4))
    train, more, model = tmp_path / "train.txt", tmp_path / "more.txt", tmp_path / "m.npz"
    write_chunk_corpus(train, 30, 0)  # about 300 tokens: too few alone
    more.write_text("Dora went to Lima .\n" * 100 + "Emil went to Kiev .\n" * 100, "utf-8")
    argv = ["train", "--train", str(train), "--model", str(model), "--epochs", "2", "--quiet"]
    assert main(argv) == 0
    assert load(model).features_.clusters is None
    assert main([*argv, "--unlabeled", str(more)]) == 0
    found = load(model).features_.clusters
    assert found is not None and found.of("dora") == found.of("emil") != ("?", "?")
    assert found.of("lima") == found.of("kiev") and found.of("noun1") != ("?", "?")
    assert main([*argv, "--unlabeled", str(more), "--no-clusters"]) == 0
    assert load(model).features_.clusters is None
    capsys.readouterr()


def test_choose_epochs_picks_the_count_on_a_carved_split_then_retrains_on_all(
    tmp_path: Path, capsys
) -> None:
    from cwal.corpora import carve_dev
    from cwal.io import read_corpus
    from cwal.learners import load, make, recommended

    train, model = tmp_path / "train.txt", tmp_path / "m.npz"
    write_chunk_corpus(train, 60, 3)
    argv = ["train", "--train", str(train), "--model", str(model), "--epochs", "6", "--quiet"]
    assert main([*argv, "--choose-epochs", "--patience", "2", "--no-clusters"]) == 0
    out, err = capsys.readouterr()
    sents = list(read_corpus(str(train)))
    params = {k: v for k, v in recommended("chunk").items() if k != "clusters"}
    part, held = carve_dev(sents, 0.1)
    probe = make("arow", template="chunk", **params)
    best = probe.fit(part, epochs=6, dev=held, patience=2).best_epoch_
    assert f"epochs: {best} (best F1" in err and f"{best} epochs" in out
    again = make("arow", template="chunk", **params).fit(sents, epochs=best)
    saved = load(model)
    np.testing.assert_allclose(saved.averaged()[0], again.averaged()[0])


def test_ner_models_use_document_features_unless_told_not_to(tmp_path: Path, capsys) -> None:
    """The ner defaults add the document features (how each word is written elsewhere in its
    -DOCSTART- document); ``--no-documents`` leaves them out."""
    from cwal.learners import load

    train, model = tmp_path / "train.txt", tmp_path / "m.npz"
    write_ner_corpus(train, 40, 1)
    train.write_text("-DOCSTART- O\n\n" + train.read_text("utf-8"), "utf-8")
    argv = ["train", "--train", str(train), "--model", str(model), "--features", "ner",
            "--epochs", "2", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    got = load(model)
    assert got.params["documents"] and any(s.startswith("dcase=") for s in got.features_.strings)
    assert main([*argv, "--no-documents"]) == 0
    got = load(model)
    assert not got.params["documents"]
    assert not any(s.startswith("dcase") for s in got.features_.strings)
    capsys.readouterr()


def test_train_and_its_imports_leave_pandas_out(tmp_path: Path) -> None:
    """``cwal train`` (chunk and ner defaults) never imports pandas (~75 MB of peak memory),
    scikit-learn, scipy.linalg (numba's context loads without it) or loky; scipy.linalg and a
    kernel using BLAS still work afterwards in the same process."""
    chunk, ner = tmp_path / "chunk.txt", tmp_path / "ner.conll"
    write_chunk_corpus(chunk, 20, 1)
    write_ner_corpus(ner, 20, 1)
    code = (
        "import sys\nfrom cwal.cli import main\n"
        f"for path in ({str(chunk)!r}, {str(ner)!r}):\n"
        "    assert main(['train', '--train', path, '--model', path + '.npz', '--epochs', '2',"
        " '--quiet']) == 0\n"
        "print(sorted(m for m in ('pandas', 'sklearn', 'scipy.linalg', 'loky') if m in"
        " sys.modules))\n"
        "import numba, numpy as np, scipy.linalg\n"
        "print(numba.njit(lambda a: np.dot(a, a))(np.arange(3.0)), scipy.linalg.norm([3, 4]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-2:] == ["[]", "5.0 5.0"]
    assert (tmp_path / "ner.conll.npz").stat().st_size > 0
