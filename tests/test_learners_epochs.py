"""Dev-chosen training length: with a dev set and a patience, ``fit`` keeps the state of its best
dev epoch and stops ``patience`` epochs after it. Truth: the same seed replays the same epoch
orders, so a model trained for exactly the best epoch count must equal the kept one."""

from __future__ import annotations

import numpy as np
import pytest
from test_learners import toy_corpus

from cwal.io import Sentence
from cwal.learners import make
from cwal.measures import chunk_f1


def noisy(n: int, seed: int, flip: float) -> list[Sentence]:
    """The toy corpus with a share of its tags flipped (so dev F1 moves between epochs)."""
    rng = np.random.default_rng(seed + 100)
    out = []
    for s in toy_corpus(n, seed):
        tags = [("O" if t != "O" else "B-NP") if rng.random() < flip else t for t in s.tags]
        out.append(Sentence(s.tokens, tags, s.columns))
    return out


@pytest.mark.parametrize(("learner", "patience"), [("arow", 1), ("cw", 2), ("pa", 3)])
def test_the_best_dev_epoch_is_kept_and_training_stops_after_the_patience(learner, patience):
    train, dev = noisy(60, 1, 0.25), noisy(40, 2, 0.0)
    curve: list[float] = []
    model = make(learner).fit(train, epochs=12, seed=3, dev=dev, patience=patience,
                              progress=lambda e, n, st: curve.append(st["dev_f1"]))  # fmt: skip
    best = int(np.argmax(curve)) + 1  # the earliest maximum
    assert model.best_epoch_ == best
    assert len(curve) == min(12, best + patience)  # stopped after `patience` epochs without gain
    again = make(learner).fit(train, epochs=best, seed=3)
    assert model.predict(dev) == again.predict(dev)
    for name in ("W_", "A_", "SW_", "UW_"):
        np.testing.assert_array_equal(getattr(model, name), getattr(again, name))
    assert model.count_ == again.count_ and model.n_updates_ == again.n_updates_
    assert chunk_f1([s.tags for s in dev], model.predict(dev)).f1 == pytest.approx(max(curve))


def test_without_a_patience_every_epoch_runs_and_the_last_state_is_kept() -> None:
    train, dev = noisy(40, 4, 0.25), noisy(20, 5, 0.0)
    seen: list[int] = []
    model = make("arow").fit(train, epochs=5, seed=0, dev=dev,
                             progress=lambda e, n, st: seen.append(e))  # fmt: skip
    assert seen == [1, 2, 3, 4, 5] and model.best_epoch_ == 5
    again = make("arow").fit(train, epochs=5, seed=0)
    np.testing.assert_array_equal(model.W_, again.W_)
    with pytest.raises(ValueError, match="patience"):
        make("arow").fit(train, epochs=2, dev=dev, patience=0)
