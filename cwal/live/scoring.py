"""What the session computes off its lock from a row snapshot: rankings, pre-fills, the record."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from cwal.live import kd
from cwal.live.queue import Scored, rank
from cwal.strategies import STRATEGIES, base_name, make_strategy

LIVE_BLOCK = 10
"""Sentences a diverse strategy keeps free of near-duplicates and neighbours at a time live."""


def seed_of(*parts: int) -> int:
    """A 31-bit seed derived from integers (project, version, sentence ...): reproducible draws."""
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1)[0] >> 1)


def rank_by_kd(
    rows: kd.Rows,
    cands: np.ndarray,
    lengths: np.ndarray,
    method: str,
    s: float,
    *,
    k: int,
    seed: int,
    version: int,
    generation: tuple[int, int],
) -> Scored:
    """Candidates ranked by their least confident token under ``method`` (kd-pc / kd-fixed),
    ties to the shorter sentence; with each one's predicted tags and confidences."""
    conf = kd.confidence(rows, method, s, k=k, seed=seed)
    score, where = kd.least_confident(conf)
    out = Scored(version, generation, rank(cands, score, lengths), method)
    off = conf.sent_offsets
    for b, sid in enumerate(cands.tolist()):
        t0, t1 = int(off[b]), int(off[b + 1])
        out.predicted[sid] = rows.tags(conf.labels[t0:t1])
        out.confidence[sid] = conf.confidence[t0:t1].tolist()
        out.least[sid] = int(where[b]) if where[b] >= 0 else None
        out.score[sid] = float(score[b])
    return out


def rank_by_strategy(
    rows: kd.Rows,
    cands: np.ndarray,
    lengths: np.ndarray,
    name: str,
    s: float,
    *,
    k: int,
    seed: int,
    version: int,
    generation: tuple[int, int],
) -> Scored:
    """Candidates ranked by any ``cwal.strategies`` strategy's ``score`` and ``order`` (lower
    first, ties to the shorter sentence, then the lower id; a ``+diverse`` one spreads
    near-duplicates over blocks of ``LIVE_BLOCK``); pre-fills are computed per served sentence."""
    accepted = inspect.signature(STRATEGIES[base_name(name)]).parameters
    params = {key: v for key, v in (("k", k), ("s", s)) if key in accepted}
    strategy, model, sentences = make_strategy(name, **params), kd.RowsModel(rows), list(cands)
    score = np.asarray(strategy.score(model, sentences, seed), dtype=np.float64)
    order = strategy.order(model, sentences, score, lengths, cands.tolist(), cands, LIVE_BLOCK)
    out = Scored(version, generation, [int(i) for i in cands[order]], name)
    out.score.update({int(i): float(v) for i, v in zip(cands.tolist(), score, strict=True)})
    return out


def prefill(
    rows: kd.Rows, s: float, *, k: int, seed: int
) -> tuple[list[str], list[float], int | None]:
    """KD-PC pre-fill of one sentence: predicted tags, confidences, least confident position."""
    conf = kd.confidence(rows, "kd-pc", s, k=k, seed=seed)
    _, where = kd.least_confident(conf)
    least = int(where[0]) if len(where) and where[0] >= 0 else None
    return rows.tags(conf.labels), conf.confidence.tolist(), least


@dataclass
class Prequential:
    """The model's view of a sentence just before learning it: the logged prediction and the
    agreement over the s grid (KD-PC and KD-Fixed, common random numbers) with correctness."""

    predicted: list[str]
    confidence: list[float]
    grid_pc: np.ndarray
    grid_fixed: np.ndarray
    correct: np.ndarray


def prequential(rows: kd.Rows, tags: list[str], s_pc: float, *, k: int, seed: int) -> Prequential:
    pred = prefill(rows, s_pc, k=k, seed=seed)
    correct = np.array([p == t for p, t in zip(pred[0], tags, strict=True)])
    grids = []
    for method in ("kd-pc", "kd-fixed"):
        grids.append(
            np.stack(
                [
                    kd.confidence(rows, method, s, k=k, seed=seed, tiebreak="none").confidence
                    for s in kd.S_GRID
                ]  # fmt: skip
            )
        )
    return Prequential(pred[0], pred[1], grids[0], grids[1], correct)
