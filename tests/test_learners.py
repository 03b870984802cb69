"""The learner contract, for every learner: online updates, prediction, averaging, seeding and
model files (never pickle)."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cwal.errors import ModelFileError
from cwal.io import Sentence
from cwal.learners import LEARNERS, _persist, load, make

NAMES = sorted(LEARNERS)
TAGS = ["B-NP", "I-NP", "O"]


def toy_corpus(n: int, seed: int) -> list[Sentence]:
    """Separable chunking toy: determiners and adjectives open or continue an NP that the next
    noun closes; verbs and 'and' are outside. The tag of a word follows from the word and the
    previous word, so a first-order model can label it perfectly."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        toks, tags, pos = [], [], []
        for _ in range(int(rng.integers(1, 4))):
            np_len = int(rng.integers(1, 4))
            words = ["the", "big", "red"][: np_len - 1] + [f"noun{rng.integers(5)}"]
            toks += words
            tags += ["B-NP"] + ["I-NP"] * (len(words) - 1)
            pos += ["DT", "JJ", "JJ"][: len(words) - 1] + ["NN"]
            verb = ["runs", "and", "sees"][int(rng.integers(3))]
            toks.append(verb)
            tags.append("O")
            pos.append("VB")
        out.append(Sentence(toks, tags, {"pos": pos}))
    return out


def token_accuracy(model, sentences) -> float:
    pred = model.predict(sentences)
    pairs = [
        (a, b) for s, p in zip(sentences, pred, strict=True) for a, b in zip(s.tags, p, strict=True)
    ]
    return sum(a == b for a, b in pairs) / len(pairs)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("encoding", ["raw", "bioes"])
def test_learns_a_separable_problem_and_predicts_shapes(name: str, encoding: str) -> None:
    train, test = toy_corpus(60, 0), toy_corpus(30, 1)
    model = make(name, encoding=encoding)
    assert model.fit(train, epochs=4, seed=0) is model
    pred = model.predict(test)
    assert [len(p) for p in pred] == [len(s) for s in test]
    assert token_accuracy(model, test) == 1.0
    s = test[0]
    assert model.predict_one(s.tokens, pos=s.pos) == s.tags
    assert set(model.labels_) == (
        set(TAGS) if encoding == "raw" else {"B-NP", "I-NP", "E-NP", "S-NP", "O"}
    )
    F, L = model.n_features_, len(model.labels_)
    W, A = model.averaged()
    assert W.shape == (F, L) and A.shape == (L + 2, L)


@pytest.mark.parametrize("name", NAMES)
def test_learn_one_returns_none_and_grows_labels_and_features(name: str) -> None:
    model = make(name, template="ner")
    assert model.predict([Sentence(["x"])]) == [[]] and model.predict_one(["x"]) == []
    assert model.learn_one(["Anna", "sings"], ["B-PER", "O"]) is None
    f1, L1 = model.n_features_, len(model.labels_)
    assert L1 == 2 and f1 > 0
    for _ in range(5):
        assert model.learn_one(["Anna", "visits", "Paris"], ["B-PER", "O", "B-LOC"]) is None
    assert len(model.labels_) == 3 and model.n_features_ > f1
    W, A = model.averaged()
    assert W.shape == (model.n_features_, 3) and A.shape == (5, 3)
    assert model.predict_one(["Anna", "visits", "Paris"]) == ["B-PER", "O", "B-LOC"]
    assert model.n_updates_ == 6


@pytest.mark.parametrize("name", NAMES)
def test_empty_and_unlabeled_sentences(name: str) -> None:
    model = make(name)
    assert model.learn_one([], []) is None
    model.fit([Sentence([], []), Sentence(["a", "b"]), *toy_corpus(5, 2)], epochs=1)
    assert model.predict([Sentence([]), Sentence(["the", "noun1"])])[0] == []
    assert model.predict_one([]) == []
    with pytest.raises(ValueError, match="tokens but"):
        model.learn_one(["a"], ["O", "O"])


@pytest.mark.usefixtures("float64_state")
@pytest.mark.parametrize("name", NAMES)
def test_lazy_average_equals_explicit_average_after_every_example(name: str) -> None:
    model = make(name, labels=TAGS)  # a fixed label set; the features grow
    snapshots: list[tuple[np.ndarray, np.ndarray]] = []
    for s in toy_corpus(25, 3):
        model.learn_one(s.tokens, s.tags, pos=s.pos)
        snapshots.append((model.W_[: model.n_features_].copy(), model.A_.copy()))
        F = model.n_features_
        W_mean = np.mean([np.pad(w, ((0, F - len(w)), (0, 0))) for w, _ in snapshots], axis=0)
        A_mean = np.mean([a for _, a in snapshots], axis=0)
        W, A = model.averaged()
        np.testing.assert_allclose(W, W_mean, atol=1e-12)
        np.testing.assert_allclose(A, A_mean, atol=1e-12)
    assert not np.allclose(W, model.W_[:F])  # the average is not just the last vector


@pytest.mark.parametrize("name", NAMES)
def test_fit_is_reproducible_by_seed(name: str) -> None:
    data = toy_corpus(40, 4)
    a, b, c = (make(name).fit(data, epochs=2, seed=s) for s in (7, 7, 8))
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.averaged()[1], b.averaged()[1])
    assert not np.array_equal(a.W_, c.W_)  # another seed, another order, other weights


def test_fit_reports_progress_with_dev_f1() -> None:
    seen = []
    make("arow").fit(
        toy_corpus(30, 5), epochs=3, dev=toy_corpus(10, 6), progress=lambda *a: seen.append(a)
    )
    assert [(e, n) for e, n, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert seen[-1][2]["dev_f1"] == 1.0 and seen[0][2]["mistakes"] > 0


def test_min_count_prunes_rare_features_and_freezes() -> None:
    data = toy_corpus(40, 7)
    full, pruned = make("arow"), make("arow", min_count=3)
    full.fit(data, epochs=1)
    pruned.fit(data, epochs=1)
    assert 0 < pruned.n_features_ < full.n_features_ and pruned.features_.frozen
    pruned.learn_one(["zzz", "qqq"], ["O", "O"], pos=["XX", "YY"])
    assert pruned.n_features_ == len(pruned.features_.strings)
    assert "w0=zzz" not in pruned.features_.strings


@pytest.mark.parametrize("name", NAMES)
def test_save_load_and_bytes_round_trip_then_continue_identically(
    name: str, tmp_path: Path
) -> None:
    train, more = toy_corpus(30, 8), toy_corpus(10, 9)
    model = make(name, c=0.5, encoding="bioes").fit(train, epochs=2)
    path = tmp_path / "m.npz"
    model.save(path)
    copies = [load(path), type(model).from_bytes(model.to_bytes())]
    for copy in copies:
        assert type(copy) is type(model) and copy.params == model.params
        assert copy.predict(more) == model.predict(more)
    for s in more:
        for m in (model, *copies):
            m.learn_one(s.tokens, s.tags, pos=s.pos)
    for copy in copies:
        for key in ("W_", "A_", "SW_", "SA_"):
            F = model.n_features_ if key in ("W_", "SW_") else None
            np.testing.assert_array_equal(getattr(copy, key)[:F], getattr(model, key)[:F])
        np.testing.assert_array_equal(copy.averaged()[0], model.averaged()[0])
        assert copy.features_.strings == model.features_.strings


class _Tripwire:
    """Unpickling this object would create a file: the test fails if that ever happens."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_corrupted_or_foreign_files_raise_model_file_error_and_never_unpickle(tmp_path) -> None:
    good = make("arow").fit(toy_corpus(5, 0), epochs=1).to_bytes()
    trip = tmp_path / "unpickled"
    evil = np.empty(1, dtype=object)
    evil[0] = _Tripwire(str(trip))
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        parts = {n[:-4]: np.load(io.BytesIO(z.read(n))) for n in z.namelist()}
    bad_meta = dict(parts, meta=np.frombuffer(b'{"format": "cwal-model", "version": 99}', np.uint8))
    bad_shape = dict(parts, W=np.zeros((1, 1)))
    cases = {
        "random bytes": b"not a model at all",
        "truncated": good[: len(good) // 2],
        "pickle": pickle.dumps(_Tripwire(str(trip))),
        "object array": _npz(**dict(parts, meta=evil)),
        "missing arrays": _npz(meta=parts["meta"]),
        "bare npy": (lambda b: (np.save(b, np.zeros(3)), b.getvalue())[1])(io.BytesIO()),
        "future version": _npz(**bad_meta),
        "wrong shape": _npz(**bad_shape),
    }
    for what, data in cases.items():
        with pytest.raises(ModelFileError):
            make("arow").from_bytes(data, what)
        path = tmp_path / f"{what}.npz"
        path.write_bytes(data)
        with pytest.raises(ModelFileError, match=str(path.name)):
            load(path)
    assert not trip.exists()
    with pytest.raises(ModelFileError, match="cannot read"):
        load(tmp_path / "absent.npz")


def test_make_rejects_unknown_names_and_bad_parameters() -> None:
    with pytest.raises(ValueError, match="unknown learner"):
        make("svm")
    for bad in (
        {"k": 0},
        {"eta": 0.3},
        {"c": 0},
        {"projection": "l1"},
        {"form": "x"},
        {"encoding": "iob"},
    ):
        with pytest.raises(ValueError):
            make("cw", **bad)
    assert make("kbest-pa").params["k"] == 5 and make("kbest-pa", k=2).params["k"] == 2
    assert make("perceptron", k=4).params["k"] == 1


def test_bioes_codec_equals_the_whole_sentence_scheme_functions() -> None:
    """The codec works token by token over windows; the reference is ``schemes.repair`` and
    ``schemes.is_valid`` on whole sentences, over random tags of every prefix and scheme."""
    from cwal.io import schemes
    from cwal.learners._tags import PREFERENCE, TagCodec

    rng = np.random.default_rng(5)
    alphabet = ["O"] + [f"{p}-{t}" for p in "BIESLU" for t in ("NP", "VP")]
    for trial in range(60):
        codec, seen = TagCodec("bioes"), []
        for _ in range(int(rng.integers(1, 6))):
            if trial % 3 == 0:  # valid IOB2 / BIOES sentences keep candidates alive longer
                spans = [("NP", 0, 2), ("NP", 2, 3), ("VP", 4, 6)]
                tags = schemes.from_spans(spans, 7, PREFERENCE[int(rng.integers(6))])
            else:
                tags = [alphabet[i] for i in rng.integers(0, len(alphabet), rng.integers(1, 9))]
            seen.append(tags)
            assert codec.encode(tags) == schemes.repair(tags, "BIOES"), tags
            want = [s for s in PREFERENCE if all(schemes.is_valid(t, s) for t in seen)]
            assert codec.candidates == want, seen


def test_model_files_store_touched_entries_and_version_2_files_still_load(tmp_path) -> None:
    """Format 3 keeps only the entries that left their fill (0, or the initial variance); a
    dense version-2 file of the same model loads to the same arrays and predictions."""
    import json

    model = make("arow", init_variance=0.5).fit(toy_corpus(30, 1), epochs=2)
    data = model.to_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        parts = {n[:-4]: np.load(io.BytesIO(z.read(n))) for n in z.namelist()}
    F, L = model.n_features_, len(model.labels_)
    W, SW, UW = model.W_[:F], model.SW_[:F], model.UW_[:F]
    want = np.flatnonzero((W != 0) | (SW != 0.5) | (UW != 0))
    assert 0 < len(want) < F * L and parts["touched"].tolist() == want.tolist()
    assert parts["W"].tolist() == W.reshape(-1)[want].tolist()
    meta = json.loads(bytes(parts["meta"]))
    meta["version"] = 2
    dense = {**parts, "meta": np.frombuffer(json.dumps(meta).encode(), np.uint8), "W": W,
             "SW": SW, "UW": UW}  # fmt: skip
    del dense["touched"]
    for copy in (make("arow").from_bytes(data), make("arow").from_bytes(_npz(**dense))):
        for key in ("W_", "SW_", "UW_", "A_", "SA_", "UA_"):
            np.testing.assert_array_equal(
                getattr(copy, key), getattr(model, key)[: len(getattr(copy, key))]
            )
        assert copy.predict(toy_corpus(5, 9)) == model.predict(toy_corpus(5, 9))
    bad = {**parts, "touched": np.array([F * L + 3] * len(want))}
    with pytest.raises(ModelFileError, match="out of range"):
        make("arow").from_bytes(_npz(**bad))


def test_version_6_files_store_the_working_types_and_version_5_files_still_load() -> None:
    """Format 6 stores each array in the learner's type (the mean and the covariance of the
    features in float32); a version-5 file (every array float64, as that writer stored them)
    loads into those types, rounded, and predicts the same."""
    import json

    from cwal.learners.base import SequenceLearner

    types = SequenceLearner.DTYPES
    assert types["W"] == types["SW"] == types["SA"] == np.float32
    model = make("arow", init_variance=0.1).fit(toy_corpus(30, 2), epochs=2)
    for key in _persist.ARRAYS:
        assert getattr(model, key + "_").dtype == types[key], key
    with zipfile.ZipFile(io.BytesIO(model.to_bytes())) as z:
        parts = {n[:-4]: np.load(io.BytesIO(z.read(n))) for n in z.namelist()}
    meta = json.loads(bytes(parts["meta"]))
    assert meta["version"] == 7
    assert {k: parts[k].dtype for k in _persist.ARRAYS} == types
    F, L = model.n_features_, len(model.labels_)
    untouched = np.ones(F * L, bool)
    untouched[parts["touched"]] = False
    assert untouched.any() and (model.SW_[:F].reshape(-1)[untouched] == np.float32(0.1)).all()
    meta["version"] = 5
    old = {k: v.astype(np.float64) if k in _persist.ARRAYS else v for k, v in parts.items()}
    old["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    for key in ("W", "SW", "UW"):  # float64 detail that float32 cannot hold
        old[key] = old[key] * (1 + 1e-9)
    copy = make("arow").from_bytes(_npz(**old))
    for key in ("W_", "SW_", "UW_", "A_", "SA_", "UA_"):
        got, want = getattr(copy, key), getattr(model, key)[: len(getattr(copy, key))]
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert copy.predict(toy_corpus(5, 9)) == model.predict(toy_corpus(5, 9))


@pytest.mark.parametrize("name", ["arow", "cw", "c-spv"])
def test_float32_mean_and_covariance_follow_the_float64_learner(name: str, monkeypatch) -> None:
    """The default types (the features' mean, covariance and lazy-average sums in float32) give
    the float64 learner's state to float32 precision and its predictions, over several epochs of
    updates; the averaged weights (float64 from float32 sums) too."""
    from cwal.learners.base import SequenceLearner

    data, test = toy_corpus(60, 3), toy_corpus(30, 4)
    narrow = make(name).fit(data, epochs=3, seed=1)
    monkeypatch.setattr(
        SequenceLearner, "DTYPES", dict.fromkeys(SequenceLearner.DTYPES, np.float64)
    )
    wide = make(name).fit(data, epochs=3, seed=1)
    assert narrow.SW_.dtype == narrow.UW_.dtype == np.float32 and wide.UW_.dtype == np.float64
    F = wide.n_features_
    np.testing.assert_allclose(narrow.SW_[:F], wide.SW_[:F], rtol=1e-5)
    np.testing.assert_allclose(narrow.W_[:F], wide.W_[:F], rtol=1e-4, atol=1e-6)
    avg = narrow.averaged()[0]
    assert avg.dtype == np.float64
    np.testing.assert_allclose(avg, wide.averaged()[0], rtol=1e-4, atol=1e-6)
    assert narrow.predict(test) == wide.predict(test)


def test_save_writes_the_bytes_of_to_bytes_and_leaves_no_partial_file(tmp_path) -> None:
    """``save`` streams the archive to the file (through a temporary name): the same bytes as
    ``to_bytes``; a save that fails leaves neither the target nor the temporary file."""
    model = make("arow").fit(toy_corpus(10, 5), epochs=1)
    path = tmp_path / "m.npz"
    model.save(path)
    assert path.read_bytes() == model.to_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    with pytest.raises(OSError):
        model.save(tmp_path / "absent" / "m.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
