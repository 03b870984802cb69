"""Does the app's live model label better with word clusters learned from its pool's text?

Offline, with the live learner's settings (``LearnerSpec``: the project's learner with its
default parameters, learning online with ``learn_one``), each corpus is labeled in a seeded
random order with and without clusters (cwal/features/clusters.py) learned from the whole pool's
text; after 50, 200 and 500 labels the model tags held-out sentences: token accuracy and span F1.

Corpora: ``demo`` (the built-in demo project: its 320 pool sentences with the gold tags
demo/make_demo.py generated them with, scored on demo/ner_eval.jsonl; 4,336 tokens, under the
20,000 tokens ``clusters.learn`` requires, so its clusters are *forced*: learned past that
floor), and slices of ``esp`` and ``np`` (training files only: a 10% dev split carved from the
training file is the held-out set, never the test file). Also times ``clusters.learn`` on pools
of 3,000 and 20,000 sentences (no cache, then the cache hit).

    python3 bench/live_clusters.py [--quick] [--json PATH] [--tasks demo esp np] [--seeds 3]

``--quick``: pools of 700 sentences, 200 held out, one order, 50 and 200 labels, the timing on
1,500 sentences. Measured (full run, 6 orders, ``--tasks esp np --seeds 6``): esp span F1
+1.8 / +1.4 / +0.9 points after 50 / 200 / 500 labels, np -1.2 / -0.6 / +0.2: the app turns
pool clusters on for ``ner`` and off for ``chunk`` by default (db.repository.clusters).
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time

import numpy as np
from _common import ROOT, bench_parser, emit, format_table

from cwal.features import FeatureIndex
from cwal.features import clusters as cl
from cwal.io.sentence import Sentence
from cwal.learners import make
from cwal.measures.chunks import chunk_f1
from cwal.simulate.data import load_task

STAGES = (50, 200, 500)


def demo_corpus() -> tuple[list[Sentence], list[Sentence], str]:
    """The demo pool with its generator's gold tags, the demo eval split, the template."""
    sys.path.insert(0, str(ROOT / "demo"))
    import make_demo

    rng = random.Random(make_demo.SEED)
    namer = make_demo.Namer(rng)
    seen: set[tuple[str, ...]] = set()
    out: list[Sentence] = []
    while len(out) < make_demo.N_POOL + make_demo.N_EVAL:
        tokens, tags = make_demo.fill(rng.choice(make_demo.TEMPLATES), namer, rng)
        if tuple(tokens) not in seen:
            seen.add(tuple(tokens))
            out.append(Sentence(tokens, tags))
    return out[: make_demo.N_POOL], out[make_demo.N_POOL :], "ner"


def corpus(task: str, pool: int, held: int, data_dir: str | None):
    if task == "demo":
        return demo_corpus()
    data = load_task(task, data_dir, pool_size=pool, eval_size=held, dev=0.1)
    return data.pool, data.eval, data.template


def tagset(sents: list[Sentence]) -> list[str]:
    types = sorted({t.split("-", 1)[1] for s in sents for t in s.tags if t != "O"})
    return ["O"] + [f"{p}-{t}" for t in types for p in ("B", "I")]


def clusters_of(pool: list[Sentence]) -> tuple[cl.WordClusters | None, bool]:
    """The pool's clusters, and whether they had to be forced past ``MIN_TOKENS``."""
    texts = [s.tokens for s in pool]
    found = cl.learn(texts, cache=False)
    if found is not None:
        return found, False
    sents = [[w.lower() for w in t] for t in texts]
    return cl._learn(sents, cl.SIZES, 64, 2000, 2, 0), True  # noqa: SLF001 -- a forced measurement


def curve(pool, held, template, labels, found, seed: int, stages) -> list[dict]:
    model = make("arow", labels=labels, template=template)
    if found is not None:
        model.features_ = FeatureIndex(template, clusters=found)
    order = np.random.default_rng(seed).permutation(len(pool))
    rows, done = [], 0
    gold = [s.tags for s in held]
    plain = [Sentence(s.tokens, None, s.columns) for s in held]
    for stage in stages:
        if stage > len(pool):
            break
        for i in order[done:stage]:
            s = pool[int(i)]
            model.learn_one(s.tokens, s.tags, **s.columns)
        done = stage
        pred = model.predict(plain)
        flat_p = [t for p in pred for t in p]
        flat_g = [t for g in gold for t in g]
        acc = float(np.mean([a == b for a, b in zip(flat_p, flat_g, strict=True)]))
        rows.append({"labels": stage, "acc": acc, "f1": chunk_f1(gold, pred).f1})
    return rows


def timing(sizes: list[int], data_dir: str | None) -> list[dict]:
    """``clusters.learn`` on the first ``n`` sentences of esp's then ned's training text."""
    from cwal import corpora

    text = [s.tokens for t in ("esp", "ned") for s in corpora.load(t, "train", data_dir)]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CWAL_CACHE_DIR"] = tmp
        for n in sizes:
            texts = text[:n]
            t0 = time.perf_counter()
            found = cl.learn(texts)
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            cl.learn(texts)
            warm = time.perf_counter() - t0
            out.append({"sentences": len(texts), "tokens": sum(map(len, texts)),
                        "words": len(found or ()), "learn_s": cold, "cached_s": warm})  # fmt: skip
    return out


def main() -> None:
    parser = bench_parser(__doc__, tasks=["demo", "esp", "np"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--pool", type=int, default=3000, help="esp/np pool sentences")
    args = parser.parse_args()
    pool_n, held_n, seeds = (700, 200, 1) if args.quick else (args.pool, 1000, args.seeds)
    stages = STAGES[:2] if args.quick else STAGES
    rows, summary = [], []
    for task in args.tasks:
        pool, held, template = corpus(task, pool_n, held_n, args.data_dir)
        labels = tagset(pool + held)
        t0 = time.perf_counter()
        found, forced = clusters_of(pool)
        secs = time.perf_counter() - t0
        print(f"{task}: pool {len(pool)} sentences, {sum(map(len, pool))} tokens; clusters "
              f"{len(found or ())} words{' (forced)' if forced else ''} in {secs:.1f} s",
              flush=True)  # fmt: skip
        per: dict[tuple[str, int], list[dict]] = {}
        for seed in range(seeds):
            for arm, cls in (("plain", None), ("clusters", found)):
                for r in curve(pool, held, template, labels, cls, seed, stages):
                    per.setdefault((arm, r["labels"]), []).append(r)
                    rows.append({"task": task, "arm": arm, "seed": seed, **r})
        for stage in stages:
            a, b = per.get(("plain", stage)), per.get(("clusters", stage))
            if not a or not b:
                continue
            d_f1 = [y["f1"] - x["f1"] for x, y in zip(a, b, strict=True)]
            summary.append({
                "task": task, "labels": stage, "forced": forced,
                "f1_plain": float(np.median([x["f1"] for x in a])),
                "f1_clusters": float(np.median([y["f1"] for y in b])),
                "d_f1_median": float(np.median(d_f1)), "d_f1_min": min(d_f1),
                "acc_plain": float(np.median([x["acc"] for x in a])),
                "acc_clusters": float(np.median([y["acc"] for y in b])),
            })  # fmt: skip
    times = timing([1500] if args.quick else [3000, 20000], args.data_dir)
    tables = {
        f"live model with vs without pool clusters (medians over {seeds} random orders)":
            format_table(summary, digits={"d_f1_min": 4, "d_f1_median": 4}),
        "clusters.learn time (s; cached_s: the per-corpus cache hit)": format_table(
            times, digits={"learn_s": 2, "cached_s": 3}),
    }  # fmt: skip
    emit(tables, args, {"summary": summary, "rows": rows, "timing": times})


if __name__ == "__main__":
    main()
