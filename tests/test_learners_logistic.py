"""The logistic updates (C-SPV, L-SPV, MEC) against hand-derived optima and a dense reference.

The compiled solver works on the margins u_k = f_0 - f_k + sum_j alpha_j M[j, k] (M the Gram matrix
of the difference vectors); a two-labeling problem has m = 1, P_1 = sigmoid(-u) and closed-form
stationary points, which pin each objective and each prior. The dense reference builds Phi(x, y)
as a vector, optimises alpha with scipy and applies dw = sum_j alpha_j Delta_j.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize
from test_learners_updates import brute_ranked, dense_phi, two_token_features

from cwal import features
from cwal.io import Sentence
from cwal.learners import LEARNERS, make
from cwal.learners import _logistic as LK
from cwal.learners.logistic import PRIORS

G, LAP = LK.GAUSSIAN, LK.LAPLACIAN
E = math.e


@pytest.fixture
def id_template(monkeypatch):
    """The ``ids`` template: a token ``f0+f1`` has the features ``f0`` and ``f1``."""
    monkeypatch.setitem(features.TEMPLATES, "ids", two_token_features)
    return "ids"


def solve(rule, prior, gamma, M, u0, cost, steps=300) -> np.ndarray:
    """alpha of the compiled solver on a problem given as Gram matrix, margins and costs."""
    M, u0, cost = (np.atleast_2d(M) * 1.0, np.atleast_1d(u0) * 1.0, np.atleast_1d(cost) * 1.0)
    s = LK.prior_scales(rule, gamma, u0, cost)
    return LK.solve_alpha(M, u0, cost, s, rule, prior, steps)


@pytest.mark.parametrize(
    ("rule", "prior", "gamma", "u0", "cost", "want"),
    [
        # Gaussian SPV: 8 sigmoid(-u0 - 8a) = 2 s a; u0 = -4, a = 1/2 puts P at 1/2: s = 4
        (LK.C_SPV, G, 4.0, -4.0, 1.0, 0.5),
        (LK.C_SPV, G, 8.0, -4.0, 2.0, 0.5),  # s = gamma / c = 4 again
        (LK.L_SPV, G, 20.0, -4.0, 1.0, 0.5),  # s = gamma / (max(0, f_1 - f_0) + c) = 20 / 5
        # Laplacian SPV: 8 sigmoid(4 - 8a) = s = 2 -> 4 - 8a = -ln 3
        (LK.C_SPV, LAP, 2.0, -4.0, 1.0, (4 + math.log(3)) / 8),
        (LK.L_SPV, LAP, 10.0, -4.0, 1.0, (4 + math.log(3)) / 8),  # s = 10 / 5
        # Laplacian: the pull 8 sigmoid(-4) = 0.144 < s = 1 at a = 0, so a stays exactly 0
        (LK.C_SPV, LAP, 1.0, 4.0, 1.0, 0.0),
        # MEC, log(1 + c P_1) + g a^2 from u0 = 0: c 8 P0 P1 / (1 + c P1) = 2 g a at a = 1/8,
        # u = 1, P1 = 1 / (1 + e). (From u0 = -4 MEC is not convex: its gradient vanishes while
        # the competitor dominates, and a = 0.03 beats the stationary point a = 1/2.)
        (LK.MEC, G, 32 * E / ((1 + E) * (2 + E)), 0.0, 1.0, 0.125),
        (LK.MEC, G, 64 * E / ((1 + E) * (3 + E)), 0.0, 2.0, 0.125),
        (LK.MEC, LAP, 8 * E / ((1 + E) * (2 + E)), 0.0, 1.0, 0.125),
    ],
)
def test_two_labeling_optimum_by_hand(rule, prior, gamma, u0, cost, want) -> None:
    alpha = solve(rule, prior, gamma, [[8.0]], u0, cost)
    # the line search compares objective values, so alpha is exact to ~sqrt(machine epsilon)
    assert alpha[0] == pytest.approx(want, abs=1e-7)


def test_gaussian_prior_is_never_exactly_zero_where_laplacian_is() -> None:
    gauss = solve(LK.C_SPV, G, 1.0, [[8.0]], 4.0, 1.0)
    lap = solve(LK.C_SPV, LAP, 1.0, [[8.0]], 4.0, 1.0)
    assert lap[0] == 0.0 and gauss[0] > 0.0
    # Gaussian stationary point: 8 sigmoid(-4 - 8a) = 2a
    a = gauss[0]
    assert 8 / (1 + math.exp(4 + 8 * a)) == pytest.approx(2 * a, rel=1e-6)


def random_qp(seed: int, m: int = 4):
    """A Gram matrix of m random difference vectors, margins and Hamming-like costs."""
    rng = np.random.default_rng(seed)
    D = rng.integers(-1, 2, size=(m, 12)).astype(float)
    D[:, 0] += 1.0  # no all-zero row
    return D @ D.T, rng.normal(0, 2, size=m), rng.integers(1, 5, size=m).astype(float)


@pytest.mark.parametrize("rule", [LK.C_SPV, LK.L_SPV, LK.MEC])
@pytest.mark.parametrize("prior", [G, LAP])
@pytest.mark.parametrize("seed", range(3))
def test_gradient_matches_finite_differences(rule, prior, seed) -> None:
    M, u0, cost = random_qp(seed)
    s = LK.prior_scales(rule, 0.7, u0, cost)
    alpha = np.random.default_rng(seed).uniform(0.05, 0.3, size=len(u0))
    grad = np.empty_like(alpha)
    val = LK.gradient(alpha, M, u0, cost, s, rule, prior, grad)
    assert val == pytest.approx(LK.objective(alpha, M, u0, cost, s, rule, prior), rel=1e-12)
    h = 1e-6
    for j in range(len(alpha)):
        e = np.zeros_like(alpha)
        e[j] = h
        up = LK.objective(alpha + e, M, u0, cost, s, rule, prior)
        down = LK.objective(alpha - e, M, u0, cost, s, rule, prior)
        assert grad[j] == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("rule", [LK.C_SPV, LK.L_SPV, LK.MEC])
@pytest.mark.parametrize("prior", [G, LAP])
@pytest.mark.parametrize("seed", range(4))
def test_each_step_lowers_the_objective_down_to_the_constrained_minimum(rule, prior, seed):
    M, u0, cost = random_qp(seed)
    gamma = 0.5
    s = LK.prior_scales(rule, gamma, u0, cost)
    values = [
        LK.objective(LK.solve_alpha(M, u0, cost, s, rule, prior, t), M, u0, cost, s, rule, prior)
        for t in range(16)
    ]
    assert values[1] < values[0]
    assert all(b <= a for a, b in itertools.pairwise(values))
    ref = minimize(
        lambda a: LK.objective(a, M, u0, cost, s, rule, prior),
        np.full(len(u0), 0.01),
        bounds=[(0, None)] * len(u0),
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-12},
    )
    best = LK.objective(
        LK.solve_alpha(M, u0, cost, s, rule, prior, 300), M, u0, cost, s, rule, prior
    )
    assert best <= ref.fun + 1e-9


def test_mec_with_unit_costs_is_one_minus_the_likelihood() -> None:
    """The paper: for cost-insensitive problems E[c] = 1 - P(y_0)."""
    M, u0, _ = random_qp(7)
    ones = np.ones(len(u0))
    alpha = np.full(len(u0), 0.1)
    zero = np.zeros(len(u0))
    spv = LK.objective(alpha, M, u0, ones, zero, LK.C_SPV, G)  # -log P_0 (no prior)
    mec = LK.objective(alpha, M, u0, ones, zero, LK.MEC, G)  # log(1 + E c)
    assert math.exp(mec) - 1 == pytest.approx(1 - math.exp(-spv), rel=1e-12)


@pytest.mark.parametrize(
    ("name", "prior", "gamma"),
    [
        ("c-spv", "gaussian", 32 / (1 + E)),
        ("l-spv", "gaussian", 32 / (1 + E)),  # zero weights: f_1 = f_0, so s = gamma / c
        ("c-spv", "laplacian", 8 / (1 + E)),
        ("mec", "gaussian", 32 * E / ((1 + E) * (2 + E))),
    ],
)
def test_learner_update_by_hand_on_a_two_labeling_problem(id_template, name, prior, gamma):
    # One token with features f0, f1, labels A and B, gold B, zero weights: the one competitor is
    # A, Delta = +1 at (f0,B), (f1,B), start->B, B->end and -1 at the A twins: M = 8, u0 = 0.
    # Each gamma is chosen so that the stationary point is alpha = 1/8 (margin u = 1,
    # P_1 = 1 / (1 + e)): Gaussian SPV 8 P_1 = 2 gamma alpha; Laplacian SPV 8 P_1 = gamma; MEC
    # 8 P_0 P_1 / (1 + P_1) = 2 gamma alpha.
    model = make(name, labels=["A", "B"], template=id_template, c=gamma, prior=prior, steps=200)
    assert model.learn_one(["f0+f1"], ["B"]) is None
    step = np.array([-1.0, 1.0]) / 8
    np.testing.assert_allclose(model.W_[:2], [step, step], atol=1e-10)
    A = np.zeros((4, 2))
    A[2] = A[3] = step  # start -> label, label -> end
    np.testing.assert_allclose(model.A_, A, atol=1e-10)
    np.testing.assert_allclose(model.averaged()[0], model.W_[:2], atol=1e-15)  # one example


def dense_reference(feats, y, competitors, mu, F, L, rule, prior, gamma):
    """alpha minimising the paper's objective over dense vectors (scipy), and the new weights."""
    phi0 = dense_phi(feats, y, F, L)
    deltas = np.array([phi0 - dense_phi(feats, list(z), F, L) for z in competitors])
    cost = np.array([sum(a != b for a, b in zip(y, z, strict=True)) for z in competitors], float)
    margin0 = deltas @ mu  # f_0 - f_j
    if rule == "spv":
        s = np.full(len(cost), gamma)
    elif rule == "c-spv":
        s = gamma / cost
    elif rule == "l-spv":
        s = gamma / (np.maximum(0.0, -margin0) + cost)
    else:
        s = np.full(len(cost), gamma)

    def objective(alpha):
        w = mu + alpha @ deltas
        f = np.array([w @ phi0] + [w @ (phi0 - d) for d in deltas])
        logp = f - f.max() - np.log(np.exp(f - f.max()).sum())
        reg = s @ (alpha**2 if prior == "gaussian" else np.abs(alpha))
        if rule == "mec":
            return math.log1p(np.exp(logp[1:]) @ cost) + reg
        return -logp[0] + reg

    res = minimize(objective, np.zeros(len(cost)), bounds=[(0, None)] * len(cost),
                   method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-12})  # fmt: skip
    return res.x, mu + res.x @ deltas, objective


def trained(name, labels, template, seed, **params):
    """A model after five random updates (non-zero weights), and the generator for more."""
    rng = np.random.default_rng(seed)
    params.setdefault("steps", 300)
    model = make(name, labels=labels, template=template, **params)
    for _ in range(5):
        n = int(rng.integers(1, 4))
        toks = [f"f{rng.integers(5)}+f{rng.integers(5)}" for _ in range(n)]
        model.learn_one(toks, [labels[i] for i in rng.integers(0, len(labels), size=n)])
    return model, rng


def state(model, tokens):
    """Feature ids per token and the flat weight vector, the new features admitted."""
    enc = model.features_.encode([Sentence(tokens)])  # admit the features, as learn_one will
    model._grow(len(model.features_))
    feats = [enc.feat_ids[a:b].tolist() for a, b in itertools.pairwise(enc.tok_offsets)]
    mu = np.concatenate([model.W_.ravel(), model.A_.ravel()])
    return feats, mu


@pytest.mark.parametrize("seed", range(3))
def test_c_spv_with_equal_costs_equals_plain_spv(id_template, seed) -> None:
    # One token, three labels: both competitors differ from gold in one token (cost 1), so
    # C-SPV's s_j = gamma / 1 is plain SPV's uniform s = gamma.
    labels = ["A", "B", "C"]
    model, rng = trained("c-spv", labels, id_template, seed, c=0.3, k=2)
    tokens, gold = [f"f{rng.integers(5)}+f{rng.integers(5)}"], ["B"]
    feats, mu = state(model, tokens)
    F, L = model.W_.shape[0], 3
    alpha, w, _ = dense_reference(feats, [1], [[0], [2]], mu, F, L, "spv", "gaussian", 0.3)
    assert np.all(alpha > 0)
    model.learn_one(tokens, gold)
    np.testing.assert_allclose(np.concatenate([model.W_.ravel(), model.A_.ravel()]), w, atol=1e-7)


@pytest.mark.usefixtures("float64_state")
@pytest.mark.parametrize("name", ["c-spv", "l-spv", "mec"])
@pytest.mark.parametrize("prior", ["gaussian", "laplacian"])
@pytest.mark.parametrize("seed", range(3))
def test_update_is_the_dense_optimum_over_the_k_best(id_template, name, prior, seed) -> None:
    labels = ["A", "B", "C"]
    model, rng = trained(name, labels, id_template, seed, c=0.5, k=4, prior=prior, steps=10)
    tokens = [f"f{rng.integers(5)}+f{rng.integers(5)}" for _ in range(3)]
    y = rng.integers(0, 3, size=3).tolist()
    feats, mu = state(model, tokens)
    F, L = model.W_.shape[0], 3
    E_ = np.array([model.W_[fs].sum(axis=0) for fs in feats])
    competitors = [z for _, z in brute_ranked(E_, model.A_)[:5] if list(z) != y][:4]
    ref_alpha, _, objective = dense_reference(feats, y, competitors, mu, F, L, name, prior, 0.5)
    # the compiled solver on the dense Gram matrix, margins and costs
    deltas = np.array([dense_phi(feats, y, F, L) - dense_phi(feats, list(z), F, L)
                       for z in competitors])  # fmt: skip
    cost = np.array([sum(a != b for a, b in zip(y, z, strict=True)) for z in competitors], float)
    rule = {"c-spv": LK.C_SPV, "l-spv": LK.L_SPV, "mec": LK.MEC}[name]
    args = (rule, PRIORS[prior], 0.5, deltas @ deltas.T, deltas @ mu, cost)
    best = objective(ref_alpha)
    start = objective(np.zeros(len(cost)))

    def gap(alpha: np.ndarray) -> float:  # share of the possible decrease still missing
        return (objective(alpha) - best) / (start - best)

    # Gaussian priors make the problem strongly convex; with a Laplacian one the data term alone
    # must do it, and overlapping competitors make M near-singular: gradient steps crawl there.
    assert gap(solve(*args, steps=300)) <= (1e-6 if prior == "gaussian" else 1e-3)
    alpha = solve(*args, steps=10)  # what the learner's 10 steps must find
    model.learn_one(tokens, [labels[i] for i in y])
    w = np.concatenate([model.W_.ravel(), model.A_.ravel()])
    np.testing.assert_allclose(w, mu + alpha @ deltas, atol=1e-9)


def test_parameters_are_checked_and_kept_through_model_files() -> None:
    with pytest.raises(ValueError, match="prior"):
        make("mec", prior="cauchy")
    with pytest.raises(ValueError, match="steps"):
        make("l-spv", steps=0)
    with pytest.raises(ValueError, match="metric"):
        make("c-spv", metric="mahalanobis")
    with pytest.raises(ValueError, match="r must"):
        make("c-spv", metric="arow", r=0)
    model = make("l-spv", prior="laplacian", steps=3, k=2, c=0.2)
    assert model.params["algorithm"] == "l-spv" and model.params["k"] == 2
    assert make("c-spv").params["k"] == 5
    model.learn_one(["the", "dog"], ["B-NP", "I-NP"])
    copy = type(model).from_bytes(model.to_bytes())
    assert type(copy) is type(model) and copy.params == model.params
    model = make("mec", metric="arow", r=0.5, init_variance=2.0)
    model.learn_one(["the", "dog"], ["B-NP", "I-NP"])
    copy = type(model).from_bytes(model.to_bytes())
    assert copy.params == model.params and copy.has_covariance
    np.testing.assert_array_equal(copy.covariance()[0], model.covariance()[0])
    assert {"c-spv", "l-spv", "mec"} <= set(LEARNERS)


def test_arow_metric_by_hand_on_a_two_labeling_problem(id_template) -> None:
    # The two-labeling problem above (M = 8 with unit variances, u0 = 0), in AROW's metric with
    # initial variance 1/2: M = Delta' S Delta = 4, so Gaussian C-SPV's 4 P_1 = 2 gamma alpha with
    # gamma = 8 / (1 + e) gives alpha = 1/4 (margin u = alpha M = 1 again), dw = alpha S Delta =
    # 1/8 per touched weight; then AROW's L2 step with r = 1 and v = 4 leaves each touched
    # variance at 1/2 - (1/2)^2 / (1 + 4) = 9/20.
    model = make("c-spv", labels=["A", "B"], template=id_template, c=8 / (1 + E),
                 metric="arow", init_variance=0.5, r=1.0, steps=200)  # fmt: skip
    assert model.has_covariance and not make("c-spv").has_covariance
    model.learn_one(["f0+f1"], ["B"])
    step = np.array([-1.0, 1.0]) / 8
    np.testing.assert_allclose(model.W_[:2], [step, step], atol=1e-10)
    np.testing.assert_allclose(model.A_[2:], [step, step], atol=1e-10)
    np.testing.assert_allclose(model.SW_[:2], np.full((2, 2), 9 / 20))
    np.testing.assert_allclose(model.SA_, [[0.5, 0.5], [0.5, 0.5], [9 / 20] * 2, [9 / 20] * 2])


@pytest.mark.usefixtures("float64_state")
@pytest.mark.parametrize("name", ["c-spv", "l-spv", "mec"])
@pytest.mark.parametrize("projection", ["l2", "kl"])
@pytest.mark.parametrize("seed", range(3))
def test_arow_metric_is_the_dense_update_in_the_covariance(id_template, name, projection, seed):
    # After some updates the variances differ per weight. The step must be the optimum of the
    # objective on the Gram matrix Delta S Delta', applied as dw = sum_j alpha_j S Delta_j, and
    # the covariance must then take AROW's diagonal step along each Delta_j with alpha_j > 0 in
    # turn.
    labels = ["A", "B", "C"]
    model, rng = trained(name, labels, id_template, seed, c=0.5, k=3, steps=10, metric="arow",
                         projection=projection, r=0.7)  # fmt: skip
    tokens = [f"f{rng.integers(5)}+f{rng.integers(5)}" for _ in range(3)]
    y = rng.integers(0, 3, size=3).tolist()
    feats, mu = state(model, tokens)
    S = np.concatenate([model.SW_.ravel(), model.SA_.ravel()])
    assert S.min() < 1.0  # the earlier updates shrank some variances
    F, L = model.W_.shape[0], 3
    E_ = np.array([model.W_[fs].sum(axis=0) for fs in feats])
    competitors = [z for _, z in brute_ranked(E_, model.A_)[:4] if list(z) != y][:3]
    deltas = np.array([dense_phi(feats, y, F, L) - dense_phi(feats, list(z), F, L)
                       for z in competitors])  # fmt: skip
    cost = np.array([sum(a != b for a, b in zip(y, z, strict=True)) for z in competitors], float)
    rule = {"c-spv": LK.C_SPV, "l-spv": LK.L_SPV, "mec": LK.MEC}[name]
    alpha = solve(rule, G, 0.5, (deltas * S) @ deltas.T, deltas @ mu, cost, steps=10)
    assert np.any(alpha > 0)
    want_S = S.copy()
    for a, d in zip(alpha, deltas, strict=True):
        if a == 0.0:  # a competitor the step leaves alone leaves the covariance alone too
            continue
        if projection == "l2":
            want_S = want_S - (want_S * d) ** 2 / (0.7 + (want_S * d) @ d)
        else:
            want_S = 1.0 / (1.0 / want_S + d * d / 0.7)
    model.learn_one(tokens, [labels[i] for i in y])
    w = np.concatenate([model.W_.ravel(), model.A_.ravel()])
    np.testing.assert_allclose(w, mu + (alpha @ deltas) * S, atol=1e-9)
    got_S = np.concatenate([model.SW_.ravel(), model.SA_.ravel()])
    np.testing.assert_allclose(got_S, want_S, rtol=1e-12)


def test_identity_metric_leaves_the_variances_alone() -> None:
    model = make("mec", k=2)
    model.learn_one(["the", "dog", "barks"], ["B-NP", "I-NP", "O"])
    model.learn_one(["a", "cat"], ["B-NP", "I-NP"])
    assert np.all(model.SW_ == 1.0) and np.all(model.SA_ == 1.0)
