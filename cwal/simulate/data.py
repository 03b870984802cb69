"""Corpora for simulations, built inside worker processes from plain arguments (see ``Ref``)."""

from __future__ import annotations

from collections.abc import Sequence

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


def load_task(
    task: str,
    data_dir: str | None = None,
    pool_size: int | None = None,
    eval_size: int | None = None,
) -> SimData:
    """A research task of ``cwal.corpora`` (``np``, ``chunk``, ``esp``, ``ned``): its training
    file is the pool, its test file the evaluation split (optionally cut to their first
    ``pool_size`` / ``eval_size`` sentences)."""
    spec = corpora.get_task(task)
    pool = [s for s in corpora.load(task, "train", data_dir) if len(s)][:pool_size]
    held = [s for s in corpora.load(task, "test", data_dir) if len(s)][:eval_size]
    return SimData(pool, held, spec.template, task)
