"""Pacing of staged imports: how big each staging transaction is, and the statistics after one.

Annotators' writes wait for the import's transactions on SQLite (one writer at a time), so each
batch is time-boxed (``BATCH_MS``) rather than a fixed number of sentences: the chunk size
follows the measured write rate of the machine and the database. (Measured under a load
average of about 25 on 2 cores, ``bench/service.py --quick --baseline``: the p95 of submits
during a 50,000-sentence import was 515-677 ms with the box and 525-574 ms without it, so the
box bounds the lock hold on a slow machine rather than removing that tail; a passive WAL
checkpoint after every batch made the import 4x slower for no gain and was dropped.)
"""

from __future__ import annotations

import logging

from sqlalchemy import Engine

LOG = logging.getLogger(__name__)

BATCH_MS = 50.0
"""The time box of one staging transaction (its hold on SQLite's write lock): the chunk size
follows the measured write rate so that a batch takes about this long (``batch_ms=0``: fixed
``chunk_size`` chunks)."""
FIRST_CHUNK = 50


def time_box(engine: Engine, batch_ms: float) -> float:
    """The time box that applies on this database: SQLite only, where a staging transaction
    holds the one write lock. PostgreSQL writers do not wait for each other's rows, and there
    smaller batches only meant more commits: measured slower for both the import (181 s instead
    of 60 s for 50,000 sentences) and the submits during it (bench/service.py --baseline)."""
    return batch_ms if engine.dialect.name == "sqlite" else 0.0


def next_chunk(n: int, seconds: float, batch_ms: float, cap: int) -> int:
    """The size of the next chunk: ``n`` sentences took ``seconds`` to write; aim at
    ``batch_ms``, growing at most twofold per batch, between 10 and ``cap``."""
    fit = int(n * batch_ms / 1000 / max(seconds, 1e-4))
    return max(min(10, cap), min(fit, 2 * n, cap))


def refresh_statistics(engine: Engine) -> None:
    """PostgreSQL: re-sample the tables an import grew, so the planner sees their size now
    rather than after autovacuum's next pass (with an empty table's statistics it scanned the
    whole pool for every hand-out). Best effort: the import is already published."""
    if engine.dialect.name != "postgresql":
        return
    try:
        with engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT")
            conn.exec_driver_sql("ANALYZE sentences, annotations, import_batches")
    except Exception:  # noqa: BLE001 - statistics only; the data is committed
        LOG.exception("could not refresh the table statistics after an import")
