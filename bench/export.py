"""Exports of a 160K-sentence project in every text format: seconds and peak Python memory.

    python bench/export.py [--quick] [--json PATH] [--sentences N] [--formats conll jsonl ...]

A fresh SQLite store gets one project of N labeled sentences (default 160,000; ``--quick``
3,000), made by repeating CoNLL-2000 and CoNLL-2002 Spanish training sentences and importing
them as one annotator's labels. Each format's export (``db.exports.export_annotations``, the
labels) is timed once without tracing, then run again under ``tracemalloc``: ``peak MB`` is the
highest Python allocation above the start of that export, beside the file it wrote (``file MB``)
and the memory the same sentences take as a list (``list MB``, measured on the first 10,000 and
scaled): an export that streams stays far below both and does not grow with N.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import bench_parser, emit, format_table  # noqa: E402
from cwal.io import Sentence, read_corpus, write_conll  # noqa: E402

FORMATS = ("conll", "jsonl", "conllu", "prodigy", "doccano", "labelstudio", "spacy-json", "csv")
SOURCES = ("conll2000/train.txt", "conll2002/esp.train")


def _corpus(path: Path, n: int, data_dir: Path) -> None:
    files = [data_dir / rel for rel in SOURCES]
    with path.open("w", encoding="utf-8") as out:
        sentences = itertools.islice(
            itertools.cycle(itertools.chain.from_iterable(read_corpus(f) for f in files)), n
        )
        write_conll((Sentence(s.tokens, s.tags) for s in sentences), out)


def _list_mb(engine, project_id: int) -> float:
    from db.exports import iter_export

    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    held = list(itertools.islice(iter_export(engine, project_id), 10_000))
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return used / 2**20 / max(1, len(held))


def main(argv: list[str] | None = None) -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--sentences", type=int, help="project size (default 160,000)")
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    parser.add_argument("--data-dir", help="the shared corpora folder (default CWAL_DATA_DIR)")
    args = parser.parse_args(argv)
    n = args.sentences or (3_000 if args.quick else 160_000)
    data_dir = Path(args.data_dir or os.environ.get("CWAL_DATA_DIR") or
                    Path(__file__).resolve().parents[2] / "shared" / "data")  # fmt: skip
    from db.engine import open_database
    from db.exports import export_annotations
    from db.imports import import_file
    from db.repository import add_user, create_project

    with tempfile.TemporaryDirectory(prefix="cwal-bench-export-") as tmp:
        tmp = Path(tmp)
        engine = open_database(f"sqlite:///{tmp / 'store.sqlite3'}")
        corpus = tmp / "corpus.conll"
        _corpus(corpus, n, data_dir)
        user = add_user(engine, "annotator", "bench password")
        project = create_project(engine, "big", {"tagset": None, "scheme": None})
        start = time.perf_counter()
        import_file(engine, project, corpus, tags_as="annotations", annotator_id=user)
        import_s = time.perf_counter() - start
        per_sentence_mb = _list_mb(engine, project)
        rows = []
        for fmt in args.formats:
            out = tmp / f"export.{fmt}"
            start = time.perf_counter()
            written = export_annotations(engine, project, out, fmt)
            seconds = time.perf_counter() - start
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            export_annotations(engine, project, out, fmt)
            peak = tracemalloc.get_traced_memory()[1] - base
            tracemalloc.stop()
            rows.append({
                "format": fmt, "sentences": written, "seconds": seconds,
                "sentences/s": written / seconds, "file MB": out.stat().st_size / 2**20,
                "peak MB": peak / 2**20, "list MB": per_sentence_mb * written,
            })  # fmt: skip
            out.unlink()
        engine.dispose()
    title = f"export of {n:,} labeled sentences (import took {import_s:.1f}s)"
    emit({title: format_table(rows, digits={"sentences/s": 0, "peak MB": 2})}, args,
         {"sentences": n, "import_seconds": import_s, "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
