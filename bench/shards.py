"""Shard-parallel training: test F1 and wall time of one process against P shards trained in
worker processes and combined by the product, KL or average rule (``cwal.learners.shards``).

Tasks: ``np`` (CoNLL-2000 NP chunking) and, unless ``--quick``, ``esp`` and ``ned`` (CoNLL-2002
NER). The learner (default ``cw``) runs with the dev-tuned defaults of ``cwal.learners.defaults``.
Every fit runs in a fresh process which, before the clock starts, loads the compiled kernels and,
for P > 1, starts the loky workers with a tiny sharded fit (that one-off cost is reported
as ``start_s``), as a long-running process such as the app has them. ``wall_s`` is the whole
``fit`` (feature extraction included): ``model.fit(...)`` against ``fit_shards(model, ...,
shards=P, rule=rule, workers=W)`` on W loky worker processes; the product rule also runs with
W = 1 (the P shards trained in turn in the fitting process: the same model, so the 1- against
2-worker wall time is the parallel speed-up alone). The configurations of a task run back to back, ``--repeats`` times; the median
wall time is reported (F1 is the same in every repeat: the fits are seeded), with the 1-minute
load average after each fit (``loads``): the machine is shared, and the scheduler gives each
session one share of the cores, so shards only gain when a core is otherwise idle.

``--ipm`` also compares, in one process (F1 only, no timing), combining once after all epochs
with iterative parameter mixing (McDonald et al. 2010: combine after every epoch, restart every
shard from the combination).

    python bench/shards.py [--quick] [--json PATH] [--tasks np esp ned] [--learner cw]
                           [--epochs 10] [--repeats 3] [--shards 2] [--limit N] [--ipm]

``--quick``: np only, the first 3,000 training sentences, 3 epochs, one repeat.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import bench_parser, emit, format_table, run_worker

from cwal import corpora
from cwal.features import Encoded
from cwal.learners import LEARNERS, SequenceLearner, make
from cwal.learners.defaults import recommended
from cwal.learners.shards import combine, fit_shards

QUICK = {"tasks": ["np"], "epochs": 3, "repeats": 1, "limit": 3000}


def _model(task: str, learner: str) -> SequenceLearner:
    spec = corpora.get_task(task)
    return make(learner, template=spec.template, **recommended(spec.template, learner))


def fit_worker(task: str, learner: str, epochs: int, shards: int, rule: str, workers: int,
               data_dir: str | None, limit: int | None) -> dict[str, Any]:  # fmt: skip
    """One timed fit (P = ``shards`` on ``workers`` processes) and its test F1."""
    train = corpora.load(task, "train", data_dir)[:limit]
    test = corpora.load(task, "test", data_dir)

    def fit(model: SequenceLearner, data: list, epochs: int) -> SequenceLearner:
        if shards == 1:
            return model.fit(data, epochs=epochs, seed=0)
        return fit_shards(model, data, epochs, 0, shards, rule, workers=workers)

    start = time.perf_counter()
    fit(_model(task, learner), train[:50], 1)  # warm up
    start_s = time.perf_counter() - start
    model = _model(task, learner)
    start = time.perf_counter()
    fit(model, train, epochs)
    wall = time.perf_counter() - start
    return {"task": task, "P": shards, "W": workers, "rule": rule if shards > 1 else "-",
            "f1": model.score(test).f1, "wall_s": wall, "start_s": start_s,
            "load": os.getloadavg()[0], "features": model.n_features_}  # fmt: skip


def _subset(enc: Encoded, gold: np.ndarray, idx: np.ndarray) -> tuple[Encoded, np.ndarray]:
    """The sentences ``idx`` of an encoded batch as their own batch, with their gold ids."""
    so, to = enc.sent_offsets, enc.tok_offsets
    tok = np.concatenate([np.arange(so[b], so[b + 1]) for b in idx])
    feats = np.concatenate([enc.feat_ids[to[t] : to[t + 1]] for t in tok])
    lens = to[tok + 1] - to[tok]
    sent = np.concatenate([[0], np.cumsum(so[idx + 1] - so[idx])])
    offs = np.concatenate([[0], np.cumsum(lens)])
    return Encoded(feats, offs.astype(np.int64), sent.astype(np.int64)), gold[tok]


def ipm_worker(task: str, learner: str, epochs: int, shards: int, data_dir: str | None,
               limit: int | None) -> dict[str, Any]:  # fmt: skip
    """Test F1 of one-shot combination and of iterative parameter mixing, both rules, simulated
    in one process on the same seeded shards (one index over all the data, as fit_shards)."""
    train = corpora.load(task, "train", data_dir)[:limit]
    test = corpora.load(task, "test", data_dir)
    base = _model(task, learner)
    internal = [base.codec_.encode(s.tags) for s in train]
    base._add_labels(t for tags in internal for t in tags)
    mc = base.params["min_count"]
    enc = base.features_.encode_pruned(train, mc) if mc > 1 else base.features_.encode(train)
    base._grow(base.n_features_, exact=True)
    gold = base._tag_ids([t for tags in internal for t in tags])
    split = np.array_split(np.random.default_rng(0).permutation(len(train)), shards)
    parts = [_subset(enc, gold, np.sort(p)) for p in split]
    rngs: dict[tuple[str, int], np.random.Generator] = {}

    def epoch(model: SequenceLearner, i: int, key: str) -> None:
        rng = rngs.setdefault((key, i), np.random.default_rng([0, i]))
        model._run(rng.permutation(parts[i][0].n_sentences).astype(np.int64), *parts[i])

    out: dict[str, Any] = {"task": task, "P": shards}
    for rule in ("product", "kl"):
        copies = [copy.deepcopy(base) for _ in parts]
        for i, c in enumerate(copies):
            for _ in range(epochs):
                epoch(c, i, f"once-{rule}")
        out[f"once_{rule}"] = combine(copies, rule, start=base).score(test).f1
        mixed = base
        for _ in range(epochs):
            copies = [copy.deepcopy(mixed) for _ in parts]
            for i, c in enumerate(copies):
                epoch(c, i, f"ipm-{rule}")
            mixed = combine(copies, rule, start=mixed)
        out[f"ipm_{rule}"] = mixed.score(test).f1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, tasks=["np", "esp", "ned"])
    parser.add_argument("--learner", choices=sorted(LEARNERS), default="cw")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--limit", type=int, help="train on the first N training sentences only")
    parser.add_argument("--ipm", action="store_true", help="also compare iterative mixing (F1)")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, task, *rest = args.worker
        if kind == "fit":
            result = fit_worker(task, args.learner, args.epochs, int(rest[0]), rest[1],
                                int(rest[2]), args.data_dir, args.limit)  # fmt: skip
        else:
            result = ipm_worker(task, args.learner, args.epochs, args.shards, args.data_dir,
                                args.limit)  # fmt: skip
        print(json.dumps(result))
        return 0
    if args.quick:
        args.tasks, args.epochs = QUICK["tasks"], QUICK["epochs"]
        args.repeats, args.limit = QUICK["repeats"], args.limit or QUICK["limit"]
    extra = ["--learner", args.learner, "--epochs", str(args.epochs), "--shards", str(args.shards)]
    extra += ["--data-dir", args.data_dir] if args.data_dir else []
    extra += ["--limit", str(args.limit)] if args.limit else []
    script = Path(__file__).resolve()
    P = str(args.shards)
    configs = [("1", "-", "1"), (P, "product", "1")]
    configs += [(P, r, P) for r in ("product", "kl", "average")]
    runs: list[dict[str, Any]] = []
    began = time.perf_counter()
    for task in args.tasks:
        for rep in range(args.repeats):
            for shards, rule, workers in configs:  # back to back: the same load for each
                argv = ["--worker", "fit", task, shards, rule, workers, *extra]
                runs.append(run_worker(script, argv))
                runs[-1]["repeat"] = rep
                r = runs[-1]
                print(f"[{time.perf_counter() - began:6.0f}s] {task} P={shards} W={workers} "
                      f"{r['rule']}: "
                      f"F1 {r['f1']:.4f} wall {r['wall_s']:.2f}s", file=sys.stderr, flush=True)  # fmt: skip
    summary = []
    for task in args.tasks:
        one = statistics.median(r["wall_s"] for r in runs if r["task"] == task and r["P"] == 1)
        f1_one = next(r["f1"] for r in runs if r["task"] == task and r["P"] == 1)
        for shards, rule, workers in configs:
            mine = [r for r in runs if r["task"] == task and str(r["P"]) == shards
                    and r["rule"] in (rule, "-") and str(r["W"]) == workers]  # fmt: skip
            wall = statistics.median(r["wall_s"] for r in mine)
            summary.append({"task": task, "P": int(shards), "W": int(workers),
                            "rule": mine[0]["rule"],
                            "F1": mine[0]["f1"], "dF1_pts": 100 * (mine[0]["f1"] - f1_one),
                            "wall_s": wall, "speedup": one / wall,
                            "walls": " ".join(f"{r['wall_s']:.1f}" for r in mine),
                            "loads": " ".join(f"{r['load']:.1f}" for r in mine),
                            "start_s": statistics.median(r["start_s"] for r in mine)})  # fmt: skip
    tables = {
        f"Test F1 and wall time of fit ({args.learner}, {args.epochs} epochs, median of "
        f"{args.repeats}; P shards on W worker processes; dF1_pts: F1 points against P = 1; "
        f"start_s: one-off warm-up)": format_table(
            summary, digits={"F1": 4, "dF1_pts": 2, "wall_s": 2, "speedup": 2, "start_s": 2}
        )
    }  # fmt: skip
    payload: dict[str, Any] = {"summary": summary, "runs": runs}
    if args.ipm:
        ipm = [run_worker(script, ["--worker", "ipm", task, *extra]) for task in args.tasks]
        tables["Combining once after all epochs against after every epoch (IPM), test F1, "
               "one process"] = format_table(ipm, digits={k: 4 for k in ipm[0]})  # fmt: skip
        payload["ipm"] = ipm
    payload["meta"] = {"learner": args.learner, "epochs": args.epochs, "repeats": args.repeats,
                       "limit": args.limit, "quick": args.quick,
                       "seconds": time.perf_counter() - began}  # fmt: skip
    emit(tables, args, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
