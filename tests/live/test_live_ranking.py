"""One ranking: the live queue orders its candidates exactly as the strategy object does.

The live queue scores a row snapshot of the live model taken under its lock, on features from the
pool cache; the strategy objects that simulations and the CLI run score the learner itself on
freshly encoded sentences. Same model state, candidates and seed must give the same order."""

from __future__ import annotations

import pytest

from cwal.io import Sentence
from cwal.live.scoring import LIVE_BLOCK
from cwal.strategies import make_strategy

from .helpers import annotate

DRAWN = ("kd-pc", "kd-fixed", "max-entropy", "errors-per-word", "kd-pc+diverse")


@pytest.mark.parametrize(
    "name",
    [
        "kd-pc",
        "kd-fixed",
        "kbv",
        "wkbv",
        "delta",
        "min-conf-margin",
        "max-entropy",
        "random",
        "errors-per-word",
        "kd-pc+diverse",
    ],
)
def test_live_queue_order_is_the_strategy_order(make_project, name) -> None:
    p = make_project(n=150, strategy=name, strategy_params={"k": 10, "candidates": 120})
    live = p.session()
    annotate(live, p, "ann", 6)
    live.wait_idle()
    scored = live.queue.current
    assert scored.version == live.live.version and len(scored.candidates) == 120
    sentences = [
        Sentence(list(s.tokens), None, dict(s.columns))
        for s in live.store.pool_sentences(scored.candidates)
    ]
    params = {"k": 10, "s": scored.s} if name in DRAWN else {}
    strategy = make_strategy(name, **params)
    ranking = strategy.rank(live.model, sentences, scored.seed, scored.candidates, LIVE_BLOCK)
    assert [scored.candidates[i] for i in ranking.order[:50]] == scored.ranked[:50]
    by_score = dict(zip(scored.candidates, ranking.score.tolist(), strict=True))
    assert by_score == pytest.approx(scored.score)
    assert len(set(ranking.score.tolist())) > 3  # the scores, not the tie rule, set the order
