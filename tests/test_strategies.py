"""Query strategies: one contract suite run against every strategy, then each score against an
independent computation (brute-force margins, explicit feature-difference vectors)."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest

from cwal.confidence import estimate
from cwal.confidence.rows import restrict
from cwal.decode import emissions, max_marginals_batch
from cwal.errors import EmptyPoolError, ExhaustedPoolError
from cwal.io.sentence import Sentence
from cwal.learners import make
from cwal.strategies import (
    STRATEGIES,
    MinConfMargin,
    MinMargin,
    Strategy,
    make_strategy,
    register,
)

DRAW_PARAMS = {"k": 10, "s": 0.05}
DRAWS = {name for name, cls in STRATEGIES.items() if "k" in inspect.signature(cls).parameters}


def corpus(n: int, seed: int, lo: int = 2, hi: int = 9) -> list[Sentence]:
    """Words ending in 'a' are A, in 'b' are B, else O; 10% of tags flipped (so models err)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}{c}" for i in range(30) for c in "abc"]
    out = []
    for _ in range(n):
        toks = [str(t) for t in rng.choice(words, size=rng.integers(lo, hi))]
        tags = ["A" if t.endswith("a") else "B" if t.endswith("b") else "O" for t in toks]
        flip = rng.random(len(tags)) < 0.1
        out.append(
            Sentence(
                toks,
                [("O" if t != "O" else "A") if f else t for t, f in zip(tags, flip, strict=True)],
            )
        )
    return out


@pytest.fixture(scope="module")
def model():
    return make("cw", labels=["A", "B", "O"], template="chunk").fit(corpus(120, 0), epochs=2)


def build(name: str, **kw):
    return make_strategy(name, **(dict(DRAW_PARAMS) if name in DRAWS else {}), **kw)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_contract_distinct_ids_from_the_pool(name, model):
    pool = corpus(40, 1)
    ids = [f"s{i}" for i in range(40)]
    strategy = build(name, candidates=25, seed=3)
    chosen = strategy.select(model, pool, 7, ids=ids)
    assert len(chosen) == 7 and len(set(chosen)) == 7 and set(chosen) <= set(ids)
    assert set(chosen) <= set(strategy.candidates_) and len(strategy.candidates_) == 25
    assert strategy.scores_.shape == (25,)
    # the chosen are the best-scored candidates
    by_id = dict(zip(strategy.candidates_, strategy.scores_, strict=True))
    assert max(by_id[c] for c in chosen) <= min(v for c, v in by_id.items() if c not in chosen)
    assert str(strategy) == name and repr(strategy).startswith(type(strategy).__name__ + "(")
    assert "seed=3" in repr(strategy)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_contract_seeded_determinism(name, model):
    pool = corpus(60, 2)
    a, b = build(name, candidates=30, seed=5), build(name, candidates=30, seed=5)
    for _ in range(2):  # successive calls draw new candidates, identically for equal seeds
        assert a.select(model, pool, 5) == b.select(model, pool, 5)
        assert np.array_equal(a.scores_, b.scores_)
    c = build(name, candidates=30, seed=6)
    c.select(model, pool, 5)
    assert c.candidates_ != a.candidates_


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_contract_empty_and_short_pools(name, model):
    strategy = build(name)
    with pytest.raises(EmptyPoolError):
        strategy.select(model, [], 1)
    pool = corpus(4, 3)
    with pytest.raises(ExhaustedPoolError, match="only 4"):
        strategy.select(model, pool, 5)
    assert sorted(strategy.select(model, pool, 4)) == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        strategy.select(model, pool, 0)
    with pytest.raises(ValueError, match="distinct"):
        strategy.select(model, pool, 1, ids=[1, 1, 2, 3])


@pytest.mark.parametrize("name", sorted(set(STRATEGIES) - {"random"}))
def test_contract_ties_go_to_the_shorter_sentence(name):
    """An untrained model scores every labeling 0 (and s = 0 draws no noise): all sentences tie,
    so the shortest come first, in order of length."""
    blank = make("cw", labels=["A", "B", "O"], template="chunk")
    params = {"k": 5, "s": 0.0} if name in DRAWS else {}
    if name in ("kbv", "wkbv"):  # equal-scored labelings rank arbitrarily: keep only the best
        params = {"k": 1}
    strategy = make_strategy(name, **params, seed=1)
    lengths = [5, 3, 7, 1, 4, 2, 6]
    pool = [Sentence([f"w{i}" for i in range(n)]) for n in lengths]
    chosen = strategy.select(blank, pool, 4)
    assert [lengths[i] for i in chosen] == [1, 2, 3, 4]
    assert np.all(strategy.scores_ == strategy.scores_[0])


def test_random_is_uniform_over_the_pool(model):
    pool = corpus(10, 4)
    strategy = make_strategy("random", seed=0)
    hits = np.zeros(10)
    for _ in range(300):
        hits[strategy.select(model, pool, 2)] += 1
    assert hits.min() > 40 and hits.max() < 80  # expectation 60 each


def features_of(model, sentence: Sentence, labels) -> dict:
    """Phi(x, y) as a sparse dict over (kind, feature-or-previous, label), built from the rules."""
    enc = model.encode([sentence])
    L = len(model.labels_)
    phi: dict = {}
    for p, y in enumerate(labels):
        for f in enc.feat_ids[enc.tok_offsets[p] : enc.tok_offsets[p + 1]]:
            phi[("w", int(f), y)] = phi.get(("w", int(f), y), 0) + 1
        prev = L if p == 0 else labels[p - 1]
        phi[("a", prev, y)] = phi.get(("a", prev, y), 0) + 1
    phi[("a", L + 1, labels[-1])] = phi.get(("a", L + 1, labels[-1]), 0) + 1
    return phi


def score_of(model, phi: dict) -> float:
    W, A = model.averaged()
    return sum(c * (W[i, y] if kind == "w" else A[i, y]) for (kind, i, y), c in phi.items())


def test_min_margin_and_conf_margin_equal_brute_force(model):
    pool = corpus(8, 5, lo=1, hi=6)
    SW, SA = model.covariance()
    m_scores = MinMargin().score(model, pool, 0)
    c_scores = MinConfMargin().score(model, pool, 0)
    for b, sent in enumerate(pool):
        n = len(sent)
        ranked = sorted(
            (score_of(model, features_of(model, sent, y)), y)
            for y in itertools.product(range(3), repeat=n)
        )
        (s2, y2), (s1, y1) = ranked[-2], ranked[-1]
        assert m_scores[b] == pytest.approx((s1 - s2) / n)
        g = features_of(model, sent, y1)
        for key, c in features_of(model, sent, y2).items():
            g[key] = g.get(key, 0) - c
        gsg = sum(c * c * (SW[i, y] if kind == "w" else SA[i, y]) for (kind, i, y), c in g.items())
        assert c_scores[b] == pytest.approx((s1 - s2) / np.sqrt(gsg) / n)


def test_kd_scores_a_sentence_by_its_least_confident_token(model):
    """KD-PC's key: Delta over its noise deviation (z-delta, the analytic expected vote share),
    computed by hand here; a sentence's score is its least confident token's, and two draw
    seeds rank alike."""
    pool = corpus(12, 6)
    strategy = make_strategy("kd-pc", k=20, s=0.05)
    scores = strategy.score(model, pool, seed=11)
    assert np.array_equal(scores, strategy.score(model, pool, seed=12))  # no draw noise
    enc = model.encode(pool)
    W, A = model.averaged()
    SW, _ = model.covariance()
    least = []
    for b in range(len(pool)):
        one = enc.sentence(b)
        labels = model.predict_ids(one)
        mm = max_marginals_batch(emissions(one.feat_ids, one.tok_offsets, W), one.sent_offsets, A)
        z = []
        for p in range(len(labels)):
            others = [mm[p, u] for u in range(mm.shape[1]) if u != labels[p]]
            runner = int(
                np.argmax([mm[p, u] if u != labels[p] else -np.inf for u in range(mm.shape[1])])
            )
            feats = one.feat_ids[one.tok_offsets[p] : one.tok_offsets[p + 1]]
            var = sum(SW[f, labels[p]] + SW[f, runner] for f in feats)
            z.append((mm[p, labels[p]] - max(others)) / np.sqrt(var))
        least.append(min(z))
    by_z = sorted(range(len(pool)), key=lambda b: least[b])
    assert sorted(range(len(pool)), key=lambda b: scores[b]) == by_z


def test_entropy_strategies_prefer_spread_distributions(model):
    pool = corpus(12, 7)
    snap, enc = restrict(model, model.encode(pool))  # the draws are made on the batch's rows
    conf = estimate(snap, enc, "kd-pc", k=10, s=0.05, seed=4)
    off = conf.sent_offsets
    hi = [conf.entropy[a:b].max() for a, b in zip(off[:-1], off[1:], strict=True)]
    mean = [conf.entropy[a:b].mean() for a, b in zip(off[:-1], off[1:], strict=True)]
    assert np.allclose(
        make_strategy("max-entropy", **DRAW_PARAMS).score(model, pool, 4), -np.array(hi)
    )
    assert np.allclose(
        make_strategy("mean-entropy", **DRAW_PARAMS).score(model, pool, 4), -np.array(mean)
    )


def test_kd_fixed_works_without_covariance_and_kd_pc_refuses(model):
    pa = make("pa", labels=["A", "B", "O"], template="chunk").fit(corpus(60, 8), epochs=1)
    pool = corpus(10, 9)
    assert len(make_strategy("kd-fixed", **DRAW_PARAMS).select(pa, pool, 3)) == 3
    assert len(make_strategy("max-entropy", **DRAW_PARAMS).select(pa, pool, 3)) == 3
    assert len(MinConfMargin().select(pa, pool, 3)) == 3
    with pytest.raises(ValueError, match="covariance"):
        make_strategy("kd-pc", **DRAW_PARAMS).select(pa, pool, 3)


def test_registry_and_base():
    with pytest.raises(ValueError, match="unknown strategy"):
        make_strategy("uncertainty")
    with pytest.raises(ValueError):
        make_strategy("random", candidates=0)
    assert all(issubclass(cls, Strategy) for cls in STRATEGIES.values())


def test_register_adds_a_strategy_and_refuses_a_taken_name():
    class Longest(Strategy):
        name = "test-longest"

        def score(self, model, sentences, seed):
            return -np.array([len(s) for s in sentences], dtype=float)

    try:
        assert register(Longest) is Longest and STRATEGIES["test-longest"] is Longest
        pool = [Sentence(["w"] * n) for n in (2, 5, 3)]
        assert make_strategy("test-longest").select(None, pool, 2) == [1, 2]

        class Clash(Longest):
            name = "kd-pc"

        with pytest.raises(ValueError, match="taken"):
            register(Clash)
    finally:
        STRATEGIES.pop("test-longest", None)
