"""The N-best soft-max confidence against brute-force enumeration of all labelings, its limits
(one dominant labeling, s -> 0 is KBV) and its place in ``estimate``."""

from __future__ import annotations

import numpy as np
import pytest
from test_confidence import Toy, brute_force, toy_batch
from test_learners import toy_corpus

from cwal.confidence import DEFAULT_K, METHODS, estimate
from cwal.confidence.softmax import model_scale, softmax_distribution
from cwal.decode import emissions
from cwal.learners import make


def brute_shares(model: Toy, enc, b: int, k: int, scale: float) -> np.ndarray:
    """Soft-max label shares ``(n, L)`` of sentence b's k best labelings, from enumeration."""
    labelings = brute_force(model, enc, b)[:k]
    scores = np.array([s for s, _ in labelings])
    w = np.exp(scale * (scores - scores.max()))
    w /= w.sum()
    n, L = len(labelings[0][1]), model.A.shape[1]
    out = np.zeros((n, L))
    for wi, (_, z) in zip(w, labelings, strict=True):
        out[np.arange(n), list(z)] += wi
    return out


@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("k", [1, 5, 1000])
def test_shares_equal_brute_force_enumeration(scale: float, k: int) -> None:
    model = Toy(F=10, L=3, seed=11)
    enc = toy_batch(10, [1, 3, 5, 2])
    conf = estimate(model, enc, "nbest-softmax", k=k, s=scale)
    t = 0
    for b in range(enc.n_sentences):
        want = brute_shares(model, enc, b, k, scale)
        np.testing.assert_allclose(conf.distribution[t : t + len(want)], want, atol=1e-12)
        best = brute_force(model, enc, b)[0][1]
        assert tuple(conf.labels[t : t + len(want)]) == best
        np.testing.assert_allclose(conf.confidence[t : t + len(want)],
                                   want[np.arange(len(want)), list(best)], atol=1e-12)  # fmt: skip
        t += len(want)
    assert conf.absolute and conf.params["s"] == scale and conf.params["k"] == k


def test_all_labelings_give_the_exact_token_marginals() -> None:
    """With k >= L^n the soft-max is the CRF posterior: token marginals by enumeration."""
    model = Toy(F=8, L=3, seed=12)
    enc = toy_batch(8, [4])
    conf = estimate(model, enc, "nbest-softmax", k=3**4, s=1.0)
    labelings = brute_force(model, enc, 0)
    scores = np.array([s for s, _ in labelings])
    p = np.exp(scores - scores.max())
    p /= p.sum()
    for pos in range(4):
        for y in range(3):
            marginal = sum(pi for pi, (_, z) in zip(p, labelings, strict=True) if z[pos] == y)
            assert conf.distribution[pos, y] == pytest.approx(marginal, abs=1e-12)


def test_confidence_lies_in_0_1_and_rows_sum_to_1() -> None:
    model = Toy(F=20, L=4, seed=13)
    enc = toy_batch(20, [1, 2, 7, 12, 3], max_feats=5)
    for scale in (1e-3, 1.0, 50.0):
        conf = estimate(model, enc, "nbest-softmax", s=scale)
        assert np.all((conf.confidence >= 0) & (conf.confidence <= 1))
        np.testing.assert_allclose(conf.distribution.sum(axis=1), 1.0, atol=1e-12)
        assert conf.entropy is not None and np.all(conf.entropy >= -1e-12)
        # the best labeling has the largest weight, so its share is at least 1 / k
        assert np.all(conf.confidence >= 1 / DEFAULT_K["nbest-softmax"] - 1e-12)


def test_one_dominant_labeling_gives_confidence_one() -> None:
    model = Toy(F=10, L=3, seed=14)
    model.W *= 1e3  # the best labeling out-scores the second by hundreds
    enc = toy_batch(10, [3, 6, 1])
    conf = estimate(model, enc, "nbest-softmax", k=20, s=1.0)
    np.testing.assert_allclose(conf.confidence, 1.0, atol=1e-12)
    assert np.all(conf.confidence <= 1.0)


def test_a_tiny_scale_is_kbv_and_a_huge_one_trusts_the_best_labeling() -> None:
    model = Toy(F=10, L=3, seed=15)
    enc = toy_batch(10, [4, 2, 5])
    flat = estimate(model, enc, "nbest-softmax", k=7, s=1e-12)
    kbv = estimate(model, enc, "kbv", k=7)
    np.testing.assert_allclose(flat.distribution, kbv.distribution, atol=1e-9)
    sharp = estimate(model, enc, "nbest-softmax", k=7, s=1e9)
    np.testing.assert_allclose(sharp.confidence, 1.0)


def test_kernel_checks_its_arguments_and_skips_empty_sentences() -> None:
    E, A = np.zeros((2, 2)), np.zeros((4, 2))
    offsets = np.array([0, 0, 2, 2])
    dist = softmax_distribution(E, offsets, A, 4, 1.0)
    np.testing.assert_allclose(dist, 0.5)  # four tied labelings of two tokens
    for bad in ({"k": 0}, {"scale": 0.0}, {"scale": float("nan")}, {"scale": -1.0}):
        args = {"k": 3, "scale": 1.0, **bad}
        with pytest.raises(ValueError):
            softmax_distribution(E, offsets, A, args["k"], args["scale"])


def test_registered_beside_the_other_methods_with_the_learner_scale() -> None:
    assert "nbest-softmax" in METHODS and DEFAULT_K["nbest-softmax"] >= 1
    train = toy_corpus(30, 0)
    for name in ("c-spv", "arow"):
        model = make(name).fit(train, epochs=2)
        assert model_scale(model) == 1.0
        conf = estimate(model, toy_corpus(5, 1), "nbest-softmax", k=5)
        assert conf.params["s"] == 1.0 and conf.n_tokens == sum(len(s) for s in toy_corpus(5, 1))
        assert np.all((conf.confidence >= 0) & (conf.confidence <= 1 + 1e-12))
        assert conf.rank_key().shape == conf.confidence.shape


def test_learner_scale_is_used_when_s_is_not_given() -> None:
    model = Toy(F=10, L=3, seed=16)
    model.softmax_scale = 0.25
    enc = toy_batch(10, [3, 4])
    implicit = estimate(model, enc, "nbest-softmax", k=6)
    explicit = estimate(model, enc, "nbest-softmax", k=6, s=0.25)
    assert implicit.params["s"] == 0.25
    np.testing.assert_array_equal(implicit.distribution, explicit.distribution)
    E = emissions(enc.feat_ids, enc.tok_offsets, model.W)
    direct = softmax_distribution(E, enc.sent_offsets, model.A, 6, 0.25)
    np.testing.assert_array_equal(implicit.distribution, direct)
