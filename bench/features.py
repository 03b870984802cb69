"""Feature extraction speed: the cached feature templates against the plain implementation they
replaced (kept below verbatim as ``before``), in one run.

For each task (``esp``: the ``ner`` template on CoNLL-2002 Spanish, ``np``: the ``chunk`` template
on CoNLL-2000; POS column included) the first sentences of the training file are extracted by:
``before`` (the old templates), ``fast cold`` (the word and tag caches emptied before each repeat: a
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
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._common import bench_parser, emit, format_table  # noqa: E402
from cwal import corpora, features  # noqa: E402
from cwal.live.pool import PoolCache  # noqa: E402
from cwal.live.protocol import PoolSentence  # noqa: E402

TEMPLATE = {"esp": "ner", "np": "chunk"}

# --- before: cwal/features.py's templates as they were, verbatim (the "before" timings) --------

_PAD_LEFT = ("<s-2>", "<s-1>")
_PAD_RIGHT = ("</s+1>", "</s+2>")


def _window(seq: Sequence[str]) -> list[str]:
    return [*_PAD_LEFT, *seq, *_PAD_RIGHT]


def before_word_shape(word: str) -> str:
    """Collapsed character classes: ``McDonald's`` -> ``XxXx'x``, ``1.8`` -> ``d.d``."""
    out: list[str] = []
    for ch in word:
        if ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        elif ch.isdigit():
            c = "d"
        else:
            c = ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def before_chunk_template(
    tokens: Sequence[str], columns: dict[str, Sequence[str]]
) -> list[list[str]]:
    """Chunking features: Sha & Pereira (2003) -- words and POS tags in a +-2 window, POS bigrams
    and trigrams, word bigrams, word/POS conjunctions -- plus word shapes, suffixes of 2-4
    letters, a 3-letter prefix, POS/shape and POS/suffix conjunctions (dev-tuned additions)."""
    w = _window([t.lower() for t in tokens])
    sh = _window([before_word_shape(t) for t in tokens])
    pos = columns.get("pos")
    t = _window(pos) if pos is not None else None
    feats: list[list[str]] = []
    for c in range(2, len(tokens) + 2):
        lw = w[c]
        f = [
            "b",
            f"w-2={w[c - 2]}",
            f"w-1={w[c - 1]}",
            f"w0={lw}",
            f"w+1={w[c + 1]}",
            f"w+2={w[c + 2]}",
            f"w-2|w-1={w[c - 2]}|{w[c - 1]}",
            f"w-1|w0={w[c - 1]}|{lw}",
            f"w0|w+1={lw}|{w[c + 1]}",
            f"w+1|w+2={w[c + 1]}|{w[c + 2]}",
            f"sh0={sh[c]}",
            f"sh-1|sh0={sh[c - 1]}|{sh[c]}",
            f"sh0|sh+1={sh[c]}|{sh[c + 1]}",
            f"s2={lw[-2:]}",
            f"s3={lw[-3:]}",
            f"s4={lw[-4:]}",
            f"pre3={lw[:3]}",
        ]
        if t is not None:
            p0 = t[c]
            f += [
                f"p-2={t[c - 2]}",
                f"p-1={t[c - 1]}",
                f"p0={p0}",
                f"p+1={t[c + 1]}",
                f"p+2={t[c + 2]}",
                f"p-2|p-1={t[c - 2]}|{t[c - 1]}",
                f"p-1|p0={t[c - 1]}|{p0}",
                f"p0|p+1={p0}|{t[c + 1]}",
                f"p+1|p+2={t[c + 1]}|{t[c + 2]}",
                f"p-2|p-1|p0={t[c - 2]}|{t[c - 1]}|{p0}",
                f"p-1|p0|p+1={t[c - 1]}|{p0}|{t[c + 1]}",
                f"p0|p+1|p+2={p0}|{t[c + 1]}|{t[c + 2]}",
                f"w0|p0={lw}|{p0}",
                f"w-1|p0={w[c - 1]}|{p0}",
                f"w+1|p0={w[c + 1]}|{p0}",
                f"w-1|p-1={w[c - 1]}|{t[c - 1]}",
                f"w+1|p+1={w[c + 1]}|{t[c + 1]}",
                f"w0|p-1={lw}|{t[c - 1]}",
                f"w0|p+1={lw}|{t[c + 1]}",
                f"p0|sh0={p0}|{sh[c]}",
                f"p0|s3={p0}|{lw[-3:]}",
            ]
        feats.append(f)
    return feats


def before_ner_template(
    tokens: Sequence[str], columns: dict[str, Sequence[str]]
) -> list[list[str]]:
    """NER features (no gazetteer): lowercased words +-2 and the word as written, word bigrams,
    shapes +-2 with bigram/trigram and word/shape conjunctions, prefixes and suffixes up to 4
    letters (also of the neighbours), token length, capitalisation in and out of first position,
    digit and hyphen flags, and POS +-1 (with POS/shape) where a POS column exists."""
    n = len(tokens)
    low = _window([t.lower() for t in tokens])
    sh = _window([before_word_shape(t) for t in tokens])
    pos = columns.get("pos")
    t = _window(pos) if pos is not None else None
    feats: list[list[str]] = []
    for i in range(n):
        c = i + 2
        word = tokens[i]
        lw = low[c]
        f = [
            "b",
            f"w-2={low[c - 2]}",
            f"w-1={low[c - 1]}",
            f"w0={lw}",
            f"w+1={low[c + 1]}",
            f"w+2={low[c + 2]}",
            f"W0={word}",
            f"w-1|w0={low[c - 1]}|{lw}",
            f"w0|w+1={lw}|{low[c + 1]}",
            f"sh-2={sh[c - 2]}",
            f"sh-1={sh[c - 1]}",
            f"sh0={sh[c]}",
            f"sh+1={sh[c + 1]}",
            f"sh+2={sh[c + 2]}",
            f"sh-1|sh0={sh[c - 1]}|{sh[c]}",
            f"sh0|sh+1={sh[c]}|{sh[c + 1]}",
            f"sh-1|sh0|sh+1={sh[c - 1]}|{sh[c]}|{sh[c + 1]}",
            f"w-1|sh0={low[c - 1]}|{sh[c]}",
            f"sh0|w+1={sh[c]}|{low[c + 1]}",
            f"sh-1|w0={sh[c - 1]}|{lw}",
            f"w0|sh+1={lw}|{sh[c + 1]}",
            f"len={min(len(word), 8)}",
            f"suf3-1={low[c - 1][-3:]}",
            f"pre3-1={low[c - 1][:3]}",
            f"suf3+1={low[c + 1][-3:]}",
        ]
        for k in range(1, min(len(lw), 4) + 1):
            f.append(f"pre{k}={lw[:k]}")
            f.append(f"suf{k}={lw[-k:]}")
        if i == 0:
            f.append("first")
        if word[:1].isupper():
            f.append("cap&first" if i == 0 else "cap&mid")
            f.append("cap")
        if word.isupper():
            f.append("allcap")
        if any(ch.isdigit() for ch in word):
            f.append("digit")
            if word.isdigit():
                f.append("alldigit")
        if "-" in word:
            f.append("hyphen")
        if t is not None:
            f += [
                f"p-1={t[c - 1]}",
                f"p0={t[c]}",
                f"p+1={t[c + 1]}",
                f"p-1|p0={t[c - 1]}|{t[c]}",
                f"p0|p+1={t[c]}|{t[c + 1]}",
                f"p0|sh0={t[c]}|{sh[c]}",
            ]
        feats.append(f)
    return feats


BEFORE = {"chunk": before_chunk_template, "ner": before_ner_template}

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
