"""Confidence estimators against independent truth: brute-force enumeration of labelings on small
problems, explicit per-draw decoding, and the limits s -> 0 and s -> infinity."""

from __future__ import annotations

import itertools
import math

import numba
import numpy as np
import pytest

from cwal.confidence import Confidence, estimate, rank_key
from cwal.confidence.core import vote_entropy
from cwal.confidence.sampling import Sampler
from cwal.decode import emissions, max_marginals_batch, viterbi_batch
from cwal.features import Encoded


class Toy:
    """A model with random weights and covariance; the batch is given already encoded."""

    def __init__(self, F: int = 12, L: int = 3, seed: int = 0, covariance: bool = True) -> None:
        rng = np.random.default_rng(seed)
        self.W = rng.normal(size=(F, L))
        self.A = rng.normal(size=(L + 2, L))
        self.SW = rng.uniform(0.2, 2.0, size=(F, L))
        self.SA = rng.uniform(0.2, 2.0, size=(L + 2, L))
        self.labels_ = [f"y{i}" for i in range(L)]
        self.has_covariance = covariance

    def averaged(self):
        return self.W, self.A

    def covariance(self):
        return self.SW, self.SA


def toy_batch(F: int, lengths, seed: int = 1, max_feats: int = 4) -> Encoded:
    """Sentences of the given lengths; each token has 1..max_feats distinct random features."""
    rng = np.random.default_rng(seed)
    feats, tok_off = [], [0]
    for n in lengths:
        for _ in range(n):
            feats.extend(rng.choice(F, size=rng.integers(1, max_feats + 1), replace=False))
            tok_off.append(len(feats))
    sent_off = np.concatenate([[0], np.cumsum(lengths)])
    return Encoded(
        np.array(feats, np.int32), np.array(tok_off, np.int64), sent_off.astype(np.int64)
    )


def brute_force(model: Toy, enc: Encoded, b: int):
    """All labelings of sentence b with their scores, computed directly from the definition."""
    sub = enc.sentence(b)
    E = np.array([model.W[sub.feat_ids[sub.tok_offsets[p] : sub.tok_offsets[p + 1]]].sum(0)
                  for p in range(sub.n_tokens)])  # fmt: skip
    A, L = model.A, model.A.shape[1]
    out = []
    for y in itertools.product(range(L), repeat=len(E)):
        s = A[L, y[0]] + A[L + 1, y[-1]] + sum(E[p, y[p]] for p in range(len(y)))
        s += sum(A[y[p - 1], y[p]] for p in range(1, len(y)))
        out.append((s, y))
    out.sort(key=lambda t: -t[0])
    return out


def test_delta_equals_brute_force():
    model = Toy(F=10, L=3, seed=3)
    enc = toy_batch(10, [1, 3, 5, 4])
    conf = estimate(model, enc, "delta")
    assert not conf.absolute and conf.distribution is None
    t = 0
    for b in range(enc.n_sentences):
        labelings = brute_force(model, enc, b)
        best_score, best = labelings[0]
        assert tuple(conf.labels[t : t + len(best)]) == best
        for p in range(len(best)):
            rival = max(s for s, y in labelings if y[p] != best[p])
            assert conf.margin[t + p] == pytest.approx(best_score - rival, abs=1e-9)
        t += len(best)


@pytest.mark.parametrize("method", ["kbv", "wkbv"])
def test_kbest_shares_equal_brute_force(method):
    model = Toy(F=10, L=3, seed=4)
    model.A += 2.0  # positive scores, so WKBV's max(0, score) weights are not all zero
    enc = toy_batch(10, [2, 4, 1, 5])
    k = 7
    conf = estimate(model, enc, method, k=k)
    t = 0
    for b in range(enc.n_sentences):
        labelings = brute_force(model, enc, b)[:k]
        w = np.array([max(0.0, s) if method == "wkbv" else 1.0 for s, _ in labelings])
        n = len(labelings[0][1])
        for p in range(n):
            for y in range(3):
                share = (
                    sum(wi for wi, (_, z) in zip(w, labelings, strict=True) if z[p] == y) / w.sum()
                )
                assert conf.distribution[t + p, y] == pytest.approx(share, abs=1e-12)
            best = labelings[0][1][p]
            assert conf.confidence[t + p] == pytest.approx(conf.distribution[t + p, best])
        t += n
    assert np.allclose(conf.distribution.sum(1), 1.0)


def test_kbv_single_token_sentence_uses_every_label_once():
    """One token, L labels, k >= L: KBV sees each label once, so confidence is exactly 1/L."""
    model = Toy(F=5, L=4, seed=5)
    enc = toy_batch(5, [1])
    conf = estimate(model, enc, "kbv", k=30)
    assert conf.confidence[0] == pytest.approx(0.25)
    assert np.allclose(conf.distribution, 0.25)


@pytest.mark.parametrize("k", [16, 7])
@pytest.mark.parametrize("method", ["kd-pc", "kd-fixed"])
def test_votes_and_margins_equal_explicit_per_draw_decoding(method, k):
    """The fused kernel's votes and mean margins equal decoding each draw's weights (W + noise)
    separately: Viterbi for the votes, max-marginals for the signed margin of y_hat."""
    model = Toy(F=30, L=4, seed=6)
    enc = toy_batch(30, [3, 1, 7, 5, 2, 6], max_feats=5)
    W, A = model.averaged()
    SW, SA = model.covariance() if method == "kd-pc" else (None, None)
    s = 0.3
    sampler = Sampler(W, A, SW, SA, k=k, s=s, seed=9, dtype=np.float64)
    half, local = sampler.noise(enc)
    active = np.unique(enc.feat_ids)
    assert half.shape == (active.size, 4 * ((k + 1) // 2))  # active features, one per pair
    Z = sampler.mirror(half)
    E = emissions(enc.feat_ids, enc.tok_offsets, W)
    yhat = viterbi_batch(E, enc.sent_offsets, A)
    counts, mean_margin = sampler.draw(enc, E, yhat)
    assert np.array_equal(sampler.draw(enc, E)[0], counts) and sampler.draw(enc, E)[1] is None
    expected = np.zeros_like(counts)
    margin = np.zeros(enc.n_tokens)
    rows = np.arange(enc.n_tokens)
    for d in range(k):
        Wd = W.copy()
        for u, f in enumerate(enc.feat_ids[np.unique(local.feat_ids, return_index=True)[1]]):
            Wd[f] += Z[u].reshape(4, k)[:, d]
        Ed = emissions(enc.feat_ids, enc.tok_offsets, Wd)
        y = viterbi_batch(Ed, enc.sent_offsets, sampler.AK[:, :, d])
        expected[rows, y] += 1
        MM = max_marginals_batch(Ed, enc.sent_offsets, sampler.AK[:, :, d])
        own = MM[rows, yhat].copy()
        MM[rows, yhat] = -np.inf
        margin += (own - MM.max(axis=1)) / k
    assert np.array_equal(counts, expected)
    assert np.allclose(mean_margin, margin, rtol=1e-9, atol=1e-9)
    assert np.all((mean_margin > 0) | (counts[rows, yhat] < k))  # negative only where draws differ


def test_noise_has_the_requested_covariance():
    """Sampled weights of feature f, label j have variance s * SW[f, j] (KD-PC), s (KD-Fixed)."""
    model = Toy(F=6, L=3, seed=7)
    enc = toy_batch(6, [6], max_feats=6)
    s, k = 0.5, 4000
    for SW in (model.SW, None):
        sampler = Sampler(model.W, model.A, SW, None if SW is None else model.SA, k=k, s=s,
                          dtype=np.float64)  # fmt: skip
        half, local = sampler.noise(enc)
        Z = sampler.mirror(half)
        ids = enc.feat_ids[np.unique(local.feat_ids, return_index=True)[1]]
        var = Z.reshape(len(ids), 3, k).var(axis=2)
        want = s * (SW[ids] if SW is not None else np.ones((len(ids), 3)))
        assert np.allclose(var / want, 1.0, atol=0.1)
        assert abs(Z.mean()) < 0.02
        noise = sampler.AK.astype(np.float64) - model.A[:, :, None]  # transitions are drawn too
        want_a = s * (model.SA if SW is not None else np.ones_like(model.A))
        assert np.allclose(noise.var(axis=2) / want_a, 1.0, atol=0.1)


@pytest.mark.parametrize("k", [8, 7, 1])
def test_antithetic_draws_are_mirrored_pairs_of_independent_ones(k):
    """Draw ``ceil(k/2) + i`` is minus draw i, for weights and transitions; the generated half
    is the independent sampler's first ``ceil(k/2)`` draws; an odd k leaves its last draw
    unpaired; ``antithetic=False`` draws all k independently."""
    model = Toy(F=10, L=3, seed=4)
    enc = toy_batch(10, [4, 3], max_feats=3)
    args = (model.W, model.A, model.SW, model.SA)
    pairs = Sampler(*args, k=k, s=0.5, seed=2, dtype=np.float64)
    plain = Sampler(*args, k=(k + 1) // 2, s=0.5, seed=2, dtype=np.float64, antithetic=False)
    half = (k + 1) // 2
    assert np.array_equal(pairs.noise(enc)[0], plain.noise(enc)[0])
    full = pairs.mirror(pairs.noise(enc)[0]).reshape(-1, 3, k)
    assert np.array_equal(full[:, :, half:], -full[:, :, : k - half])
    noise_a = pairs.AK - model.A[:, :, None]
    assert np.allclose(noise_a[:, :, :half], plain.AK - model.A[:, :, None])
    assert np.allclose(noise_a[:, :, half:], -noise_a[:, :, : k - half])
    independent = Sampler(*args, k=k, s=0.5, seed=2, dtype=np.float64, antithetic=False)
    assert independent.noise(enc)[0].shape == (full.shape[0], 3 * k)


def test_antithetic_draws_cut_the_spread_of_kd_between_seeds():
    """Mirrored draws keep each draw's distribution but cancel the first-order noise of the mean
    margin: over seeds, the draws' mean margin varies much less than with independent draws."""
    model = Toy(F=40, L=3, seed=21)
    enc = toy_batch(40, [5, 7, 4, 6, 8, 3], max_feats=4)

    def spread(antithetic: bool) -> float:
        runs = [estimate(model, enc, "kd-pc", k=20, s=0.05, seed=sd, antithetic=antithetic)
                for sd in range(12)]  # fmt: skip
        return float(np.std([c.draw_margin for c in runs], axis=0).mean())

    assert spread(True) < 0.5 * spread(False)


def test_marginal_approximation_matches_per_token_variance():
    model = Toy(F=8, L=3, seed=8)
    enc = toy_batch(8, [3, 2], max_feats=4)
    s, k = 0.2, 4000
    sampler = Sampler(model.W, model.A, model.SW, model.SA, k=k, s=s, correlated=False,
                      dtype=np.float64)  # fmt: skip
    half, local = sampler.noise(enc)
    Z = sampler.mirror(half)
    assert Z.shape == (enc.n_tokens, 3 * k)
    want = s * emissions(enc.feat_ids, enc.tok_offsets, model.SW)
    assert np.allclose(Z.reshape(-1, 3, k).var(axis=2) / want, 1.0, atol=0.1)


@pytest.mark.parametrize("method", ["kd-pc", "kd-fixed"])
@pytest.mark.parametrize("correlated", [True, False])
def test_tiny_scale_gives_viterbi_and_full_confidence(method, correlated):
    model = Toy(F=40, L=5, seed=10)
    enc = toy_batch(40, [4, 9, 1, 6, 3] * 4, max_feats=5)
    conf = estimate(model, enc, method, k=20, s=1e-12, correlated=correlated)
    E = emissions(enc.feat_ids, enc.tok_offsets, model.W)
    assert np.array_equal(conf.labels, viterbi_batch(E, enc.sent_offsets, model.A))
    assert np.all(conf.confidence == 1.0)
    assert np.all(conf.entropy == 0.0)


@pytest.mark.parametrize("method", ["kd-pc", "kd-fixed"])
def test_huge_scale_gives_near_chance_agreement(method):
    L = 4
    model = Toy(F=50, L=L, seed=11)
    enc = toy_batch(50, [8] * 60, max_feats=5)
    conf = estimate(model, enc, method, k=50, s=1e8)
    assert conf.confidence.mean() == pytest.approx(1 / L, abs=0.03)
    assert conf.entropy.mean() > 0.9 * np.log(L)


def test_same_seed_same_draws_other_seed_other_draws():
    model = Toy(F=40, L=4, seed=12)
    enc = toy_batch(40, [5, 7, 3] * 5)
    a = estimate(model, enc, "kd-pc", k=30, s=0.5, seed=1)
    b = estimate(model, enc, "kd-pc", k=30, s=0.5, seed=1)
    c = estimate(model, enc, "kd-pc", k=30, s=0.5, seed=2)
    assert np.array_equal(a.distribution, b.distribution)
    assert not np.array_equal(a.distribution, c.distribution)


def test_a_sentence_gets_the_same_draws_in_any_batch_chunk_or_thread_count():
    """Noise is keyed by global feature id: batch company, chunking and threads do not matter."""
    model = Toy(F=60, L=3, seed=13)
    enc = toy_batch(60, [4, 6, 5, 3, 7, 2, 8, 4], max_feats=6)
    W, A = model.averaged()
    E = emissions(enc.feat_ids, enc.tok_offsets, W)
    y = viterbi_batch(E, enc.sent_offsets, A)
    sampler = Sampler(W, A, model.SW, model.SA, k=24, s=0.4, seed=3)
    whole, margin = sampler.draw(enc, E, y)
    chunked = sampler.draw(enc, E, y, max_tokens=9)
    assert np.array_equal(whole, chunked[0]) and np.array_equal(margin, chunked[1])
    for b in (0, 5):
        t0, t1 = enc.sent_offsets[b], enc.sent_offsets[b + 1]
        alone = sampler.draw(enc.sentence(b), E[t0:t1], y[t0:t1])
        assert np.array_equal(alone[0], whole[t0:t1]) and np.array_equal(alone[1], margin[t0:t1])
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = sampler.draw(enc, E, y)
        assert np.array_equal(single[0], whole) and np.array_equal(single[1], margin)
    finally:
        numba.set_num_threads(before)


def test_distribution_entropy_and_confidence_are_consistent():
    model = Toy(F=30, L=3, seed=14)
    enc = toy_batch(30, [6] * 10)
    conf = estimate(model, enc, "kd-fixed", k=40, s=0.3)
    p = conf.distribution
    assert np.allclose(p.sum(1), 1.0) and np.all((p * 40) == np.round(p * 40))
    assert np.allclose(conf.confidence, p[np.arange(len(p)), conf.labels])
    logs = np.log(p, out=np.zeros_like(p), where=p > 0)
    assert np.allclose(conf.entropy, -(p * logs).sum(1))
    assert conf.confidence.min() > 0 and conf.confidence.max() == 1.0


def test_rank_key_orders_by_confidence_then_tiebreak():
    conf = np.array([1.0, 1.0, 0.5, 1.0, 0.5])
    tb = np.array([3.0, 1.0, 9.0, 1.0, 2.0])
    key = rank_key(conf, tb)
    assert list(np.argsort(key, kind="stable")) == [4, 2, 1, 3, 0]
    assert key[1] == key[3]  # equal in both keys: a true tie
    assert key.min() == 0.0 and key.max() == 1.0
    assert list(rank_key(conf)) == [1.0, 1.0, 0.0, 1.0, 0.0]


def test_rankings():
    model = Toy(F=30, L=3, seed=15)
    enc = toy_batch(30, [5] * 12)
    kw = {"k": 20, "s": 0.05}
    default = estimate(model, enc, "kd-pc", **kw)
    assert default.rank == "draw-margin" and np.array_equal(default.tiebreak, default.margin)
    assert np.array_equal(default.rank_key(), rank_key(default.draw_margin, default.margin))
    plain = estimate(model, enc, "kd-pc", rank="votes", **kw)
    delta = estimate(model, enc, "kd-pc", rank="votes+delta", **kw)
    z = estimate(model, enc, "kd-pc", rank="votes+z-delta", **kw)
    more = estimate(model, enc, "kd-pc", rank="votes+draws", **kw)
    assert plain.tiebreak is None and plain.draw_margin is None
    assert np.array_equal(delta.rank_key(), rank_key(delta.confidence, delta.margin))
    assert np.all(np.sign(z.tiebreak) == np.sign(delta.margin))
    assert more.tiebreak.shape == (enc.n_tokens,) and more.tiebreak.max() <= 1.0
    legacy = estimate(model, enc, "kd-pc", tiebreak="delta", **kw)  # the first interface
    assert legacy.rank == "votes+delta" and np.array_equal(legacy.rank_key(), delta.rank_key())
    assert np.array_equal(estimate(model, enc, "kbv", k=5).tiebreak, delta.margin)
    with pytest.raises(ValueError, match="not both"):
        estimate(model, enc, "kd-pc", rank="votes", tiebreak="none")
    with pytest.raises(ValueError, match="sampling"):
        estimate(model, enc, "kbv", rank="draw-margin")
    analytic = estimate(model, enc, "kd-pc", rank="z-delta", **kw)  # no draws: seed-free
    assert np.array_equal(analytic.tiebreak, z.tiebreak) and analytic.entropy is None
    assert np.array_equal(analytic.rank_key(), rank_key(z.tiebreak))
    s = kw["s"]
    expected = [0.5 * math.erfc(-t / math.sqrt(2 * s)) for t in z.tiebreak]  # Phi(z / sqrt(s))
    assert analytic.confidence == pytest.approx(expected)
    other = estimate(model, enc, "kd-pc", rank="z-delta", **{**kw, "seed": kw.get("seed", 0) + 1})
    assert np.array_equal(other.confidence, analytic.confidence)


def test_draw_margin_tends_to_delta_as_scale_vanishes():
    model = Toy(F=40, L=4, seed=16)
    enc = toy_batch(40, [6] * 10)
    conf = estimate(model, enc, "kd-pc", k=10, s=1e-14, dtype=np.float64)
    assert np.allclose(conf.draw_margin, conf.margin, rtol=1e-6, atol=1e-6)


def test_invalid_requests_are_refused():
    model = Toy(covariance=False)
    enc = toy_batch(12, [3])
    with pytest.raises(ValueError, match="kd-fixed"):
        estimate(model, enc, "kd-pc")
    with pytest.raises(ValueError, match="unknown method"):
        estimate(model, enc, "crf")
    with pytest.raises(ValueError, match="s must be"):
        estimate(model, enc, "kd-fixed", s=-1.0)
    with pytest.raises(ValueError, match="k must be"):
        estimate(model, enc, "kbv", k=0)


def test_empty_batch():
    conf = estimate(Toy(), toy_batch(12, []), "kd-fixed", k=5, s=0.1)
    assert isinstance(conf, Confidence) and conf.n_tokens == 0 and conf.n_sentences == 0


@pytest.mark.parametrize("k", [1, 7, 50])
def test_vote_entropy_equals_the_entropy_of_the_vote_shares(k):
    rng = np.random.default_rng(k)
    L = 5
    counts = np.zeros((300, L), dtype=np.int32)
    for row in counts:  # unanimous, two-way and spread rows, each summing to k
        spread = rng.integers(1, L + 1)
        np.add.at(row, rng.integers(0, spread, size=k), 1)
    by_hand = []
    for row in counts / k:
        by_hand.append(-sum(p * math.log(p) for p in row if p > 0))
    got = vote_entropy(counts, k)
    assert np.allclose(got, by_hand, rtol=0, atol=1e-12)
    assert np.all(got[counts.max(axis=1) == k] == 0.0)
