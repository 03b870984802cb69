"""Accuracy and speed of the learners against python-crfsuite, side by side on the same features.

Tasks: ``np`` (CoNLL-2000 NP-only chunking), ``chunk`` (full CoNLL-2000), ``esp`` and ``ned``
(CoNLL-2002 NER; train on ``*.train``, test on ``*.testb``). Every learner runs with the dev-tuned
defaults of ``cwal.learners.defaults`` (the same ones ``python -m cwal train`` uses); the test F1
after each epoch is reported, never used to choose anything. python-crfsuite (L-BFGS, c1 = c2 =
0.1) trains on the same feature strings and the same tags. Each runner is a fresh process, so its
peak memory (ru_maxrss) is its own; feature extraction is timed apart from training, and the
numba kernels are loaded before the clock starts.

    python bench/accuracy.py [--quick] [--json PATH] [--tasks np chunk esp ned]
                             [--learners arow cw pa kbest-pa perceptron] [--epochs 10]
                             [--crf-iterations 100] [--crf-bioes np] [--no-crf]
                             [--dev] [--fold last|first|testa] [--set KEY=VALUE ...] [--limit N]
                             [--seeds N]

``--learners default`` runs each task with the learner ``python -m cwal train`` picks for its
template (chunk: arow, ner: cw): the CLI defaults. ``--quick``: np only, arow and cw, 3 epochs,
the first 3,000 training sentences, crfsuite 30 iterations. ``--dev`` scores on the last 10% of the training file instead of the test file and
``--set`` overrides learner parameters: that is how the defaults were tuned, e.g.
``python bench/accuracy.py --dev --tasks chunk --learners arow --no-crf --set encoding=raw``.
``--fold first`` holds out the first 10% instead (the second tuning fold of the defaults);
``--fold testa`` (esp, ned) trains on the whole training file and scores the CoNLL-2002 official
development file (``*.testa``), never the test file.
``--crf-bioes`` also trains crfsuite on BIOES tags, the encoding our chunking default uses.

``--seeds N`` trains every learner N times, in the training orders of seeds 0..N-1 (seed s gives
every learner the same order, so differences between learners can be paired by seed), and adds a
table of the final F1 per learner over the seeds: mean, median, standard deviation, range, and
the mean and range of the per-seed difference to ``arow`` when it ran too. crfsuite (L-BFGS,
order-free) runs once. A table of the final F1 per chunk type (mean over seeds) follows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import bench_parser, emit, format_table, peak_rss_mb, run_worker

from cwal import corpora
from cwal.features import FeatureIndex, get_template
from cwal.learners import LEARNERS, make
from cwal.learners._tags import TagCodec
from cwal.learners.defaults import default_learner, recommended
from cwal.measures import chunk_f1

LEARNER_ORDER = ["arow", "cw", "pa", "kbest-pa", "perceptron", "arow-kc", "cw-kc", "c-spv", "l-spv"]
LEARNER_ORDER += ["mec", "maxent-l1"]
SEED_COLUMNS = ["task", "runner", "n", "mean", "median", "sd", "min", "max", "d_ref", "d_min",
                "d_max"]  # fmt: skip
QUICK = {
    "tasks": ["np"],
    "learners": ["arow", "cw"],
    "epochs": 3,
    "crf_iterations": 50,
    "limit": 3000,
}


def splits(
    task: str, dev: bool, data_dir: str | None, limit: int | None, fold: str = "last"
) -> tuple[list, list]:
    """(train, evaluation): the test file, or with ``dev`` the last (``fold="first"``: the first)
    10% of the training file; ``limit`` keeps the first sentences of the training part only."""
    train = corpora.load(task, "train", data_dir)
    if dev and fold == "testa":  # the CoNLL-2002 official dev file, beside the training file
        held = _testa(task, data_dir)
    elif dev and fold == "first":  # as many sentences as carve_dev holds out, from the start
        n_held = len(corpora.carve_dev(train, 0.1)[1])
        held, train = train[:n_held], train[n_held:]
    elif dev:
        train, held = corpora.carve_dev(train, 0.1)
    else:
        held = corpora.load(task, "test", data_dir)
    return train[:limit], held


def _testa(task: str, data_dir: str | None) -> list:
    """The official development file of a CoNLL-2002 task (``esp.testa``, ``ned.testa``)."""
    from cwal.io import read_conll

    spec = corpora.get_task(task)
    if not spec.train.endswith(".train"):
        raise SystemExit(f"--fold testa: {task} has no official dev file (CoNLL-2002 only)")
    return list(read_conll(corpora.data_dir(data_dir) / spec.train.replace(".train", ".testa")))


def learner_worker(
    task: str,
    learner: str,
    epochs: int,
    data_dir: str | None,
    dev: bool,
    overrides: dict,
    limit: int | None,
    seed: int = 0,
    fold: str = "last",
) -> dict[str, Any]:
    """Train one learner on one task in the training order of ``seed``; F1 on the evaluation
    split after every epoch."""
    spec = corpora.get_task(task)
    train, test = splits(task, dev, data_dir, limit, fold)
    params = {**recommended(spec.template, learner), **overrides}
    warm = make(learner, template=spec.template, **params)  # load the compiled kernels
    warm.fit(train[:20], epochs=1)
    warm.predict(test[:5])
    start = time.perf_counter()
    index = FeatureIndex(spec.template)
    if params["min_count"] > 1:
        index.encode_pruned(train, params["min_count"])
    else:
        index.encode(train)
    extract = time.perf_counter() - start
    del index
    model = make(learner, template=spec.template, **params)
    gold = [s.tags for s in test]
    lengths = [len(s) for s in test]
    curve: list[dict[str, float]] = []
    cache: dict[str, Any] = {}

    def after_epoch(epoch: int, total: int, stats: dict[str, Any]) -> None:
        if "test" not in cache:  # the index is complete once training has begun
            cache["test"] = model.encode(test)
        pred = model.tags_of(model.predict_ids(cache["test"]), lengths)
        report = chunk_f1(gold, pred)
        cache["per_type"] = {t: v["f1"] for t, v in report.per_type.items()}
        curve.append({"f1": report.f1, "seconds": stats["seconds"]})
        print(f"{task} {learner} epoch {epoch}: {curve[-1]}", file=sys.stderr, flush=True)

    fit_start = time.perf_counter()
    model.fit(train, epochs=epochs, seed=seed, progress=after_epoch)
    return {
        "task": task, "runner": learner, "seed": seed, "params": params,
        "f1": [c["f1"] for c in curve], "epoch_seconds": [c["seconds"] for c in curve],
        "extract_seconds": extract, "fit_wall_seconds": time.perf_counter() - fit_start,
        "features": model.n_features_, "labels": len(model.labels_), "peak_mb": peak_rss_mb(),
        "per_type": cache.get("per_type", {}),
    }  # fmt: skip


def crf_worker(
    task: str,
    iterations: int,
    encoding: str,
    data_dir: str | None,
    dev: bool,
    limit: int | None,
    fold: str = "last",
) -> dict[str, Any]:
    """python-crfsuite on the same features and tags (``encoding`` as our learners may use)."""
    import pycrfsuite

    spec = corpora.get_task(task)
    train, test = splits(task, dev, data_dir, limit, fold)
    fn = get_template(spec.template)
    codec = TagCodec(encoding)
    cpu = time.process_time()
    start = time.perf_counter()
    x_train = [fn(s.tokens, s.columns) for s in train]
    extract = time.perf_counter() - start
    trainer = pycrfsuite.Trainer(verbose=False)
    start = time.perf_counter()
    for x, s in zip(x_train, train, strict=True):
        trainer.append(x, codec.encode(s.tags))
    append = time.perf_counter() - start
    del x_train
    trainer.set_params({"c1": 0.1, "c2": 0.1, "max_iterations": iterations})
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "crf.model")
        start = time.perf_counter()
        trainer.train(path)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        pred = [codec.decode(tagger.tag(fn(s.tokens, s.columns))) for s in test]
        tagger.close()
    report = chunk_f1([s.tags for s in test], pred)
    name = "crfsuite" if encoding == "raw" else f"crfsuite-{encoding}"
    return {
        "task": task, "runner": name, "iterations": iterations,
        "f1": [report.f1], "train_seconds": seconds,
        "per_type": {t: v["f1"] for t, v in report.per_type.items()},
        "extract_seconds": extract, "append_seconds": append, "cpu_seconds": cpu,
        "peak_mb": peak_rss_mb(),
    }  # fmt: skip


def learners_for(task: str, names: list[str]) -> list[str]:
    """``names`` with ``default`` replaced by the CLI's learner for ``task``'s template (each
    learner once, in order)."""
    default = default_learner(corpora.get_task(task).template)
    return list(dict.fromkeys(default if n == "default" else n for n in names))


def _setting(item: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with a JSON value (number, true/false) or else a plain string."""
    key, _, value = item.partition("=")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per (task, runner): final F1, speed, memory, and the time to reach CRF's F1."""
    crf = {r["task"]: r for r in rows if r["runner"] == "crfsuite"}
    out = []
    for r in rows:
        line: dict[str, Any] = {"task": r["task"], "runner": r["runner"], "F1": r["f1"][-1]}
        if "seed" in r:
            line["seed"] = r["seed"]
        if "epoch_seconds" in r:
            secs = r["epoch_seconds"]
            best = max(range(len(r["f1"])), key=r["f1"].__getitem__)
            line.update(best=r["f1"][best], best_ep=best + 1, s_epoch=sum(secs) / len(secs),
                        train_s=sum(secs), extract_s=r["extract_seconds"])  # fmt: skip
            ref = crf.get(r["task"])
            if ref is not None:
                reach = next((e for e, f in enumerate(r["f1"]) if f >= ref["f1"][0]), None)
                if reach is not None:
                    line.update(reach_ep=reach + 1, reach_s=sum(secs[: reach + 1]))
                    line["crf_ratio"] = ref["train_seconds"] / max(line["reach_s"], 1e-9)
                line["crf_ratio_all"] = ref["train_seconds"] / max(sum(secs), 1e-9)
        else:
            line.update(train_s=r["train_seconds"], extract_s=r["extract_seconds"],
                        append_s=r["append_seconds"])  # fmt: skip
        line["peak_mb"] = r["peak_mb"]
        out.append(line)
    return out


def over_seeds(rows: list[dict[str, Any]], reference: str = "arow") -> list[dict[str, Any]]:
    """One line per (task, learner): the final F1 over its seeds (n, mean, median, sd, min, max)
    and, where ``reference`` ran with the same seeds, the per-seed difference to it (mean, min,
    max; positive = better than the reference)."""
    finals: dict[tuple[str, str], dict[int, float]] = {}
    for r in rows:
        if "seed" in r:
            finals.setdefault((r["task"], r["runner"]), {})[r["seed"]] = r["f1"][-1]
    out = []
    for (task, runner), by_seed in finals.items():
        f1 = list(by_seed.values())
        line: dict[str, Any] = {
            "task": task, "runner": runner, "n": len(f1), "mean": statistics.fmean(f1),
            "median": statistics.median(f1), "sd": statistics.stdev(f1) if len(f1) > 1 else 0.0,
            "min": min(f1), "max": max(f1),
        }  # fmt: skip
        ref = finals.get((task, reference))
        if ref is not None and runner != reference:
            diffs = [f - ref[s] for s, f in by_seed.items() if s in ref]
            if diffs:
                line.update(d_ref=statistics.fmean(diffs), d_min=min(diffs), d_max=max(diffs))
        out.append(line)
    return out


def per_type(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Final F1 per chunk type per (task, runner), the mean over its seeds."""
    groups: dict[tuple[str, str], list[dict[str, float]]] = {}
    for r in rows:
        if r.get("per_type"):
            groups.setdefault((r["task"], r["runner"]), []).append(r["per_type"])
    out = []
    for (task, runner), runs in groups.items():
        types = sorted({t for run in runs for t in run})
        line: dict[str, Any] = {"task": task, "runner": runner, "n": len(runs)}
        line.update({t: statistics.fmean(run.get(t, 0.0) for run in runs) for t in types})
        out.append(line)
    return out


def mean_curves(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """F1 after each epoch per (task, learner), averaged over its seeds."""
    groups: dict[tuple[str, str], list[list[float]]] = {}
    for r in rows:
        if "epoch_seconds" in r:
            groups.setdefault((r["task"], r["runner"]), []).append(r["f1"])
    out = []
    for (task, runner), curves in groups.items():
        line: dict[str, Any] = {"task": task, "runner": runner}
        for e in range(min(len(c) for c in curves)):
            line[f"ep{e + 1}"] = statistics.fmean(c[e] for c in curves)
        out.append(line)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, tasks=list(corpora.TASKS))
    parser.add_argument("--learners", nargs="+", choices=[*sorted(LEARNERS), "default"],
                        default=LEARNER_ORDER,
                        help="default: the CLI's learner of each task's template (chunk: arow, "
                             "ner: cw)")  # fmt: skip
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--crf-iterations", type=int, default=100)
    parser.add_argument("--crf-bioes", nargs="*", default=["np"], metavar="TASK",
                        help="also train crfsuite on BIOES tags for these tasks (default: np)")  # fmt: skip
    parser.add_argument("--no-crf", action="store_true")
    parser.add_argument(
        "--dev",
        action="store_true",
        help="evaluate on the last 10%% of the training file (for tuning)",
    )
    parser.add_argument("--fold", choices=["last", "first", "testa"], default="last",
                        help="with --dev: hold out the last (default) or the first 10%%, or "
                             "(esp, ned) train on all of it and score the official dev file "
                             "*.testa")  # fmt: skip
    parser.add_argument("--seeds", type=int, default=1, metavar="N",
                        help="train each learner in the orders of seeds 0..N-1 (default 1)")  # fmt: skip
    parser.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE",
                        help="override a learner parameter, e.g. c=0.3 encoding=raw")  # fmt: skip
    parser.add_argument("--limit", type=int, help="train on the first N training sentences only")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, task, *rest = args.worker
        if kind == "learner":
            sets = dict(item.split("=", 1) for item in args.set)
            overrides = {
                k: json.loads(v) if v[:1] in "0123456789-[{tf" else v for k, v in sets.items()
            }
            seed = int(rest[2]) if len(rest) > 2 else 0
            result = learner_worker(
                task, rest[0], int(rest[1]), args.data_dir, args.dev, overrides, args.limit,
                seed, args.fold,
            )  # fmt: skip
        else:
            result = crf_worker(
                task, int(rest[0]), rest[1], args.data_dir, args.dev, args.limit, args.fold
            )
        print(json.dumps(result))
        return 0
    if args.quick:
        args.tasks, args.learners = QUICK["tasks"], QUICK["learners"]
        args.epochs, args.crf_iterations = QUICK["epochs"], QUICK["crf_iterations"]
        args.limit, args.crf_bioes = args.limit or QUICK["limit"], []
    extra = ["--data-dir", args.data_dir] if args.data_dir else []
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    extra += ["--dev", "--fold", args.fold] if args.dev else []
    extra += ["--set", *args.set] if args.set else []
    extra += ["--limit", str(args.limit)] if args.limit else []
    script = Path(__file__).resolve()
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    for task in args.tasks:
        jobs = [] if args.no_crf else [["crf", task, str(args.crf_iterations), "raw"]]
        if not args.no_crf and task in args.crf_bioes:
            jobs.append(["crf", task, str(args.crf_iterations), "bioes"])
        jobs += [
            ["learner", task, name, str(args.epochs), str(seed)]
            for name in learners_for(task, args.learners)
            for seed in range(args.seeds)
        ]
        for job in jobs:
            rows.append(run_worker(script, ["--worker", *job, *extra]))
            r = rows[-1]
            seed = f" seed {r['seed']}" if args.seeds > 1 and "seed" in r else ""
            print(f"[{time.perf_counter() - start:6.0f}s] {task} {r['runner']}{seed}: "
                  f"F1 {r['f1'][-1]:.4f}, peak {r['peak_mb']:.0f} MB", file=sys.stderr, flush=True)  # fmt: skip
    summary = summarize(rows)
    digits = {"F1": 4, "best": 4, "s_epoch": 3, "train_s": 2, "extract_s": 2, "append_s": 2,
              "reach_s": 2, "crf_ratio": 1, "crf_ratio_all": 1, "peak_mb": 0}  # fmt: skip
    columns = ["task", "runner", *(["seed"] if args.seeds > 1 else []), "F1", "best", "best_ep", "s_epoch", "train_s", "extract_s",
               "append_s", "reach_ep", "reach_s", "crf_ratio", "crf_ratio_all", "peak_mb"]  # fmt: skip
    curves = mean_curves(rows)
    held = "testa" if args.fold == "testa" else f"{args.fold} 10% of train"
    split = f"Dev ({held})" if args.dev else "Test"
    each = "F1 after each epoch" + (f" (mean of {args.seeds} seeds)" if args.seeds > 1 else "")
    tables = {
        f"{split} F1 and speed (train_s: training only; reach: first epoch at crfsuite's F1; "
        "crf_ratio: crfsuite train s / our s to reach it)": format_table(summary, columns, digits),
        f"{split} {each}": format_table(curves, digits={k: 4 for k in curves[0]} if curves else None),
    }  # fmt: skip
    types = per_type(rows)
    if types:
        names = sorted({k for line in types for k in line} - {"task", "runner", "n"})
        tables[f"{split} F1 per type (mean over seeds)"] = format_table(
            types, ["task", "runner", "n", *names], {k: 4 for k in names}
        )
    seeded = over_seeds(rows) if args.seeds > 1 else []
    if seeded:
        tables[f"{split} final F1 over {args.seeds} seeds (d_ref: per-seed F1 minus arow's)"] = (
            format_table(seeded, SEED_COLUMNS, digits={k: 4 for k in SEED_COLUMNS[3:]})
        )  # fmt: skip
    meta = {"epochs": args.epochs, "crf_iterations": args.crf_iterations, "quick": args.quick,
            "split": "dev" if args.dev else "test", "fold": args.fold if args.dev else None,
            "set": args.set, "limit": args.limit, "seeds": args.seeds,
            "seconds": time.perf_counter() - start}  # fmt: skip
    emit(tables, args, {"meta": meta, "summary": summary, "over_seeds": seeded, "runs": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
