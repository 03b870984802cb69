"""Feature extraction speed: the cached feature templates against the plain reference
implementation (``tests/reference_features.py``, the tests' oracle; ``before`` below), in one run.

For each task (``esp``: the ``ner`` template on CoNLL-2002 Spanish, ``np``: the ``chunk`` template
on CoNLL-2000; POS column included) the first sentences of the training file are extracted by:
``before`` (the reference), ``fast cold`` (the word and tag caches emptied before each repeat: a
fresh process or server, as on a first page render) and ``fast warm`` (caches already filled).
The cases alternate within each repeat; figures are medians over the repeats, wall time and this
process's CPU time (the CPU figure is steadier on a shared machine). A second table times
``PoolCache.add`` (what the lead pages call) on the ``esp`` sentences with either template.
The load average is recorded before and after.

    python bench/features.py [--quick] [--json PATH] [--tasks esp np] [--repeats N]
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._common import bench_parser, emit, format_table  # noqa: E402
from cwal import corpora, features  # noqa: E402
from cwal.live.pool import PoolCache  # noqa: E402
from cwal.live.protocol import PoolSentence  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from reference_features import REFERENCE as BEFORE  # noqa: E402

TEMPLATE = {"esp": "ner", "np": "chunk"}

# --- timing -------------------------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def compare(cases: dict[str, Callable[[], object]], repeats: int, setup: dict[str, Callable]):
    """Median wall and CPU seconds per case; ``setup[case]`` runs untimed before each repeat."""
    wall: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            setup.get(name, lambda: None)()
            w, c = timed(fn)
            wall[name].append(w)
            cpu[name].append(c)
    return {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in cases}


def template_rows(task: str, n: int, repeats: int, data_dir: str | None) -> list[dict]:
    """Before vs fast (cold and warm) on the first ``n`` training sentences of ``task``."""
    name = TEMPLATE[task]
    sents = corpora.load(task, "train", data_dir)[:n]
    tokens = sum(len(s.tokens) for s in sents)
    fast, before = features.get_template(name), BEFORE[name]
    for s in sents[:300]:  # never time two different things
        assert fast(s.tokens, s.columns) == before(s.tokens, s.columns)

    def run(fn: Callable) -> Callable[[], None]:
        def go() -> None:
            for s in sents:
                fn(s.tokens, s.columns)

        return go

    cases = {"before": run(before), "fast cold": run(fast), "fast warm": run(fast)}
    got = compare(cases, repeats, setup={"fast cold": features.clear_caches})
    ref_wall, ref_cpu = got["before"]
    return [
        {
            "task": task, "template": name, "sentences": len(sents), "tokens": tokens,
            "case": case, "wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3,
            "cpu_us_per_token": cpu * 1e6 / tokens,
            "speedup_wall": ref_wall / wall, "speedup_cpu": ref_cpu / cpu,
        }
        for case, (wall, cpu) in got.items()
    ]  # fmt: skip


def pool_rows(n: int, repeats: int, data_dir: str | None) -> list[dict]:
    """``PoolCache.add`` of the first ``n`` esp sentences into a fresh cache, per template."""
    sents = corpora.load("esp", "train", data_dir)[:n]
    pool = [PoolSentence(i, s.tokens, s.columns) for i, s in enumerate(sents)]
    tokens = sum(len(s.tokens) for s in sents)
    original = features.TEMPLATES["ner"]

    def add(template: Callable) -> Callable[[], None]:
        def go() -> None:
            features.TEMPLATES["ner"] = template
            try:
                PoolCache("ner").add(pool)
            finally:
                features.TEMPLATES["ner"] = original

        return go

    cases = {"before": add(BEFORE["ner"]), "fast cold": add(original)}
    got = compare(cases, repeats, setup={"fast cold": features.clear_caches})
    ref_wall, ref_cpu = got["before"]
    return [
        {
            "call": "PoolCache('ner').add", "sentences": n, "tokens": tokens, "case": case,
            "wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3,
            "speedup_wall": ref_wall / wall, "speedup_cpu": ref_cpu / cpu,
        }
        for case, (wall, cpu) in got.items()
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, tasks=list(TEMPLATE))
    parser.add_argument("--repeats", type=int, help="timed repeats per case (default 7, quick 3)")
    parser.add_argument(
        "--sentences", type=int, help="sentences per task (default 5000, quick 1000)"
    )
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 7)
    n = args.sentences or (1000 if args.quick else 5000)
    load_before = os.getloadavg()
    rows: list[dict] = []
    for task in args.tasks:
        rows += template_rows(task, n, repeats, args.data_dir)
    pool = pool_rows(n, repeats, args.data_dir) if "esp" in args.tasks else []
    load_after = os.getloadavg()
    digits = {"wall_ms": 0, "cpu_ms": 0, "cpu_us_per_token": 2, "speedup_wall": 2, "speedup_cpu": 2}
    tables = {f"Feature templates, medians of {repeats} repeats": format_table(rows, digits=digits)}
    if pool:
        tables["PoolCache.add into a fresh cache (esp)"] = format_table(pool, digits=digits)
    load = f"load average before {load_before}, after {load_after} ({os.cpu_count()} CPUs)"
    tables["Machine"] = f"{load}; Python {platform.python_version()}"
    payload = {
        "templates": rows, "pool_cache": pool, "repeats": repeats,
        "loadavg_before": load_before, "loadavg_after": load_after, "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }  # fmt: skip
    emit(tables, args, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
