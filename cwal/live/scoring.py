"""What the session computes off its lock from a row snapshot: rankings, predictions, the
prequential record."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cwal.confidence import SAMPLING, estimate
from cwal.confidence.calibration import UNBOUNDED
from cwal.live import kd
from cwal.live.queue import Scored
from cwal.strategies import STRATEGIES, base_name, make_strategy

LIVE_BLOCK = 10
"""Sentences a diverse strategy keeps free of near-duplicates and neighbours at a time live."""


MAX_KEY = UNBOUNDED
"""Delta is stored capped here (a token with one possible label has an infinite margin)."""


def seed_of(*parts: int) -> int:
    """A 31-bit seed derived from integers (project, version, sentence ...): reproducible draws."""
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1)[0] >> 1)


def strategy_for(name: str, *, k: int, s: float, candidates: int):
    """The strategy object the live queue ranks with (draw count and scale only for the
    strategies that draw)."""
    drawn = getattr(STRATEGIES[base_name(name)], "method", None) in SAMPLING
    params = {"k": k, "s": s} if drawn else {}
    return make_strategy(name, candidates=candidates, **params)


def rank_candidates(
    rows: kd.Rows,
    cands: np.ndarray,
    name: str,
    s: float,
    *,
    k: int,
    seed: int,
    version: int,
    generation: tuple[int, int],
) -> Scored:
    """Candidates (in draw order) ranked by the strategy's own ``rank`` on the row snapshot (the
    code path ``select`` and simulations run); with each one's predicted tags and confidences
    when the strategy estimated them (else predictions are computed per served sentence). A
    ``+diverse`` strategy spreads near-duplicates over blocks of ``LIVE_BLOCK``."""
    strategy = strategy_for(name, k=k, s=s, candidates=max(len(cands), 1))
    ids = cands.tolist()
    ranking = strategy.rank(kd.RowsModel(rows), rows.enc, seed, ids, LIVE_BLOCK)
    out = Scored(version, generation, [ids[i] for i in ranking.order], name, seed=seed, s=s)
    out.candidates = ids
    out.score.update({i: float(v) for i, v in zip(ids, ranking.score, strict=True)})
    conf = ranking.confidence
    if conf is not None and conf.margin is not None:  # every estimating strategy has Delta
        off = conf.sent_offsets
        for b, sid in enumerate(ids):
            t0, t1 = int(off[b]), int(off[b + 1])
            out.predicted[sid] = rows.tags(conf.labels[t0:t1])
            out.margins[sid] = np.asarray(conf.margin[t0:t1], dtype=np.float64)
    return out


def prediction(rows: kd.Rows) -> tuple[list[str], np.ndarray]:
    """The prediction of a snapshot's sentence: its tags and each token's Delta margin (the
    session's :class:`~cwal.confidence.calibration.MarginMap` turns it into the confidence)."""
    conf = estimate(kd.RowsModel(rows), rows.enc, "delta")
    return rows.tags(conf.labels), np.asarray(conf.margin, dtype=np.float64)


def least_confident(margins: np.ndarray) -> int | None:
    """The position of the least confident token (smallest Delta: the calibrated confidence is
    increasing in it), None for an empty sentence."""
    return int(np.argmin(margins)) if len(margins) else None


@dataclass
class Prequential:
    """The model's view of a sentence just before learning it: the logged prediction, its
    tokens' Delta (the prequential record) and the agreement over the s grid (KD-PC and KD-Fixed,
    common random numbers; tunes the ranking's s) with correctness."""

    predicted: list[str]
    margins: np.ndarray
    grid_pc: np.ndarray
    grid_fixed: np.ndarray
    correct: np.ndarray


def prequential(rows: kd.Rows, tags: list[str], *, k: int, seed: int) -> Prequential:
    predicted, margins = prediction(rows)
    correct = np.array([p == t for p, t in zip(predicted, tags, strict=True)])
    grids = []
    for method in ("kd-pc", "kd-fixed"):
        grids.append(
            np.stack(
                [
                    kd.confidence(rows, method, s, k=k, seed=seed, rank="votes").confidence
                    for s in kd.S_GRID
                ]  # fmt: skip
            )
        )
    return Prequential(predicted, margins, grids[0], grids[1], correct)
