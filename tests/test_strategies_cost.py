"""Cost-aware strategies against their definitions computed from ``estimate`` by hand, and the
diversity wrapper against hand-built duplicates and neighbours."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from cwal.confidence import estimate
from cwal.confidence.rows import restrict
from cwal.io.sentence import Sentence
from cwal.learners import make
from cwal.simulate import SimConfig
from cwal.strategies import Diverse, is_strategy, make_strategy
from cwal.strategies.cost import similarity_density
from cwal.strategies.diversity import diversify, feature_vectors
from tests.test_strategies import corpus

K, S = 20, 0.05


@pytest.fixture(scope="module")
def model():
    return make("cw", labels=["A", "B", "O"], template="chunk").fit(corpus(120, 0), epochs=2)


def snapshot_estimate(model, sentences, seed, rank="z-delta"):
    """KD-PC on the batch's row snapshot, where every strategy draws (cwal.confidence.rows):
    the analytic share (``z-delta``, the per-word strategies' key) or the draws' votes."""
    snap, enc = restrict(model, model.encode(sentences))
    return estimate(snap, enc, "kd-pc", k=K, s=S, seed=seed, rank=rank)


@pytest.fixture(scope="module")
def pool_conf(model):
    pool = corpus(15, 3, lo=1, hi=12)
    conf, votes = snapshot_estimate(model, pool, 9), snapshot_estimate(model, pool, 9, "votes")
    per = [
        (conf.confidence[a:b], votes.entropy[a:b], votes.confidence[a:b])
        for a, b in zip(conf.sent_offsets[:-1], conf.sent_offsets[1:], strict=True)
    ]
    return pool, per


def test_errors_per_word_is_the_mean_expected_correction(model, pool_conf):
    pool, per = pool_conf
    got = make_strategy("errors-per-word", k=K, s=S).score(model, pool, 9)
    want = [-sum(1.0 - c for c in conf) / len(conf) for conf, _, _ in per]
    assert np.allclose(got, want)
    assert np.any(np.array(want) < 0)  # the draws disagree somewhere: not a constant


def test_least_confident_per_word_divides_the_doubt_by_the_length(model, pool_conf):
    pool, per = pool_conf
    got = make_strategy("least-confident-per-word", k=K, s=S).score(model, pool, 9)
    assert np.allclose(got, [-(1.0 - min(conf)) / len(conf) for _, _, conf in per])


def test_total_entropy_sums_the_token_entropies(model, pool_conf):
    pool, per = pool_conf
    got = make_strategy("total-entropy", k=K, s=S).score(model, pool, 9)
    assert np.allclose(got, [-sum(ent) for _, ent, _ in per])


def test_per_word_divides_by_the_words_read_and_total_does_not(model):
    """A sentence and its fourfold repetition: per word, each one's doubt over its own length."""
    short = Sentence(["w1a", "w2b", "w3c"])
    per_word = make_strategy("errors-per-word", k=K, s=S)
    total = make_strategy("total-entropy", k=K, s=S)
    long = Sentence(short.tokens * 4)
    pw, te = per_word.score(model, [short, long], 2), total.score(model, [short, long], 2)
    conf = snapshot_estimate(model, [short, long], 2)
    doubt = [np.sum(1 - c) for c in conf.per_sentence()]
    assert pw[0] == pytest.approx(-doubt[0] / 3) and pw[1] == pytest.approx(-doubt[1] / 12)
    votes = snapshot_estimate(model, [short, long], 2, "votes")
    entropy = [np.sum(e) for e in votes.per_sentence(votes.entropy)]
    assert te[0] == pytest.approx(-entropy[0]) and te[1] == pytest.approx(-entropy[1])


def test_diversify_spreads_duplicates_and_neighbours_over_blocks():
    vectors = sp.csr_matrix(np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]]))
    ranked = np.array([0, 1, 2, 3])
    # 0 and 1 are identical: 1 waits for the second block
    assert diversify(ranked, vectors, [0, 10, 20, 30], 2, 0.5, 0).tolist() == [0, 2, 1, 3]
    # ids 0 and 1 are neighbours (same document) even with different vectors
    other = sp.identity(4, format="csr")
    assert diversify(ranked, other, [0, 1, 5, 9], 2, 0.5, 1).tolist() == [0, 2, 1, 3]
    assert diversify(ranked, other, [0, 1, 5, 9], 2, 0.5, 0).tolist() == [0, 1, 2, 3]
    # past the horizon the order is kept
    assert diversify(ranked, vectors, [0, 10, 20, 30], 2, 0.5, 0, horizon=2).tolist() == [
        0,
        1,
        2,
        3,
    ]


def test_feature_vectors_cosine_is_one_for_copies_and_low_for_strangers(model):
    a, b = Sentence(["w1a", "w2b", "w3c"]), Sentence(["w9c", "w8a", "w7b", "w6a"])
    v = feature_vectors(model, [a, a, b])
    sims = (v @ v.T).toarray()
    assert sims[0, 1] == pytest.approx(1.0)
    assert sims[0, 2] < 0.5
    assert np.allclose(np.diag(sims), 1.0)


def test_diverse_wrapper_never_batches_two_copies(model):
    base = corpus(10, 11, lo=3, hi=9)
    pool = [s for s in base for _ in range(3)]  # every sentence three times, side by side
    ids = [3 * i + j * 100 for i in range(10) for j in range(3)]  # copies are not neighbours
    plain = make_strategy("random", candidates=30, seed=0)
    diverse = make_strategy("random+diverse", candidates=30, seed=0, neighbours=0)
    assert isinstance(diverse, Diverse) and str(diverse) == "random+diverse"
    dup_batches = 0
    for _ in range(5):
        chosen = diverse.select(model, pool, 6, ids=ids)
        texts = [tuple(pool[ids.index(i)].tokens) for i in chosen]
        assert len(set(texts)) == 6
        same = plain.select(model, pool, 6, ids=ids)
        dup_batches += len({tuple(pool[ids.index(i)].tokens) for i in same}) < 6
        assert diverse.candidates_ == plain.candidates_  # same seed, same candidates
    assert dup_batches > 0  # without the wrapper copies do land in one batch


def test_names_and_config_accept_the_diverse_form():
    assert is_strategy("kd-pc+diverse") and is_strategy("errors-per-word")
    assert not is_strategy("nothing+diverse")
    config = SimConfig(strategies=("errors-per-word+diverse", "random"), seeds=(0,))
    assert ("errors-per-word+diverse", 0) in config.cells()
    with pytest.raises(ValueError, match="threshold"):
        make_strategy("random+diverse", threshold=0)
    with pytest.raises(ValueError, match="unknown strategies"):
        SimConfig(strategies=("nothing+diverse",))


def test_density_is_the_mean_cosine_to_the_other_candidates(model, pool_conf):
    pool, per = pool_conf
    pool = [*pool, pool[0], pool[0]]  # two more copies of the first: it is the densest
    dense = feature_vectors(model, pool).toarray()
    cos = dense @ dense.T
    want = [(cos[i].sum() - cos[i, i]) / (len(pool) - 1) for i in range(len(pool))]
    got = similarity_density(model, pool)
    assert np.allclose(got, want) and np.argmax(got) in (0, len(pool) - 2, len(pool) - 1)
    base = make_strategy("errors-per-word", k=K, s=S).score(model, pool, 9)
    for strategy in (make_strategy("dense-errors-per-word", k=K, s=S),
                     make_strategy("errors-per-word", k=K, s=S, density=2.0)):  # fmt: skip
        assert np.allclose(strategy.score(model, pool, 9), base * got**strategy.density)
    with pytest.raises(ValueError, match="density"):
        make_strategy("errors-per-word", density=-1)


def test_kd_takes_another_token_key_by_name(model, pool_conf):
    """``rank`` swaps KD's token key (bench/active_learning.py --rank): the vote share here."""
    pool, _ = pool_conf
    conf = snapshot_estimate(model, pool, 9, "votes")
    want = [conf.rank_key()[a:b].min() for a, b in itertools.pairwise(conf.sent_offsets)]
    got = make_strategy("kd-pc", k=K, s=S, rank="votes").score(model, pool, 9)
    assert np.allclose(got, want)
    analytic = make_strategy("kd-pc", k=K, s=S).score(model, pool, 9)
    assert not np.allclose(analytic, got)  # the default key is another one
    with pytest.raises(ValueError, match="unknown rank"):
        make_strategy("kd-fixed", rank="loudest")
