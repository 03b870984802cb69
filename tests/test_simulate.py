"""The simulation engine: protocol, evaluation, caching and resumption on tiny synthetic corpora."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cwal import corpora
from cwal.io import Sentence
from cwal.learners import make
from cwal.measures import chunk_f1
from cwal.simulate import (
    MemorySink,
    SimConfig,
    SimData,
    run_cell,
    run_reference,
    strategies_for,
)
from cwal.simulate.cache import CachedModel
from cwal.simulate.data import dev_split, load_task
from cwal.simulate.engine import _refit_seed

WORDS = {
    "DT": ["the", "a", "this", "every"],
    "JJ": ["big", "red", "old", "new", "small", "green"],
    "NN": ["dog", "cat", "car", "house", "tree", "bird", "city", "river", "book", "road"],
    "VBZ": ["sees", "likes", "finds", "takes"],
    "IN": ["on", "in", "with", "near"],
}

TIMES = ["seconds", "cpu_seconds"]  # differ between runs


def phrase(rng: np.random.Generator, tokens: list, pos: list, tags: list) -> None:
    words = ["DT"] + ["JJ"] * int(rng.integers(0, 3)) + ["NN"]
    for i, p in enumerate(words):
        tokens.append(str(rng.choice(WORDS[p])) + ("" if rng.random() < 0.8 else "s"))
        pos.append(p)
        tags.append("B-NP" if i == 0 else "I-NP")


def sentences(n: int, seed: int) -> list[Sentence]:
    """Synthetic NP chunking: NP verb NP [prep NP], with a POS column."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        tokens: list[str] = []
        pos: list[str] = []
        tags: list[str] = []
        phrase(rng, tokens, pos, tags)
        for head in ["VBZ"] + (["IN"] if rng.random() < 0.5 else []):
            tokens.append(str(rng.choice(WORDS[head])))
            pos.append(head)
            tags.append("O")
            phrase(rng, tokens, pos, tags)
        out.append(Sentence(tokens, tags, {"pos": pos}))
    return out


@pytest.fixture(scope="module")
def data() -> SimData:
    return SimData(sentences(300, 1), sentences(60, 2), "chunk", "synthetic")


SMALL = dict(initial=20, batch=5, candidates=40, eval_every=30, budget=110, seeds=(0,))


def test_protocol_points_and_labeled_words(data: SimData) -> None:
    config = SimConfig(strategies=("min-margin", "random"), **SMALL)
    sink = MemorySink()
    for strategy in config.strategies:
        assert run_cell(data, config, strategy, 0, sink) == "done"
    curves = sink.curves()
    for strategy in config.strategies:
        c = curves[curves["strategy"] == strategy]
        # 20 initial, then steps of 5; a point at each multiple of 30 crossed and at the budget
        assert c["n_sentences"].tolist() == [20, 30, 60, 90, 110]
        assert c["step"].tolist() == [0, 2, 8, 14, 18]
        state = sink.cells[strategy, 0]["state"]
        labeled = state["labeled"]
        assert len(labeled) == len(set(labeled)) == 110
        assert c["n_tokens"].iloc[-1] == sum(len(data.pool[i]) for i in labeled)
        assert sink.cells[strategy, 0]["status"] == "done"
        json.dumps(state)  # the resume state is plain JSON
    first = [sink.cells[s, 0]["state"]["labeled"][:20] for s in config.strategies]
    assert first[0] == first[1]  # the same random initial sentences for every strategy of a seed


def test_a_word_budget_stops_at_that_many_labeled_words(data: SimData) -> None:
    config = SimConfig(strategies=("random",), **{**SMALL, "budget": 20}, budget_words=400)
    sink = MemorySink()
    run_cell(data, config, "random", 0, sink)
    labeled = sink.cells["random", 0]["state"]["labeled"]
    words = [len(data.pool[i]) for i in labeled]
    assert sum(words) >= 400 > sum(words[:-5])  # the last batch of 5 crossed the budget
    assert sink.curves()["n_tokens"].iloc[-1] == sum(words)
    with pytest.raises(ValueError, match="budget_words"):
        SimConfig(budget_words=0)


def test_points_evaluate_the_model_on_the_held_out_split(data: SimData) -> None:
    config = SimConfig(strategies=("kd-fixed",), mode="online", **SMALL)
    sink = MemorySink()
    run_cell(data, config, "kd-fixed", 0, sink)
    state = sink.cells["kd-fixed", 0]["state"]
    model = make("cw", labels=data.labels, template="chunk")  # replay the labels, independently
    for i in state["labeled"]:
        s = data.pool[i]
        model.learn_one(s.tokens, s.tags, **s.columns)
    expected = chunk_f1([s.tags for s in data.eval], model.predict(data.eval))
    last = sink.curves().iloc[-1]
    assert last["f1"] == pytest.approx(expected.f1, abs=1e-12)
    assert last["accuracy"] == pytest.approx(expected.token_accuracy, abs=1e-12)


def test_retrain_mode_refits_on_all_labels_at_each_point(data: SimData) -> None:
    config = SimConfig(strategies=("min-conf-margin",), mode="retrain", epochs=3, **SMALL)
    sink = MemorySink()
    run_cell(data, config, "min-conf-margin", 0, sink)
    labeled = sink.cells["min-conf-margin", 0]["state"]["labeled"]
    model = make("cw", labels=data.labels, template="chunk")
    model.fit([data.pool[i] for i in labeled], epochs=3, seed=_refit_seed(0, len(labeled)))
    assert sink.curves().iloc[-1]["f1"] == pytest.approx(model.score(data.eval).f1, abs=1e-12)


@pytest.mark.parametrize(("mode", "epochs"), [("online", 1), ("retrain", 3)])
def test_full_data_reference_trains_on_the_whole_pool(
    data: SimData, mode: str, epochs: int
) -> None:
    sink = MemorySink()
    run_reference(data, SimConfig(mode=mode, epochs=3, **SMALL), 0, sink)
    model = make("cw", labels=data.labels, template="chunk").fit(data.pool, epochs=epochs, seed=0)
    row = sink.curves().iloc[0]
    assert (row["strategy"], row["n_sentences"]) == ("full-data", 300)
    assert row["n_tokens"] == sum(len(s) for s in data.pool)
    assert row["f1"] == pytest.approx(model.score(data.eval).f1, abs=1e-12)


class Crash(Exception):
    pass


class CrashingSink(MemorySink):
    """Dies (like a killed worker) right after the n-th stored point."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after

    def record(self, strategy, seed, point, state) -> None:
        super().record(strategy, seed, point, state)
        self.after -= 1
        if self.after == 0:
            raise Crash


@pytest.mark.parametrize("mode", ["online", "retrain"])
@pytest.mark.parametrize("strategy", ["kd-pc", "min-margin"])
def test_an_interrupted_run_resumes_exactly(data: SimData, mode: str, strategy: str) -> None:
    config = SimConfig(strategies=(strategy,), mode=mode, epochs=2, **SMALL)
    clean = MemorySink()
    run_cell(data, config, strategy, 0, clean)
    sink = CrashingSink(after=3)
    with pytest.raises(Crash):
        run_cell(data, config, strategy, 0, sink)
    assert len(sink.curves()) == 3 and sink.saved(strategy, 0).status == "running"
    assert run_cell(data, config, strategy, 0, sink) == "done"
    drop = TIMES
    assert sink.curves().drop(columns=drop).equals(clean.curves().drop(columns=drop))
    assert (
        sink.cells[strategy, 0]["state"]["labeled"] == clean.cells[strategy, 0]["state"]["labeled"]
    )


def test_a_done_cell_is_not_run_again(data: SimData) -> None:
    config = SimConfig(strategies=("random",), **SMALL)
    sink = MemorySink()
    run_cell(data, config, "random", 0, sink)
    before = sink.curves()
    run_cell(data, config, "random", 0, sink)
    assert sink.curves().equals(before)


def test_resume_refuses_other_data(data: SimData) -> None:
    config = SimConfig(strategies=("random",), **SMALL)
    sink = CrashingSink(after=2)
    with pytest.raises(Crash):
        run_cell(data, config, "random", 0, sink)
    other = SimData(sentences(300, 7), data.eval, "chunk")
    with pytest.raises(ValueError, match="other data"):
        run_cell(other, config, "random", 0, sink)


def test_cached_encoding_equals_the_learners_own(data: SimData) -> None:
    model = make("cw", labels=data.labels, template="chunk")
    for s in data.pool[:15]:
        model.learn_one(s.tokens, s.tags, **s.columns)
    cached = CachedModel(model, data.cache)
    batch = data.pool[100:140] + data.eval[:10]
    for _ in range(2):
        mine, theirs = cached.encode(batch), model.encode(batch)
        for a, b in zip(
            (mine.feat_ids, mine.tok_offsets, mine.sent_offsets),
            (theirs.feat_ids, theirs.tok_offsets, theirs.sent_offsets),
            strict=True,
        ):
            assert np.array_equal(a, b)
        for s in data.pool[15:40]:  # the learner admits new features; the cache follows
            model.learn_one(s.tokens, s.tags, **s.columns)
    outside = sentences(3, 99)  # not cached: the learner's own encoding is used
    assert np.array_equal(cached.encode(outside).feat_ids, model.encode(outside).feat_ids)


def test_uncertainty_sampling_skips_what_the_model_already_knows() -> None:
    """Half the pool repeats one short sentence: uncertainty sampling should leave it alone,
    random sampling should not."""
    known = sentences(1, 5)[0]
    diverse = [s for s in sentences(200, 6) if len(s) > len(known)][:100]
    pool = [Sentence(list(known.tokens), list(known.tags), dict(known.columns)) for _ in range(100)]
    pool += diverse
    data = SimData(pool, sentences(30, 8), "chunk")
    config = SimConfig(strategies=("min-margin", "random"), initial=20, batch=5, candidates=60,
                       eval_every=50, budget=60, seeds=(0,))  # fmt: skip
    share = {}
    for strategy in config.strategies:
        sink = MemorySink()
        run_cell(data, config, strategy, 0, sink)
        picked = sink.cells[strategy, 0]["state"]["labeled"][20:]
        share[strategy] = np.mean([i >= 100 for i in picked])
    assert share["min-margin"] >= 0.9
    assert share["random"] <= 0.75


def test_config_checks_and_round_trip() -> None:
    config = SimConfig(strategies=("kd-pc", "random"), seeds=(3, 4), mode="retrain",
                       strategy_params={"kd-pc": {"s": 0.1}})  # fmt: skip
    assert SimConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    assert config.cells()[0] == ("full-data", 3)  # the longest cells go first
    assert len(config.cells()) == 6
    with pytest.raises(ValueError, match="covariance"):
        SimConfig(learner="perceptron")
    assert "kd-pc" not in strategies_for("perceptron") and "kd-pc" in strategies_for("arow")
    for bad in ({"strategies": ("nope",)}, {"budget": 10}, {"mode": "batch"}, {"seeds": ()}):
        with pytest.raises(ValueError):
            SimConfig(**bad)
    with pytest.raises(ValueError, match="unknown simulation settings"):
        SimConfig.from_dict({"budgett": 5})


def test_dev_split_holds_out_a_seeded_fraction_in_corpus_order() -> None:
    corpus = sentences(200, 5)
    rest, held = dev_split(corpus, 0.1, seed=3)
    assert len(held) == 20 and len(rest) == 180
    ids = {id(s) for s in held}
    assert not ids & {id(s) for s in rest}  # disjoint, and together the whole corpus
    assert [s for s in corpus if id(s) in ids] == held  # corpus order kept
    assert [s for s in corpus if id(s) not in ids] == rest
    again = dev_split(corpus, 0.1, seed=3)[1]
    assert [id(s) for s in again] == [id(s) for s in held]
    other = dev_split(corpus, 0.1, seed=4)[1]
    assert {id(s) for s in other} != ids
    with pytest.raises(ValueError, match="fraction"):
        dev_split(corpus, 1.0)


def test_a_dev_task_never_reads_the_test_file(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = sentences(100, 6)
    read: list[str] = []

    def fake_load(task: str, split: str = "train", path: object = None) -> list[Sentence]:
        read.append(split)
        return corpus if split == "train" else sentences(30, 7)

    monkeypatch.setattr(corpora, "load", fake_load)
    dev = load_task("np", dev=0.2, dev_seed=1)
    assert read == ["train"]
    assert len(dev.pool) == 80 and len(dev.eval) == 20
    assert {id(s) for s in dev.pool + dev.eval} == {id(s) for s in corpus}
    assert dev.name == "np-dev0.2-seed1"
    full = load_task("np")
    assert read[1:] == ["train", "test"]
    assert len(full.pool) == 100 and len(full.eval) == 30
