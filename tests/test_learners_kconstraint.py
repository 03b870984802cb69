"""k-constraint CW and AROW (crammer-dredze-kulesza-2009 §5.2, the sequential update): one
single-constraint step per competitor, the k best wrong labelings chosen under the mean before
the update, each step's margin and variance recomputed from what the previous step left."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm
from test_learners import toy_corpus

from cwal import features
from cwal.decode import kbest
from cwal.io import Sentence
from cwal.learners import AROWKC, CWKC, LEARNERS, make, recommended


def split_features(tokens, columns):
    """Test template: a token ``f0+f1`` has the features ``f0`` and ``f1``."""
    return [t.split("+") for t in tokens]


@pytest.fixture
def ids(monkeypatch) -> str:
    monkeypatch.setitem(features.TEMPLATES, "ids", split_features)
    return "ids"


def test_registered_with_k_5_by_default_and_configurable() -> None:
    assert LEARNERS["cw-kc"] is CWKC and LEARNERS["arow-kc"] is AROWKC
    for name in ("cw-kc", "arow-kc"):
        assert make(name).params["k"] == 5 and make(name, k=3).params["k"] == 3
        assert make(name).has_covariance
        assert recommended("chunk", name)["k"] == 5
    assert make("cw-kc").params["algorithm"] == "cw"
    assert make("arow-kc").params["algorithm"] == "arow"


@pytest.mark.parametrize(("kc", "single"), [("cw-kc", "cw"), ("arow-kc", "arow")])
def test_k_1_is_the_single_constraint_learner(kc: str, single: str) -> None:
    data = toy_corpus(40, 11)
    a = make(kc, k=1).fit(data, epochs=3, seed=2)
    b = make(single).fit(data, epochs=3, seed=2)
    for key in ("W_", "A_", "SW_", "SA_", "UW_", "UA_"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
    assert a.count_ == b.count_
    assert not np.array_equal(make(kc).fit(data, epochs=3, seed=2).W_, b.W_)  # k = 5 differs


@pytest.mark.usefixtures("float64_state")
def test_two_constraint_arow_step_by_hand(ids: str) -> None:
    # One token with the feature f0, labels A, B, C, gold C, zero weights, unit variances, r = 1.
    # All labelings tie; k-best breaks ties to the lower label, so the competitors are A then B.
    # Each Delta touches 6 weights: W[f0, .], start -> ., . -> end (+1 for C, -1 for the other).
    # Step 1 (C vs A): m = 0, v = 6, alpha = 1/7; C entries +1/7, A entries -1/7; variance
    #   1 - 1/7 = 6/7 on both.
    # Step 2 (C vs B), margin recomputed: m = 3/7, v = 3 * 6/7 + 3 = 39/7,
    #   alpha = (1 - 3/7) / (1 + 39/7) = 2/23; C entries 1/7 + 2/23 * 6/7 = 5/23, B entries -2/23;
    #   variance C 6/7 - (6/7)^2 / (46/7) = 120/161, B 1 - 1/(46/7) = 39/46.
    # (Steps from the same start, i.e. without recomputing, would give B -1/7 instead.)
    Z, _ = kbest(np.zeros((1, 3)), np.zeros((5, 3)), 3)
    assert Z[:, 0].tolist() == [0, 1, 2]
    model = make("arow-kc", labels=["A", "B", "C"], template=ids, k=2, c=1.0)
    model.learn_one(["f0"], ["C"])
    row = np.array([-1 / 7, -2 / 23, 5 / 23])
    var = np.array([6 / 7, 39 / 46, 120 / 161])
    A_mean, A_var = np.zeros((5, 3)), np.ones((5, 3))
    A_mean[3:] = row  # start -> label and label -> end
    A_var[3:] = var
    np.testing.assert_allclose(model.W_[:1], [row], rtol=1e-13)
    np.testing.assert_allclose(model.SW_[:1], [var], rtol=1e-13)
    np.testing.assert_allclose(model.A_, A_mean, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(model.SA_, A_var, rtol=1e-13)


def _dense_phi(feats: list[list[int]], y: tuple[int, ...], F: int, L: int) -> np.ndarray:
    v = np.zeros(F * L + (L + 2) * L)
    for p, fs in enumerate(feats):
        for f in fs:
            v[f * L + y[p]] += 1
    nw = F * L
    v[nw + L * L + y[0]] += 1
    for p in range(1, len(y)):
        v[nw + y[p - 1] * L + y[p]] += 1
    v[nw + (L + 1) * L + y[-1]] += 1
    return v


def _cw_diag_step(mu, s2, delta, phi):
    """One CW (stdev form) step with the L2 diagonal projection, algorithms.md §2."""
    m, v = mu @ delta, s2 @ delta**2
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    alpha = (-m * psi + math.sqrt(m**2 * phi**4 / 4 + v * phi**2 * zeta)) / (v * zeta)
    if v <= 0 or alpha <= 0:
        return mu, s2
    sqrt_vp = (-alpha * v * phi + math.sqrt(alpha**2 * v**2 * phi**2 + 4 * v)) / 2
    beta_c = alpha * phi / (sqrt_vp + v * alpha * phi)
    return mu + alpha * s2 * delta, s2 - beta_c * (s2 * delta) ** 2


@pytest.mark.usefixtures("float64_state")
@pytest.mark.parametrize("seed", range(4))
def test_cw_kc_is_sequential_cw_against_the_k_best_wrong_labelings(seed: int, ids: str) -> None:
    rng = np.random.default_rng(seed)
    labels = ["A", "B", "C"]

    def sentence():
        n = int(rng.integers(2, 4))
        toks = [f"f{rng.integers(6)}+f{rng.integers(6)}" for _ in range(n)]
        return toks, [labels[i] for i in rng.integers(0, 3, size=n)]

    model = make("cw-kc", labels=labels, template=ids, k=3, eta=0.85)
    for _ in range(8):
        model.learn_one(*sentence())
    tokens, tags = sentence()
    enc = model.features_.encode([Sentence(tokens)])  # admits the new features, as learn_one will
    feats = [enc.feat_ids[a:b].tolist() for a, b in itertools.pairwise(enc.tok_offsets)]
    model._grow(len(model.features_))
    F, L = model.W_.shape[0], 3
    y = tuple(labels.index(t) for t in tags)
    mu = np.concatenate([model.W_.ravel(), model.A_.ravel()])
    s2 = np.concatenate([model.SW_.ravel(), model.SA_.ravel()])
    scored = []
    for z in itertools.product(range(L), repeat=len(y)):
        score = _dense_phi(feats, z, F, L) @ mu
        scored.append((-score, z))
    competitors = [z for _, z in sorted(scored) if z != y][:3]
    for z in competitors:
        delta = _dense_phi(feats, y, F, L) - _dense_phi(feats, z, F, L)
        mu, s2 = _cw_diag_step(mu, s2, delta, norm.ppf(0.85))
    model.learn_one(tokens, tags)
    np.testing.assert_allclose(np.concatenate([model.W_.ravel(), model.A_.ravel()]), mu, atol=1e-12)
    np.testing.assert_allclose(
        np.concatenate([model.SW_.ravel(), model.SA_.ravel()]), s2, atol=1e-12
    )
