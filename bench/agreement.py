"""Agreement and adjudication on a large project: what the two team pages compute, in seconds.

    python bench/agreement.py [--quick] [--json PATH] [--sentences N] [--share S]

A fresh SQLite store gets one project of N pool sentences (default 160,000; ``--quick`` 20,000),
made by repeating CoNLL-2002 Spanish training sentences; overlap ``S`` (default 0.1) with k = 2.
Two annotators' versions of the overlap sentences (all but the last 75) are written straight
into the log (set-up, not timed): the gold tags, each token's tag replaced by O with probability
0.05 per annotator, so the versions disagree the way careful annotators do. Timed (median of 3),
against the 2 s page target:

* the Agreement page's old path (every visit after a new label): every version read
  (``repository.overlap_items``) and ``cwal.measures.agreement.agreement`` with 1,000 bootstrap
  replicates (today's measures code);
* its first visit now (``repository.LiveAgreement``, a fresh one): the same reading and counting;
* a visit after 25 more overlap sentences got their 2 versions (50 new rows; a fresh batch each
  time): only the changed sentences read and recounted, the bootstrap redone on the counts;
* the Adjudication page's list (``repository.disagreements``).
"""

from __future__ import annotations

import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import bench_parser, emit, format_table  # noqa: E402
from cwal.io import Sentence, read_corpus, schemes, write_conll  # noqa: E402

TARGET_S = 2.0
BATCH = 25  # overlap sentences given their versions between two visits
HELD = 3 * BATCH


def _setup(tmp: Path, n: int, share: float, data_dir: Path):
    from sqlalchemy import insert

    from db import imports, open_database
    from db import repository as repo
    from db.engine import write_transaction
    from db.models import Annotation, utcnow
    from db.repository import versions

    corpus = tmp / "pool.conll"
    sentences = list(
        itertools.islice(itertools.cycle(read_corpus(data_dir / "conll2002/esp.train")), n)
    )
    with corpus.open("w", encoding="utf-8") as out:
        write_conll((Sentence(s.tokens, s.tags) for s in sentences), out)
    engine = open_database(f"sqlite:///{tmp / 'bench.sqlite3'}")
    project = repo.create_project(engine, "bench", {"scheme": "IOB2", "strict_scheme": False})
    imports.import_file(engine, project, corpus, tags_as="gold")
    versions.set_overlap(engine, project, share, 2)
    users = [repo.add_user(engine, name, "bench password") for name in ("ann", "bob")]
    rng = random.Random(0)
    overlap = [s for s in repo.iter_sentences(engine, project) if versions.is_overlap(s.id, share)]

    def write(sentences) -> None:
        rows = []
        now = utcnow()
        for s in sentences:
            for user in users:
                tags = [t if rng.random() > 0.05 else "O" for t in s.gold_tags]
                tags = schemes.repair(tags, "IOB2")
                rows.append({"project_id": project, "sentence_id": s.id, "user_id": user,
                             "status": "version", "tags": tags, "seconds": None,
                             "supersedes_id": None, "created_at": now})  # fmt: skip
        with write_transaction(engine) as conn:
            for start in range(0, len(rows), 5000):
                conn.execute(insert(Annotation), rows[start : start + 5000])

    held = overlap[-HELD:]
    write(overlap[:-HELD])
    batches = [held[i : i + BATCH] for i in range(0, HELD, BATCH)]
    return engine, project, len(overlap) - HELD, lambda: write(batches.pop(0))


def _median(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--sentences", type=int, help="pool size (default 160,000)")
    parser.add_argument("--share", type=float, default=0.1, help="overlap share (default 0.1)")
    args = parser.parse_args()
    n = args.sentences or (20_000 if args.quick else 160_000)
    data_dir = Path(os.environ.get("CWAL_DATA_DIR", "../shared/data"))
    if not (data_dir / "conll2002/esp.train").exists():
        raise SystemExit(f"needs the CoNLL-2002 corpus under {data_dir} (CWAL_DATA_DIR)")
    from cwal.measures.agreement import agreement, counts_table
    from db import repository as repo

    with tempfile.TemporaryDirectory() as tmp:
        engine, project, n_overlap, add_batch = _setup(Path(tmp), n, args.share, data_dir)
        before_s = _median(lambda: agreement(repo.overlap_items(engine, project)))
        read_s = _median(lambda: repo.overlap_items(engine, project))
        first_s = _median(lambda: repo.LiveAgreement(engine, project).table())
        live = repo.LiveAgreement(engine, project)
        live.table()
        times, recounted = [], []
        for _ in range(3):
            add_batch()
            start = time.perf_counter()
            live.table()
            times.append(time.perf_counter() - start)
            recounted.append(live.recounted)
        warm_s = statistics.median(times)
        boot_s = _median(lambda: counts_table(live.counts))
        adjud_s = _median(lambda: repo.disagreements(engine, project))
        n_disagree = len(repo.disagreements(engine, project, limit=10**9))
    rows = [
        {
            "page": "agreement, all read + counted (old path)",
            "seconds": before_s,
            "target": TARGET_S,
        },
        {"page": "  of which reading versions", "seconds": read_s, "target": None},
        {"page": "agreement now, first visit", "seconds": first_s, "target": TARGET_S},
        {
            "page": f"agreement now, after {2 * BATCH} new versions",
            "seconds": warm_s,
            "target": TARGET_S,
        },  # fmt: skip
        {"page": "  of which bootstrap + table", "seconds": boot_s, "target": None},
        {"page": "adjudication list", "seconds": adjud_s, "target": TARGET_S},
    ]
    title = (f"{n:,} pool sentences, {n_overlap:,} overlap sentences (share {args.share}) "
             f"with 2 versions, {n_disagree:,} with differing versions; median of 3; "
             f"sentences recounted per visit after new versions: {recounted}")  # fmt: skip
    emit({title: format_table(rows, digits={"seconds": 2, "target": 1})}, args,
         {"sentences": n, "overlap": n_overlap, "disagreements": n_disagree,
          "recounted": recounted, "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
