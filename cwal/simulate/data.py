"""Corpora for simulations, built inside worker processes from plain arguments (see ``Ref``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cwal import corpora
from cwal.io import Sentence, read_corpus, schemes
from cwal.simulate.engine import SimData


def _view(sentences: list[Sentence], keep: Sequence[str] | None) -> list[Sentence]:
    if not keep:
        return sentences
    return [
        Sentence(s.tokens, schemes.task_view(s.tags, set(keep)), s.columns, s.meta, s.line)
        for s in sentences
    ]


def load_files(
    pool: str,
    eval: str,
    template: str = "chunk",
    keep: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    format: str | None = None,
    pool_size: int | None = None,
    eval_size: int | None = None,
    name: str = "",
) -> SimData:
    """A pool file and an evaluation file (any format ``read_corpus`` reads), optionally cut to
    their first ``pool_size`` / ``eval_size`` sentences and restricted to chunk types ``keep``."""
    cols = list(columns) if columns else None
    train = [s for s in read_corpus(pool, format=format, columns=cols) if len(s)][:pool_size]
    held = [s for s in read_corpus(eval, format=format, columns=cols) if len(s)][:eval_size]
    return SimData(_view(train, keep), _view(held, keep), template, name or str(pool))


def dev_split(
    sentences: Sequence[Sentence], fraction: float, seed: int = 0
) -> tuple[list[Sentence], list[Sentence]]:
    """``sentences`` split into (rest, held out): a seeded random ``fraction`` held out, both
    parts in corpus order."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"the held-out fraction must lie in (0, 1), got {fraction}")
    n = len(sentences)
    size = min(max(int(round(fraction * n)), 1), n - 1)
    held = np.zeros(n, dtype=bool)
    held[np.random.default_rng([seed, 7]).choice(n, size=size, replace=False)] = True
    return ([s for s, h in zip(sentences, held, strict=True) if not h],
            [s for s, h in zip(sentences, held, strict=True) if h])  # fmt: skip


def load_task(
    task: str,
    data_dir: str | None = None,
    pool_size: int | None = None,
    eval_size: int | None = None,
    dev: float = 0.0,
    dev_seed: int = 0,
) -> SimData:
    """A research task of ``cwal.corpora`` (``np``, ``chunk``, ``esp``, ``ned``): its training
    file is the pool, its test file the evaluation split (optionally cut to their first
    ``pool_size`` / ``eval_size`` sentences). ``dev`` > 0 never reads the test file: a seeded
    ``dev`` fraction of the training file (``dev_split``) is the evaluation split and the rest the
    pool, for choosing settings without touching the test split."""
    spec = corpora.get_task(task)
    train = [s for s in corpora.load(task, "train", data_dir) if len(s)]
    if dev:
        pool, held = dev_split(train, dev, dev_seed)
        pool, held = pool[:pool_size], held[:eval_size]
        return SimData(pool, held, spec.template, f"{task}-dev{dev:g}-seed{dev_seed}")
    pool = train[:pool_size]
    held = [s for s in corpora.load(task, "test", data_dir) if len(s)][:eval_size]
    return SimData(pool, held, spec.template, task)
