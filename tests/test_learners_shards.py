"""Shard-parallel training and model combination (cwal.learners.shards)."""

from __future__ import annotations

import copy
import itertools
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from test_learners import token_accuracy, toy_corpus

from cwal.features import FeatureIndex, ner_template
from cwal.io import Sentence
from cwal.learners import SequenceLearner, make
from cwal.learners import shards as shards_mod
from cwal.learners.shards import _encode_part, _merge_index, _remap, combine, fit_shards


def hand_pair() -> tuple[SequenceLearner, SequenceLearner]:
    """Two CW models over one 2-feature index and labels (A, B), arrays set by hand."""
    one = make("cw", labels=["A", "B"], template="ner")
    one.features_ = FeatureIndex("ner", ner_template(["x"], {})[0][:2])  # two features of "x"
    one._grow(2, exact=True)
    two = copy.deepcopy(one)
    one.W_[:] = [[1, 2], [0, 4]]
    one.SW_[:] = [[1, 0.5], [0.25, 1]]
    one.count_ = 1.0  # U = 0: averaged = W
    two.W_[:] = [[3, 0], [2, -4]]
    two.SW_[:] = [[1, 0.5], [0.75, 0.25]]
    two.UW_[:] = [[2, 0], [0, 0]]
    two.count_ = 2.0  # averaged W = W - U / 2 = [[2, 0], [2, -4]]
    two.A_[:] = 2.0
    return one, two


def test_kl_and_average_rules_by_hand() -> None:
    one, two = hand_pair()
    # KL: precisions [[1, 2], [4, 1]] and [[1, 2], [4/3, 4]], summed [[2, 4], [16/3, 5]].
    kl = combine([one, two], "kl")
    W, A = kl.averaged()
    np.testing.assert_allclose(W, [[1.5, 1.0], [0.5, -2.4]])  # precision-weighted averaged means
    np.testing.assert_allclose(kl.W_[:2], [[2.0, 1.0], [0.5, -2.4]])  # ... and raw means
    np.testing.assert_allclose(kl.SW_[:2], [[0.5, 0.25], [3 / 16, 0.2]])  # 1 / summed precision
    np.testing.assert_allclose(A, 1.0)
    np.testing.assert_allclose(kl.SA_, 0.5)
    assert kl.count_ == 3.0
    # average (L2): plain means of the averaged means, raw means and variances
    avg = combine([one, two], "average")
    W, A = avg.averaged()
    np.testing.assert_allclose(W, [[1.5, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(avg.W_[:2], [[2.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(avg.SW_[:2], [[1.0, 0.5], [0.5, 0.625]])
    np.testing.assert_allclose(A, 1.0)
    np.testing.assert_allclose(avg.SA_, 1.0)
    # product: the start (mean 0, variance 1: precision 1) divided out once,
    # precision [[1, 3], [13/3, 4]], means (sum_c p_c mu_c - 1 * 0) / precision
    prod = combine([one, two], "product")
    W, A = prod.averaged()
    np.testing.assert_allclose(W, [[3.0, 4 / 3], [8 / 13, -3.0]])
    np.testing.assert_allclose(prod.W_[:2], [[4.0, 4 / 3], [8 / 13, -3.0]])
    np.testing.assert_allclose(prod.SW_[:2], [[1.0, 1 / 3], [3 / 13, 0.25]])
    np.testing.assert_allclose(A, 2.0)
    np.testing.assert_allclose(prod.SA_, 1.0)
    assert prod.count_ == 3.0
    for model in (kl, avg, prod):  # the combined model saves and loads with the same average
        back = SequenceLearner.from_bytes(model.to_bytes())
        np.testing.assert_allclose(back.averaged()[0], model.averaged()[0], rtol=1e-15)
    np.testing.assert_array_equal(one.W_, [[1, 2], [0, 4]])  # inputs untouched


def test_updates_after_combining_average_on_top_of_the_combined_mean() -> None:
    one, two = hand_pair()
    model = combine([one, two], "kl")
    before = model.averaged()[0].copy()
    model.learn_one(["x"], ["B"])  # updates the two rows (and adds the other features of "x")
    after = model.W_[:2]
    assert not np.allclose(after, before)
    np.testing.assert_allclose(model.averaged()[0][:2], (3 * before + after) / 4, atol=1e-12)


@pytest.mark.usefixtures("float64_state")
def test_kl_of_identical_models_keeps_the_mean() -> None:
    data, test = toy_corpus(40, 3), toy_corpus(20, 4)
    model = make("cw").fit(data, epochs=2, seed=1)
    both = combine([model, copy.deepcopy(model)], "kl", start=make("cw"))
    F = model.n_features_
    np.testing.assert_allclose(both.averaged()[0], model.averaged()[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(both.averaged()[1], model.averaged()[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(both.W_[:F], model.W_[:F], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(both.SW_[:F], model.SW_[:F] / 2)  # the paper's summed precision
    assert both.predict(test) == model.predict(test)
    assert both.count_ == 2 * model.count_


@pytest.mark.usefixtures("float64_state")
def test_product_keeps_what_only_one_copy_learned() -> None:
    trained = make("cw").fit(toy_corpus(30, 9), epochs=2, seed=0)
    untouched = copy.deepcopy(trained)  # the same index, still at the start: mean 0, variance 1
    F = untouched.n_features_
    untouched.W_[:], untouched.UW_[:], untouched.A_[:], untouched.UA_[:] = 0.0, 0.0, 0.0, 0.0
    untouched.SW_[:], untouched.SA_[:], untouched.count_ = 1.0, 1.0, 0.0
    both = combine([trained, untouched], "product")
    np.testing.assert_allclose(both.averaged()[0], trained.averaged()[0], atol=1e-12)
    np.testing.assert_allclose(both.SW_[:F], trained.SW_[:F], rtol=1e-12)
    np.testing.assert_allclose(both.W_[:F], trained.W_[:F], atol=1e-12)
    kl = combine([trained, untouched], "kl")  # kl shrinks towards the untouched copy's 0
    assert np.abs(kl.averaged()[0]).sum() < np.abs(trained.averaged()[0]).sum()


def test_learners_without_covariance_average_and_mismatches_raise() -> None:
    a = make("perceptron").fit(toy_corpus(30, 5), epochs=1, seed=0)
    b = make("perceptron").fit(toy_corpus(30, 5), epochs=1, seed=1)
    avg = combine([a, b], "average")
    for rule in ("kl", "product"):
        np.testing.assert_array_equal(combine([a, b], rule).averaged()[0], avg.averaged()[0])
        np.testing.assert_array_equal(combine([a, b], rule).SW_, avg.SW_)
    with pytest.raises(ValueError, match="rule"):
        combine([a, b], "median")
    with pytest.raises(ValueError, match="one index"):
        combine([a, make("perceptron").fit(toy_corpus(5, 6), epochs=1)])
    with pytest.raises(ValueError):
        fit_shards(make("cw"), toy_corpus(5, 6), shards=0)


@pytest.mark.parametrize("min_count", [1, 2])
def test_merged_index_equals_one_index_over_all_shards(min_count: int) -> None:
    data = toy_corpus(50, 7) + [Sentence(["rare", "words"], ["O", "O"], {"pos": ["X", "Y"]})]
    whole = FeatureIndex("chunk")
    whole.encode_pruned(data, min_count) if min_count > 1 else whole.encode(data)
    halves = [data[0::2], data[1::2]]
    parts = [_encode_part("chunk", h) for h in halves]
    for start in (FeatureIndex("chunk"), whole):  # fresh, then an existing index
        merged, added, maps = _merge_index(start, [p[:2] for p in parts], min_count)
        assert set(merged.strings) == set(whole.strings)
        assert merged.frozen == (min_count > 1)
        assert len(added) == (0 if start is whole else len(whole))
        strings = merged.strings
        for h, p, m in zip(halves, parts, maps, strict=True):
            ids, tok, _ = _remap(*p[2:], m)
            mine = [sorted(strings[j] for j in ids[a:b]) for a, b in itertools.pairwise(tok)]
            ref_enc = whole.encode(h, grow=False)
            ref = [
                sorted(whole.strings[j] for j in ref_enc.feat_ids[a:b])
                for a, b in itertools.pairwise(ref_enc.tok_offsets)
            ]
            assert mine == ref
    frozen = FeatureIndex("chunk", whole.strings[:10])
    frozen.frozen = True
    merged, added, maps = _merge_index(frozen, [p[:2] for p in parts], min_count)
    assert merged.strings == whole.strings[:10] and added == [] and merged.frozen
    assert all(m.max() < 10 for m in maps) and any((m == -1).any() for m in maps)


@pytest.mark.parametrize(("name", "rule"), [("cw", "product"), ("arow", "kl"), ("cw-kc", "average"),
                                           ("perceptron", "product")])  # fmt: skip
def test_shards_of_a_separable_problem_predict_it(name: str, rule: str) -> None:
    train, test = toy_corpus(80, 0), toy_corpus(30, 1)
    seen = []
    model = make(name, encoding="bioes", min_count=2)
    out = fit_shards(model, train, epochs=4, seed=0, shards=2, rule=rule, dev=test,
                     progress=lambda *a: seen.append(a))  # fmt: skip
    assert out is model and token_accuracy(model, test) == 1.0
    assert model.features_.frozen and model.count_ == 4 * len(train)
    assert [(e, n) for e, n, _ in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert seen[-1][2]["dev_f1"] == 1.0 and "dev_f1" not in seen[0][2]
    back = SequenceLearner.from_bytes(model.to_bytes())
    assert back.predict(test) == model.predict(test)


def test_sharded_fit_is_seeded_and_one_shard_is_a_plain_fit() -> None:
    data = toy_corpus(60, 8)
    a, b, c = (fit_shards(make("cw"), data, epochs=2, seed=s, shards=2) for s in (3, 3, 4))
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.SW_, b.SW_)
    np.testing.assert_array_equal(a.averaged()[0], b.averaged()[0])
    assert a.features_.strings == b.features_.strings
    assert not np.array_equal(a.averaged()[1], c.averaged()[1])  # another split
    plain = make("cw").fit(data, epochs=2, seed=3)
    for one in (fit_shards(make("cw"), data, 2, 3, shards=1),):
        for key in ("W_", "A_", "SW_", "SA_", "UW_", "UA_"):
            np.testing.assert_array_equal(getattr(one, key), getattr(plain, key))


def test_a_learner_with_its_own_batch_fit_refuses_shards() -> None:
    class Batch(SequenceLearner):
        name = "batch"

        def fit(self, sentences, epochs=10, seed=0, dev=None, progress=None):
            return self

    with pytest.raises(ValueError, match="cannot train on shards"):
        fit_shards(Batch(), toy_corpus(10, 0), shards=2)


KEYS = ("W_", "A_", "SW_", "SA_", "UW_", "UA_")


def assert_same_model(one: SequenceLearner, two: SequenceLearner) -> None:
    assert one.features_.strings == two.features_.strings and one.count_ == two.count_
    for key in KEYS:
        np.testing.assert_array_equal(getattr(one, key), getattr(two, key))


def test_loky_workers_give_the_serial_model_and_never_rerun_main(
    monkeypatch, tmp_path: Path
) -> None:
    """Two loky processes and the shards trained in turn here give one model, bit for bit; the
    workers start while ``__main__`` is a script (as under Streamlit) and must not run it."""
    marker = tmp_path / "ran"
    script = tmp_path / "page.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", page)
    monkeypatch.setattr(shards_mod, "_POOLS", {})  # a new pool: its workers start under the page
    data = toy_corpus(60, 5)
    serial = fit_shards(make("cw", min_count=2), data, 3, 7, shards=3, workers=1)
    try:
        pooled = fit_shards(make("cw", min_count=2), data, 3, 7, shards=3, workers=2)
    finally:
        for pool in shards_mod._POOLS.values():
            pool.shutdown(wait=True)
    assert_same_model(serial, pooled)
    assert not marker.exists()


@pytest.mark.slow
def test_a_dask_cluster_gives_the_serial_model() -> None:
    distributed = pytest.importorskip("dask.distributed")
    data = toy_corpus(50, 6)
    serial = fit_shards(make("arow"), data, 2, 1, shards=2, workers=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:  # fmt: skip
        on_dask = fit_shards(make("arow"), data, 2, 1, shards=2, cluster=cluster.scheduler_address)
    assert_same_model(serial, on_dask)


def test_shards_learn_word_clusters_once_and_keep_document_features(tmp_path, monkeypatch) -> None:
    """With ``clusters`` and ``documents`` on, every shard encodes with the clusters learned
    from all the text and with document features: the merged index holds both kinds, the
    model keeps the clusters, and it predicts as its saved copy does."""
    from cwal.features import clusters as C

    monkeypatch.setenv("CWAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(C, "MIN_TOKENS", 500)
    rng = np.random.default_rng(2)
    names, words = [f"Name{i}" for i in range(20)], [f"word{i}" for i in range(40)]
    train = []
    for i in range(150):  # 40 common words and 20 names, each name tagged X
        toks = [*rng.choice(words, 3), str(rng.choice(names)), *rng.choice(words, 2)]
        tags = ["O"] * 3 + ["B-X"] + ["O"] * 2
        train.append(Sentence(toks, tags, {}, {"document": i // 10}))
    model = make("cw", clusters=True, documents=True)
    fit_shards(model, train, epochs=2, seed=0, shards=2, workers=1)
    strings = model.features_.strings
    assert model.features_.clusters is not None and model.features_.documents
    assert any(s.startswith("c") and "[" in s for s in strings)
    assert any(s.startswith("dcase=") for s in strings)
    back = SequenceLearner.from_bytes(model.to_bytes())
    assert back.features_.clusters is not None and back.predict(train) == model.predict(train)
