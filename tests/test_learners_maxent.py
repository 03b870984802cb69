"""The L1 maxent token classifier (``maxent-l1``): scikit-learn fitted directly on the same
matrix is the truth, C comes from the fit data's own dev split, L1 sparsifies, model files carry
no pickle, and its probabilities are a confidence peer (``estimate(..., "maxent")``)."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from test_learners import toy_corpus

from cwal.confidence import METHODS, estimate
from cwal.decode import emissions
from cwal.io import Sentence
from cwal.learners import load, make
from cwal.measures import chunk_f1

FORMS = ("exclusive", "independent")
# scikit-learn fitted directly (the truth) may stop at max_iter on these tiny problems, as the
# learner may (it records that in ``converged_``): the comparison is at the same settings.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def noisy_corpus(n: int, seed: int) -> list[Sentence]:
    """The toy chunking corpus with 15% of the tags replaced at random: not separable, so the
    L1 strength matters."""
    rng = np.random.default_rng(seed + 100)
    out = []
    for s in toy_corpus(n, seed):
        tags = [
            t if rng.random() > 0.15 else ["B-NP", "I-NP", "O"][rng.integers(3)] for t in s.tags
        ]
        out.append(Sentence(s.tokens, tags, s.columns))
    return out


def matrix_and_labels(model, sentences) -> tuple[sp.csr_matrix, np.ndarray]:
    """The binary token x feature matrix built here with scipy (COO), and gold label ids."""
    enc = model.encode(sentences)
    rows = np.repeat(np.arange(enc.n_tokens), np.diff(enc.tok_offsets))
    X = sp.coo_matrix(
        (np.ones(len(rows)), (rows, enc.feat_ids)), shape=(enc.n_tokens, model.n_features_)
    ).tocsr()
    index = {t: i for i, t in enumerate(model.labels_)}
    return X, np.array([index[t] for s in sentences for t in s.tags])


def sklearn_truth(model, X, y, c: float):
    """The same problem given to scikit-learn directly: multinomial or one-vs-rest."""
    p = model.params
    lr = LogisticRegression(C=c, l1_ratio=1.0, solver=p["solver"], fit_intercept=False,
                            tol=p["tol"], max_iter=p["max_iter"], random_state=model.seed_)  # fmt: skip
    return (lr if p["form"] == "exclusive" else OneVsRestClassifier(lr)).fit(X, y)


@pytest.mark.parametrize("form", FORMS)
def test_forms_agree_with_sklearn_fitted_on_the_same_matrix(form: str) -> None:
    train, test = noisy_corpus(80, 0), toy_corpus(30, 1)
    model = make("maxent-l1", form=form, c=1.0).fit(train, seed=3)
    assert model.c_ == 1.0 and model.seed_ == 3 and len(model.labels_) == 3
    X, y = matrix_and_labels(model, train)
    truth = sklearn_truth(model, X, y, 1.0)
    coef = truth.coef_ if form == "exclusive" else np.vstack([e.coef_ for e in truth.estimators_])
    np.testing.assert_allclose(model.W_, coef.T, atol=1e-6)
    X_test, _ = matrix_and_labels(model, test)
    enc = model.encode(test)
    np.testing.assert_allclose(model.predict_proba(enc), truth.predict_proba(X_test), atol=1e-6)
    pred = [model.labels_[i] for i in truth.predict(X_test)]
    assert [t for p in model.predict(test) for t in p] == pred
    W, A = model.averaged()
    assert not A.any() and np.array_equal(W, model.W_)  # a token classifier: no transitions
    assert model.n_nonzero_ == np.count_nonzero(coef) > 0


def test_the_two_forms_are_different_models() -> None:
    train = noisy_corpus(80, 0)
    ex, ind = (make("maxent-l1", form=f, c=1.0).fit(train) for f in FORMS)
    assert ex.params["solver"] == "saga" and ind.params["solver"] == "liblinear"
    assert not np.allclose(ex.W_, ind.W_, atol=1e-3)


def test_c_is_chosen_on_the_fit_data_dev_split_never_on_a_held_out_set() -> None:
    train, held = noisy_corpus(100, 2), toy_corpus(40, 3)
    grid = [0.001, 0.1, 10.0]
    seen = []
    model = make("maxent-l1", c_grid=grid).fit(
        train, seed=0, dev=held, progress=lambda *a: seen.append(a)
    )
    blind = make("maxent-l1", c_grid=grid).fit(train, seed=0)
    assert model.c_ == blind.c_ and model.c_path_ == blind.c_path_  # ``dev`` changes nothing
    np.testing.assert_array_equal(model.W_, blind.W_)
    assert [r["c"] for r in model.c_path_] == grid
    best = max(model.c_path_, key=lambda r: (r["dev_f1"], -r["dev_log_loss"], -r["c"]))
    assert model.c_ == best["c"] != 0.001  # far too strong an L1 loses on dev
    # the dev split is the last 10% of the fit data; recompute one grid point from scratch
    cut = len(train) - 10
    X, y = matrix_and_labels(model, train)
    n_fit = sum(len(s) for s in train[:cut])
    truth = sklearn_truth(model, X[:n_fit], y[:n_fit], best["c"])
    ids = truth.classes_[np.argmax(X[n_fit:] @ truth.coef_.T, axis=1)]
    tags, t = [], 0
    for s in train[cut:]:
        tags.append([model.labels_[i] for i in ids[t : t + len(s)]])
        t += len(s)
    assert chunk_f1([s.tags for s in train[cut:]], tags).f1 == pytest.approx(best["dev_f1"])
    assert [(e, n) for e, n, _ in seen] == [(1, 1)] and "dev_f1" in seen[0][2]


@pytest.mark.parametrize("form", FORMS)
def test_n_nonzero_decreases_as_l1_strength_increases(form: str) -> None:
    train = noisy_corpus(80, 4)
    counts = [make("maxent-l1", form=form, c=c).fit(train).n_nonzero_ for c in (10, 1, 0.1, 0.01)]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    assert counts[-1] < 0.5 * counts[0]


@pytest.mark.parametrize("form", FORMS)
def test_save_load_round_trip_predicts_the_same_without_pickle(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train, test = noisy_corpus(60, 5), toy_corpus(20, 6)
    model = make("maxent-l1", form=form, c_grid=[0.3, 3.0], encoding="bioes").fit(train, seed=1)
    path = tmp_path / "m.npz"
    model.save(path)
    with zipfile.ZipFile(path) as z:  # numeric arrays only: no object array, nothing to unpickle
        for name in z.namelist():
            assert np.load(io.BytesIO(z.read(name)), allow_pickle=False).dtype != object

    def no_pickle(*args, **kwargs):
        raise AssertionError("loading a model must never unpickle")

    monkeypatch.setattr(pickle, "load", no_pickle)
    monkeypatch.setattr(pickle, "loads", no_pickle)
    copy = load(path)
    assert type(copy) is type(model) and copy.params == model.params
    for key in ("c_", "c_path_", "seed_", "n_nonzero_", "converged_", "count_"):
        assert getattr(copy, key) == getattr(model, key)
    assert copy.predict(test) == model.predict(test)
    enc = model.encode(test)
    np.testing.assert_array_equal(copy.predict_proba(enc), model.predict_proba(enc))


def test_learn_one_queues_and_refits_once_at_the_next_read(monkeypatch) -> None:
    model = make("maxent-l1", labels=["B-NP", "I-NP", "O"], c=1.0, average=False)
    data = toy_corpus(6, 7)
    model.learn_one(data[0].tokens, data[0].tags, pos=data[0].pos)
    calls = []
    solve = type(model)._solve
    monkeypatch.setattr(type(model), "_solve", lambda *a: calls.append(1) or solve(*a))
    for s in data[1:]:
        model.learn_one(s.tokens, s.tags, pos=s.pos)
    assert calls == []  # a batch solver: nothing is fitted until the model is read
    model.predict(data)
    model.predict(data)
    assert calls == [1] and model.count_ == 6 and model.n_updates_ == 6
    np.testing.assert_array_equal(model.averaged()[0], model.W_)  # average=False: the latest


def test_labels_declared_but_never_seen_are_never_predicted() -> None:
    model = make("maxent-l1", form="independent", labels=["X-RARE", "B-NP", "I-NP", "O"], c=0.1)
    model.fit(toy_corpus(30, 8))
    enc = model.encode(toy_corpus(10, 9))
    raw = emissions(enc.feat_ids, enc.tok_offsets, model.averaged()[0])
    assert (np.argmax(raw, axis=1) == 0).any()  # its zero weights outscore negative ones...
    assert 0 not in model.predict_ids(enc) and model.n_nonzero_ > 0  # ...but it is never chosen
    assert not model.predict_proba(enc)[:, 0].any()


@pytest.mark.parametrize("form", FORMS)
def test_maxent_confidence_is_in_unit_interval_and_equals_sklearn_predict_proba(form: str) -> None:
    assert "maxent" in METHODS
    train, test = noisy_corpus(80, 10), noisy_corpus(30, 11)
    model = make("maxent-l1", form=form, c=0.5).fit(train)
    conf = estimate(model, test, "maxent")
    X, _ = matrix_and_labels(model, test)
    P = sklearn_truth(model, *matrix_and_labels(model, train), 0.5).predict_proba(X)
    rows = np.arange(len(conf.labels))
    assert np.all((conf.confidence >= 0) & (conf.confidence <= 1)) and conf.absolute
    np.testing.assert_array_equal(conf.labels, model.predict_ids(model.encode(test)))
    np.testing.assert_allclose(conf.confidence, P[rows, conf.labels], atol=1e-6)
    np.testing.assert_allclose(conf.confidence, model.token_proba(model.encode(test)))
    np.testing.assert_allclose(conf.distribution.sum(axis=1), 1.0)
    assert conf.confidence.min() < 0.9  # noisy data: not every token is certain
    key = conf.rank_key()
    assert conf.confidence[np.argmin(key)] == conf.confidence.min()


def test_maxent_confidence_fails_clearly_for_learners_without_probabilities() -> None:
    arow = make("arow").fit(toy_corpus(10, 12), epochs=1)
    with pytest.raises(ValueError, match="needs a learner with label probabilities"):
        estimate(arow, toy_corpus(3, 13), "maxent")


def test_bad_parameters_are_rejected() -> None:
    for bad in (
        {"form": "joint"},
        {"form": "exclusive", "solver": "liblinear"},
        {"c": 0},
        {"c_grid": []},
        {"c_grid": [1.0, -1.0]},
        {"tol": 0},
        {"max_iter": 0},
    ):
        with pytest.raises(ValueError):
            make("maxent-l1", **bad)
    assert make("maxent-l1", form="independent", solver="saga").params["solver"] == "saga"
