"""Word clusters from unlabeled text: learned, cached per text, used as features by both encoding
routes, stored in model files (format 4) and learned by ``fit`` when the ``clusters`` parameter
is on."""

from __future__ import annotations

import numpy as np
import pytest

from cwal.features import FeatureIndex
from cwal.features import clusters as C
from cwal.io import Sentence
from cwal.learners import SequenceLearner, make

DAYS = ["monday", "tuesday", "friday", "sunday"]
CITIES = ["paris", "berlin", "madrid", "rome"]
VERBS = ["met", "saw", "left", "called"]
NAMES = ["anna", "bert", "carla", "dirk"]


def corpus(n: int, seed: int = 0) -> list[list[str]]:
    """Sentences where days, cities, verbs and names each fill their own slot."""
    rng = np.random.default_rng(seed)
    pick = lambda words: words[int(rng.integers(len(words)))]  # noqa: E731
    out = []
    for _ in range(n):
        if rng.random() < 0.5:
            out.append([pick(NAMES).title(), pick(VERBS), "him", "in", pick(CITIES).title(),
                        "on", pick(DAYS).title(), "."])  # fmt: skip
        else:
            out.append(["on", pick(DAYS), pick(NAMES), pick(VERBS), "us", "near", pick(CITIES)])
    return out


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CWAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(C, "MIN_TOKENS", 3000)  # short texts keep the tests quick


def test_words_of_one_slot_share_a_coarse_cluster_and_the_levels_nest() -> None:
    wc = C.learn(corpus(500), sizes=(4, 8), dim=8)
    assert wc is not None and wc.sizes == (4, 8)
    for group in (DAYS, CITIES, VERBS, NAMES):
        assert len({wc.of(w)[0] for w in group}) == 1, group
    assert wc.of("met")[0] != wc.of("monday")[0] and wc.of("met")[0] != wc.of("anna")[0]
    assert len({wc.of(g[0])[1] for g in (DAYS, CITIES, VERBS, NAMES)}) == 4
    fine_to_coarse: dict[str, str] = {}
    for w in wc.words:
        c4, c8 = wc.of(w)
        assert fine_to_coarse.setdefault(c8, c4) == c4  # each fine cluster inside one coarse one
    assert wc.of("Monday") == wc.of("monday") and wc.of("zebra") == ("?", "?")


def test_too_little_text_learns_nothing() -> None:
    assert C.learn(corpus(100), sizes=(4, 8)) is None  # under MIN_TOKENS tokens
    assert C.learn(corpus(500), sizes=(64,)) is None  # more clusters than half the words


def test_clusters_are_cached_per_text(monkeypatch) -> None:
    texts = corpus(500)
    first = C.learn(texts, sizes=(4, 8), dim=8)

    def refuse(*args, **kwargs):
        raise AssertionError("relearned a cached text")

    monkeypatch.setattr(C, "_learn", refuse)
    again = C.learn(texts, sizes=(4, 8), dim=8)
    assert again.words == first.words and np.array_equal(again.ids, first.ids)
    with pytest.raises(AssertionError, match="relearned"):
        C.learn(texts[:-1], sizes=(4, 8), dim=8)  # other text, other cache entry


def test_cluster_features_same_on_both_encoding_routes() -> None:
    wc = C.learn(corpus(500), sizes=(4, 8), dim=8)
    for template, cols in (("chunk", True), ("ner", True), ("ner", False)):
        sents = [Sentence(t, None, {"pos": ["X"] * len(t)} if cols else {}) for t in corpus(40, 3)]
        index = FeatureIndex(template, clusters=wc)
        enc = index.encode(sents)  # the batch route
        strings = [f for s in sents for tok in index.token_features(s) for f in tok]
        ids = index._ids
        assert enc.feat_ids.tolist() == [ids[f] for f in strings]
        first = index.token_features(sents[0])[1]
        want = f"c4[+0]={wc.of(sents[0].tokens[1])[0]}"
        assert want in first and f"c4[-1]={wc.of(sents[0].tokens[0])[0]}" in first
        assert "c4[-1]=<s-1>" in index.token_features(sents[0])[0]
        assert any(f.startswith("c8[-1|0]=") for f in first)
        plain = FeatureIndex(template).token_features(sents[0])[1]
        assert not any(f.startswith("c") and "[" in f for f in plain)


def test_fit_learns_clusters_stores_them_and_old_models_still_load(monkeypatch) -> None:
    monkeypatch.setattr(C, "SIZES", (4, 8))
    texts = corpus(500)
    tags = lambda s: ["B-X" if w[0].isupper() else "O" for w in s]  # noqa: E731
    data = [Sentence(t, tags(t)) for t in texts[:100]]
    plain = make("arow", template="ner").fit(data, epochs=1)
    assert plain.features_.clusters is None  # off unless asked for
    model = make("arow", template="ner", clusters=True).fit(data, epochs=1, unlabeled=texts)
    wc = model.features_.clusters
    assert wc is not None and wc.of("monday") != ("?",) * len(wc.sizes)
    assert any(f.startswith("c4[+0]=") for f in model.features_.strings)
    copy = SequenceLearner.from_bytes(model.to_bytes())
    assert copy.features_.clusters.words == wc.words
    assert np.array_equal(copy.features_.clusters.ids, wc.ids)
    test = [Sentence(t) for t in corpus(20, 7)]
    assert copy.predict(test) == model.predict(test)
    assert SequenceLearner.from_bytes(plain.to_bytes()).predict(test) == plain.predict(test)
