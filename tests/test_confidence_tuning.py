"""The counter-based Gaussian generator and the tuning search, against known distributions and
objectives with a known optimum; and tune() end to end on a small learned model."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cwal.confidence import draw_signal, estimate, fit_map, search_scale, tune
from cwal.confidence._random import scaled_normals, stream
from cwal.confidence.tuning import evaluate_point, gold_ids
from cwal.io.sentence import Sentence
from cwal.learners import make


def test_generator_is_standard_normal():
    z = scaled_normals(stream(0, 1), np.arange(4000), np.ones((4000, 5)), 50, np.float64).ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert z.mean() == pytest.approx(0.0, abs=0.005) and z.var() == pytest.approx(1.0, abs=0.01)
    # the tail beyond the ziggurat's base layer (R = 3.654) and the wedges are sampled too
    for cut in (2.0, 3.0, 3.654, 4.0):
        want = 2 * stats.norm.sf(cut) * z.size
        assert abs((np.abs(z) > cut).sum() - want) < 5 * np.sqrt(want) + 2


def test_generator_is_a_function_of_seed_and_key():
    scale = np.ones((3, 2))
    a = scaled_normals(stream(7, 1), np.array([5, 9, 2]), scale, 4)
    b = scaled_normals(stream(7, 1), np.array([2, 5]), scale[:2], 4)
    assert np.array_equal(a[0], b[1]) and np.array_equal(a[2], b[0])
    assert not np.array_equal(a, scaled_normals(stream(8, 1), np.array([5, 9, 2]), scale, 4))
    assert not np.array_equal(a, scaled_normals(stream(7, 2), np.array([5, 9, 2]), scale, 4))
    assert np.all(scaled_normals(stream(7, 1), np.array([5]), np.zeros((1, 2)), 4) == 0.0)


def test_search_finds_an_optimum_below_the_grid():
    seen = []

    def ap(s, k):
        seen.append(s)
        return -((np.log10(s) + 4.3) ** 2)

    s, k, interior = search_scale(ap, s_grid=np.logspace(-2, 0, 5), k_grid=[50])
    assert interior and k == 50
    assert np.log10(s) == pytest.approx(-4.3, abs=0.15)
    assert min(seen) < s < max(seen)


def test_search_minimises_and_picks_k_and_reports_an_edge():
    def rmse(s, k):
        return (np.log10(s) - 1.0) ** 2 + (0 if k == 20 else 0.5)

    s, k, interior = search_scale(rmse, s_grid=[0.01, 0.1, 1.0], k_grid=[10, 20], maximize=False)
    assert k == 20 and np.log10(s) == pytest.approx(1.0, abs=0.2) and interior
    s, _, interior = search_scale(lambda s, k: s, s_grid=[0.1, 1.0], max_expansions=2)
    assert not interior and s == pytest.approx(100.0)  # two steps of x10 past 1.0


def test_search_takes_the_largest_scale_of_a_flat_optimum():
    """AP stops changing once every token is at confidence 1: s must not slide towards 0."""
    s, _, interior = search_scale(lambda s, k: -max(0.0, np.log10(s) + 2), np.logspace(-4, 0, 9))
    assert interior and s == pytest.approx(0.01)


def _corpus(n: int, seed: int) -> list[Sentence]:
    """Synthetic tagging: words ending in 'a' are A, in 'b' are B, else O, with noise words."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}{c}" for i in range(30) for c in "abc"]
    out = []
    for _ in range(n):
        toks = list(rng.choice(words, size=rng.integers(3, 9)))
        tags = ["A" if t.endswith("a") else "B" if t.endswith("b") else "O" for t in toks]
        flip = rng.random(len(tags)) < 0.1
        tags = [("O" if t != "O" else "A") if f else t for t, f in zip(tags, flip, strict=True)]
        out.append(Sentence(toks, tags))
    return out


def test_tune_returns_an_interior_scale_and_its_table():
    model = make("cw", labels=["A", "B", "O"], template="chunk").fit(_corpus(150, 0), epochs=3)
    dev = _corpus(60, 1)
    tuned = tune(model, dev, "kd-pc", criterion="rmse", s_grid=[1e-3, 1e-2, 1e-1])
    assert tuned.interior and tuned.s > 0 and tuned.k == 50
    assert tuned.score == pytest.approx(tuned.table["rmse"].min())
    assert set(tuned.table.columns) >= {"s", "k", "ap", "rmse", "ece"}
    two = tune(model, dev, "kd-fixed", s_grid=[1e-2, 1e-1], seeds=2)
    point = two.table[two.table["s"] == two.s].iloc[0]
    each = [evaluate_point(model, model.encode(dev), gold_ids(model, dev), "kd-fixed", k=50,
                           s=two.s, seed=i) for i in (0, 1)]  # fmt: skip
    assert point["ap"] == pytest.approx(np.mean([e["ap"] for e in each]))
    kb = tune(model, dev, "kbv", k_grid=[5, 10])
    assert kb.s == 0.0 and kb.k in (5, 10) and kb.score == pytest.approx(kb.table["ap"].max())
    with pytest.raises(ValueError):
        tune(model, dev, "delta")
    with pytest.raises(ValueError):
        tune(model, dev, "kd-pc", criterion="f1")


def test_tune_searches_the_softmax_scale():
    model = make("c-spv", labels=["A", "B", "O"], template="chunk").fit(_corpus(150, 0), epochs=3)
    dev = _corpus(60, 1)
    tuned = tune(model, dev, "nbest-softmax", criterion="ece", s_grid=[0.1, 1.0, 10.0])
    assert tuned.s > 0 and tuned.k == 30
    assert tuned.score == pytest.approx(tuned.table["ece"].min())
    assert len(tuned.table) >= 3  # every grid scale was tried
    with pytest.raises(ValueError, match="maxent"):
        tune(model, dev, "maxent")


def test_fit_map_turns_the_draw_margin_into_the_accuracy_seen_at_it():
    """The map is the isotonic fit of dev correctness on the draw margin: non-decreasing in the
    margin, its mean over dev equal to dev accuracy (pool-adjacent-violators keeps the mean), and
    within each run of tokens sharing a mapped value, that value is their accuracy."""
    model = make("cw", labels=["A", "B", "O"], template="chunk").fit(_corpus(150, 0), epochs=3)
    dev = _corpus(80, 1)
    fitted = fit_map(model, dev, "kd-pc", k=20, s=0.1, seed=3)
    conf = estimate(model, model.encode(dev), "kd-pc", k=20, s=0.1, seed=3)
    signal, ok = draw_signal(conf), conf.labels == gold_ids(model, dev)
    mapped = fitted(signal)
    assert 0.0 < ok.mean() < 1.0  # the synthetic noise leaves errors to find
    assert mapped.mean() == pytest.approx(ok.mean(), abs=1e-9)
    order = np.argsort(signal, kind="stable")
    assert np.all(np.diff(mapped[order]) >= -1e-12)
    for value in np.unique(mapped):
        assert ok[mapped == value].mean() == pytest.approx(value, abs=1e-9)
    # a different draw seed gives a different signal: the map is for the settings it was fit at
    assert not np.array_equal(signal, draw_signal(estimate(model, model.encode(dev), "kd-pc",
                                                           k=20, s=0.1, seed=4)))  # fmt: skip
    with pytest.raises(ValueError, match="sampling"):
        fit_map(model, dev, "delta")
    with pytest.raises(ValueError, match="draw margin"):
        draw_signal(estimate(model, model.encode(dev), "kd-pc", k=20, s=0.1, rank="votes"))
