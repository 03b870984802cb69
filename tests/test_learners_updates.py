"""Every update rule against a dense, full-covariance reference written from algorithms.md §2.

The reference builds Phi(x, y) as a dense vector, takes the full step (mu += alpha Sigma Delta and
Sigma^-1 += beta Delta Delta' inverted with numpy), and the kernels must match its mean exactly
and its diagonal under the L2 projection. Hand-derived numbers pin AROW and the KL projection.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from cwal import features
from cwal.io import Sentence
from cwal.learners import _kernels as K
from cwal.learners import make

ALGOS = {
    "perceptron": K.PERCEPTRON,
    "pa": K.PA,
    "cw-var": K.CW_VAR,
    "cw": K.CW_STDEV,
    "arow": K.AROW,
}


def dense_phi(feats: list[list[int]], y: list[int], F: int, L: int) -> np.ndarray:
    """Phi(x, y) over the flat space [W (F, L) | A (L+2, L)] straight from docs/design.md."""
    v = np.zeros(F * L + (L + 2) * L)
    nw = F * L
    for p, fs in enumerate(feats):
        for f in fs:
            v[f * L + y[p]] += 1
    if y:
        v[nw + L * L + y[0]] += 1  # start -> y_0
        for p in range(1, len(y)):
            v[nw + y[p - 1] * L + y[p]] += 1
        v[nw + (L + 1) * L + y[-1]] += 1  # y_{n-1} -> end
    return v


def full_step(algo: str, mu, Sigma, delta, d, c, phi):
    """(alpha, mu', Sigma') of the full-covariance update; Sigma' through the inverse form."""
    m = mu @ delta
    v = delta @ Sigma @ delta if Sigma is not None else None
    if algo == "perceptron":
        return 1.0, mu + delta, Sigma
    if algo == "pa":
        alpha = min(c, max(0.0, d - m) / (delta @ delta))
        return alpha, mu + alpha * delta, Sigma
    if algo == "arow":
        alpha, beta = max(0.0, d - m) / (c + v), 1.0 / c
    elif algo == "cw":
        p1, p2 = 1 + phi**2 / 2, 1 + phi**2
        alpha = max(0.0, (-m * p1 + math.sqrt(m**2 * phi**4 / 4 + v * phi**2 * p2)) / (v * p2))
        vplus = ((-alpha * v * phi + math.sqrt(alpha**2 * v**2 * phi**2 + 4 * v)) / 2) ** 2
        beta = alpha * phi / math.sqrt(vplus)
    else:  # cw-var, crammer-dredze-pereira eq. 18
        b = 1 + 2 * phi * m
        gamma = (-b + math.sqrt(b * b - 8 * phi * (m - phi * v))) / (4 * phi * v)
        alpha = max(0.0, gamma)
        beta = 2 * alpha * phi
    new_sigma = np.linalg.inv(np.linalg.inv(Sigma) + beta * np.outer(delta, delta))
    return alpha, mu + alpha * Sigma @ delta, new_sigma


def random_problem(seed: int, n: int = 4, F: int = 5, L: int = 3):
    rng = np.random.default_rng(seed)
    feats = [
        sorted(rng.choice(F, size=rng.integers(1, 4), replace=False).tolist()) for _ in range(n)
    ]
    y = rng.integers(0, L, size=n).tolist()
    z = list(y)
    while z == y:
        z = rng.integers(0, L, size=n).tolist()
    return rng, feats, y, z


def kernel_step(algo, feats, y, z, W, A, SW, SA, c, phi, proj=K.PROJ_L2, count=0.0):
    """Apply the compiled step to copies; returns the new (W, A, SW, SA, UW, UA) flat vectors."""
    L = W.shape[1]
    ids = np.array([f for fs in feats for f in fs], dtype=np.int32)
    offs = np.cumsum([0] + [len(fs) for fs in feats]).astype(np.int64)
    idx, val = K.difference(ids, offs, np.array(y, np.int32), np.array(z, np.int32), W.size, L)
    out = [a.copy().ravel() for a in (W, A, SW, SA)] + [np.zeros(W.size), np.zeros(A.size)]
    d = float(sum(a != b for a, b in zip(y, z, strict=True)))
    K.apply_update(idx, val, *out, count, ALGOS[algo], proj, c, phi, d)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_difference_equals_dense_phi_difference(seed: int) -> None:
    _, feats, y, z = random_problem(seed, n=5, F=6, L=4)
    feats[2] = feats[2] + feats[2][:1]  # a feature repeated in one token counts twice
    ids = np.array([f for fs in feats for f in fs], dtype=np.int32)
    offs = np.cumsum([0] + [len(fs) for fs in feats]).astype(np.int64)
    idx, val = K.difference(ids, offs, np.array(y, np.int32), np.array(z, np.int32), 24, 4)
    got = np.zeros(24 + 6 * 4)
    got[idx] = val
    np.testing.assert_array_equal(got, dense_phi(feats, y, 6, 4) - dense_phi(feats, z, 6, 4))
    assert np.all(val != 0) and np.all(np.diff(idx) > 0)


@pytest.mark.parametrize("algo", list(ALGOS))
@pytest.mark.parametrize("seed", range(4))
def test_step_equals_full_covariance_step_then_diagonal(algo: str, seed: int) -> None:
    rng, feats, y, z = random_problem(seed)
    F, L = 5, 3
    W, A = 0.3 * rng.normal(size=(F, L)), 0.3 * rng.normal(size=(L + 2, L))
    SW, SA = rng.uniform(0.2, 1.5, size=(F, L)), rng.uniform(0.2, 1.5, size=(L + 2, L))
    c, phi = 0.7, norm.ppf(0.85)
    delta = dense_phi(feats, y, F, L) - dense_phi(feats, z, F, L)
    mu = np.concatenate([W.ravel(), A.ravel()])
    Sigma = np.diag(np.concatenate([SW.ravel(), SA.ravel()]))
    d = float(sum(a != b for a, b in zip(y, z, strict=True)))
    alpha, mu_new, sigma_new = full_step(algo, mu, Sigma, delta, d, c, phi)
    Wf, Af, SWf, SAf, _, _ = kernel_step(algo, feats, y, z, W, A, SW, SA, c, phi)
    np.testing.assert_allclose(np.concatenate([Wf, Af]), mu_new, rtol=1e-10, atol=1e-12)
    if algo in ("perceptron", "pa"):
        np.testing.assert_array_equal(np.concatenate([SWf, SAf]), np.diag(Sigma))
    else:
        assert alpha > 0
        np.testing.assert_allclose(
            np.concatenate([SWf, SAf]), np.diag(sigma_new), rtol=1e-10, atol=1e-12
        )


@pytest.mark.parametrize("seed", range(4))
def test_cw_constraints_hold_with_equality_after_full_step(seed: int) -> None:
    rng, feats, y, z = random_problem(seed)
    F, L = 5, 3
    delta = dense_phi(feats, y, F, L) - dense_phi(feats, z, F, L)
    mu = 0.1 * rng.normal(size=delta.size)
    mu -= (mu @ delta) / (delta @ delta) * delta  # margin 0: the constraint is violated
    Sigma = np.diag(rng.uniform(0.2, 1.5, size=delta.size))
    phi = norm.ppf(0.9)
    _, mu1, s1 = full_step("cw", mu, Sigma, delta, 1.0, 1.0, phi)
    assert mu1 @ delta == pytest.approx(phi * math.sqrt(delta @ s1 @ delta), rel=1e-9)
    _, mu2, s2 = full_step("cw-var", mu, Sigma, delta, 1.0, 1.0, phi)
    assert mu2 @ delta == pytest.approx(phi * (delta @ s2 @ delta), rel=1e-9)
    # and the compiled mean step reaches the same margins
    W, A = mu[: F * L].reshape(F, L), mu[F * L :].reshape(L + 2, L)
    SW, SA = np.diag(Sigma)[: F * L].reshape(F, L), np.diag(Sigma)[F * L :].reshape(L + 2, L)
    for algo, ref in (("cw", mu1), ("cw-var", mu2)):
        Wf, Af, *_ = kernel_step(algo, feats, y, z, W, A, SW, SA, 1.0, phi)
        assert np.concatenate([Wf, Af]) @ delta == pytest.approx(ref @ delta, rel=1e-9)


def test_cw_and_arow_skip_when_the_constraint_already_holds() -> None:
    _, feats, y, z = random_problem(0)
    F, L = 5, 3
    delta = dense_phi(feats, y, F, L) - dense_phi(feats, z, F, L)
    mu = 10.0 * delta  # a huge margin
    W, A = mu[: F * L].reshape(F, L), mu[F * L :].reshape(L + 2, L)
    SW, SA = np.ones((F, L)), np.ones((L + 2, L))
    for algo in ("cw", "cw-var", "arow", "pa"):
        Wf, Af, SWf, SAf, _, _ = kernel_step(algo, feats, y, z, W, A, SW, SA, 1.0, 1.28)
        np.testing.assert_array_equal(np.concatenate([Wf, Af]), mu)
        assert np.all(SWf == 1.0) and np.all(SAf == 1.0)


def two_token_features(tokens, columns):
    """Test template: a token ``f0+f1`` has the features ``f0`` and ``f1``."""
    return [t.split("+") for t in tokens]


@pytest.fixture
def id_template(monkeypatch):
    monkeypatch.setitem(features.TEMPLATES, "ids", two_token_features)
    return "ids"


def test_arow_alpha_and_beta_by_hand_on_two_tokens(id_template) -> None:
    # Zero weights: Viterbi ties to label 0 everywhere, z = (A, A) against gold (A, B).
    # Delta = +1 at (f1,B), (f2,B), A[A,B], A[end,B]; -1 at (f1,A), (f2,A), A[A,A], A[end,A]:
    # m = 0, v = 8 (a = 1), d = 1, so alpha = (1 - 0) / (r + v) = 1/9 with r = 1, beta = 1/r, and
    # the projected variance of each touched weight is 1 - 1^2 / (r + v) = 8/9.
    model = make("arow", labels=["A", "B"], template=id_template, c=1.0)
    assert model.learn_one(["f0+f1", "f1+f2"], ["A", "B"]) is None
    W_expected = np.array([[0, 0], [-1, 1], [-1, 1]]) / 9
    A_expected = np.zeros((4, 2))
    A_expected[0] = [-1 / 9, 1 / 9]  # A->A, A->B
    A_expected[3] = [-1 / 9, 1 / 9]  # A->end, B->end
    np.testing.assert_allclose(model.W_[:3], W_expected, atol=1e-15)
    np.testing.assert_allclose(model.A_, A_expected, atol=1e-15)
    np.testing.assert_allclose(model.SW_[:3], [[1, 1], [8 / 9, 8 / 9], [8 / 9, 8 / 9]])
    np.testing.assert_allclose(model.SA_, np.where(A_expected != 0, 8 / 9, 1.0))
    np.testing.assert_allclose(model.averaged()[0], W_expected, atol=1e-15)  # one example


def test_kl_projection_by_hand() -> None:
    # One token, features {0}, gold label 1 vs z = 0, sigma^2 = 1/2 everywhere, r = 1, mu = 0.
    # Delta: (0,1) +1, (0,0) -1, start->1 +1, start->0 -1, 1->end +1, 0->end -1: v = 6 * 1/2 = 3.
    # KL: 1/s^2 <- 1/s^2 + (1/r) delta_j^2 = 2 + 1 = 3 -> s^2 = 1/3; L2: 1/2 - (1/2)^2/(1+3) = 7/16.
    W, A = np.zeros((1, 2)), np.zeros((4, 2))
    SW, SA = np.full((1, 2), 0.5), np.full((4, 2), 0.5)
    for proj, want in ((K.PROJ_KL, 1 / 3), (K.PROJ_L2, 7 / 16)):
        Wf, Af, SWf, SAf, _, _ = kernel_step("arow", [[0]], [1], [0], W, A, SW, SA, 1.0, 0.0, proj)
        np.testing.assert_allclose(SWf, [want, want])
        np.testing.assert_allclose(SAf.reshape(4, 2)[[2, 3]], [[want, want], [want, want]])
        np.testing.assert_allclose(SAf.reshape(4, 2)[[0, 1]], 0.5)
        np.testing.assert_allclose(Wf, [-1 / 8, 1 / 8])  # alpha = 1/(1+3), step alpha*s^2


def brute_ranked(E: np.ndarray, A: np.ndarray) -> list[tuple[float, tuple[int, ...]]]:
    n, L = E.shape
    out = []
    for y in itertools.product(range(L), repeat=n):
        s = E[np.arange(n), y].sum() + A[L, y[0]] + A[L + 1, y[-1]]
        s += sum(A[y[p - 1], y[p]] for p in range(1, n))
        out.append((s, y))
    return sorted(out, key=lambda t: -t[0])


@pytest.mark.parametrize("seed", range(12))
def test_best_wrong_is_the_best_labeling_other_than_gold(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, L = int(rng.integers(1, 5)), int(rng.integers(2, 4))
    E, A = rng.normal(size=(n, L)), rng.normal(size=(L + 2, L))
    ranked = brute_ranked(E, A)
    gold = ranked[0][1] if seed % 2 else tuple(rng.integers(0, L, size=n).tolist())
    z, ok, errors = K.best_wrong(E, A, np.array(gold, dtype=np.int32))
    want = next(t for t in ranked if t[1] != gold)
    assert ok and tuple(z.tolist()) == want[1]
    assert errors == sum(a != b for a, b in zip(ranked[0][1], gold, strict=True))


def test_best_wrong_reports_none_for_a_single_label() -> None:
    z, ok, errors = K.best_wrong(np.zeros((3, 1)), np.zeros((3, 1)), np.zeros(3, np.int32))
    assert not ok and errors == 0


@pytest.mark.parametrize("seed", range(3))
def test_kbest_pa_is_sequential_pa_against_the_k_best_wrong_labelings(seed, id_template) -> None:
    rng = np.random.default_rng(seed)
    labels = ["A", "B", "C"]

    def sentence():
        n = int(rng.integers(2, 4))
        return [f"f{rng.integers(6)}+f{rng.integers(6)}" for _ in range(n)], [
            labels[i] for i in rng.integers(0, 3, size=n)
        ]

    model = make("kbest-pa", labels=labels, template=id_template, k=3, c=0.5)
    for _ in range(6):
        model.learn_one(*sentence())
    tokens, tags = sentence()
    enc = model.features_.encode([Sentence(tokens)])  # admits the new features, as learn_one will
    feats = [enc.feat_ids[a:b].tolist() for a, b in itertools.pairwise(enc.tok_offsets)]
    model._grow(len(model.features_))
    F, L = model.W_.shape[0], 3
    y = [labels.index(t) for t in tags]
    mu = np.concatenate([model.W_.ravel(), model.A_.ravel()])
    E = np.array([model.W_[fs].sum(axis=0) for fs in feats])
    competitors = [z for _, z in brute_ranked(E, model.A_) if list(z) != y][:3]
    for z in competitors:  # sequential single-constraint PA-I steps
        delta = dense_phi(feats, y, F, L) - dense_phi(feats, list(z), F, L)
        d = sum(a != b for a, b in zip(y, z, strict=True))
        mu = full_step("pa", mu, None, delta, d, 0.5, 0.0)[1]
    model.learn_one(tokens, tags)
    np.testing.assert_allclose(np.concatenate([model.W_.ravel(), model.A_.ravel()]), mu, atol=1e-12)


def test_mistake_driven_skips_a_correct_prediction_margin_rule_does_not(id_template) -> None:
    for mistake_driven, changes in ((True, False), (False, True)):
        model = make("arow", labels=["A", "B"], template=id_template, mistake_driven=mistake_driven)
        model.learn_one(["f0+f1", "f1+f2"], ["A", "A"])  # zero weights already predict (A, A)
        assert bool(np.any(model.W_ != 0)) == changes
