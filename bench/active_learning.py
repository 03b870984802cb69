"""Query strategies compared by simulated active learning (mejer-crammer-2010 §6 protocol) on
CoNLL-2000 NP chunking and CoNLL-2002 Spanish NER: 50 random sentences to start, 10 labeled per
step from 1,000 random candidates, an evaluation every 100, a budget of 2,000 sentences, 5 seeds,
the default strategies, the CW learner refit on all labels at each evaluation (``--mode online``:
online updates only); plus the learner trained on the whole pool (full-data F1).

Reports per strategy the final F1, labeled words, the words needed to reach Random's final F1
and 95% of the full-data F1, and the area under the F1-vs-words curve; then per strategy the
words per picked sentence and the words to reach Random's final F1 and 95% / 99% of the
full-data F1 relative to Random's, with 95% bootstrap intervals over the seeds; the stopping
signal's words and F1 against the words to 99% of full-data F1; then the targets:
one strategy reaches Random's final F1 with <= 0.5 of Random's words (interval's upper end
<= 0.6); KD-Fixed and KD-PC with <= 0.65; MinConfMargin >= MinMargin beyond 10,000 labeled
words; the whole grid of one corpus in <= 15 minutes on 2 cores.
Results are kept under ``--out`` (rerun to resume an interrupted run).

    python bench/active_learning.py [--quick] [--json PATH] [--tasks np esp] [--mode retrain]

For choosing settings without touching a test split, ``--dev 0.1`` builds pool and evaluation
both from the training file (a seeded 10% held out for evaluation); ``--strategies``, ``--seeds``,
``--epochs``, ``--eval-every``, ``--s``, ``--k``, ``--rank`` (the last three for KD-Fixed and
KD-PC), ``--strategy-params`` (any strategy's) and ``--no-full-data`` narrow or vary the grid. Each distinct setting gets its own folder under --out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cwal.confidence import RANKS  # noqa: E402
from cwal.simulate import (  # noqa: E402
    DEFAULT_SEEDS,
    DEFAULT_STRATEGIES,
    JsonDirSink,
    Ref,
    SimConfig,
    format_costs,
    per_seed,
    recommend,
    run_experiment,
    summarize,
    word_costs,
)
from cwal.simulate.stopping import format_stops, stop_table  # noqa: E402
from cwal.simulate.summary import format_table  # noqa: E402
from cwal.strategies import DIVERSE, STRATEGIES  # noqa: E402

TIME_LIMIT = 15 * 60


KD = ("kd-fixed", "kd-pc")
BEST, BEST_HIGH, KD_MAX = 0.5, 0.6, 0.65
"""Targets: the best strategy's words to Random's final F1 over Random's words (and the upper
end of its interval); KD-Fixed's and KD-PC's."""


def cost_targets(costs, seeds: int) -> dict:
    """The word-cost targets judged from ``word_costs`` (every seed must reach Random's F1)."""
    if costs.empty:
        return {"best": {"met": False}, "kd": {"met": False}}
    ok = costs[(costs["reached_random"] == seeds) & costs["ratio_random"].notna()]
    ok = ok.drop(index="random", errors="ignore")
    best = ok["ratio_random"].idxmin() if len(ok) else None
    row = ok.loc[best] if best is not None else None
    kd = {s: float(costs.loc[s, "ratio_random"]) if s in costs.index else math.nan for s in KD}
    return {
        "best": {
            "met": row is not None
            and row["ratio_random"] <= BEST
            and row["ratio_random_hi"] <= BEST_HIGH,
            "strategy": best,
            "ratio": None if row is None else float(row["ratio_random"]),
            "interval": None
            if row is None
            else [float(row["ratio_random_lo"]), float(row["ratio_random_hi"])],  # fmt: skip
        },
        "kd": {
            "met": all(math.isfinite(v) and v <= KD_MAX for v in kd.values()),
            "ratio": kd,
        },
    }


def kd_params(args: argparse.Namespace) -> dict[str, dict]:
    """The KD strategies' parameters given on the command line (``--s``, ``--k``, ``--rank``)."""
    given = {"s": args.s, "k": args.k, "rank": args.rank}
    params = {key: value for key, value in given.items() if value is not None}
    return {name: dict(params) for name in KD} if params else {}


def strategy_params(args: argparse.Namespace) -> dict[str, dict]:
    """``--strategy-params`` (a JSON object: strategy name -> its parameters) over the KD
    strategies' ``--s``, ``--k``, ``--rank``."""
    params = kd_params(args)
    for name, given in json.loads(args.strategy_params or "{}").items():
        if name not in args.strategies:
            raise SystemExit(f"--strategy-params names {name!r}, which is not in --strategies")
        params[name] = {**params.get(name, {}), **given}
    return params


def run_task(task: str, args: argparse.Namespace) -> dict:
    quick = args.quick
    seeds = tuple(args.seeds) if args.seeds else (0,) if quick else DEFAULT_SEEDS
    config = SimConfig(
        strategies=tuple(args.strategies),
        seeds=seeds,
        budget=300 if quick else args.budget,
        eval_every=args.eval_every or (25 if quick else 100),
        budget_words=args.budget_words,
        mode=args.mode,
        epochs=args.epochs,
        learner=args.learner,
        strategy_params=strategy_params(args),
        full_data=not args.no_full_data,
    )
    sizes = {"pool_size": 3000, "eval_size": 500} if quick else {}
    dev = {"dev": args.dev} if args.dev else {}
    data = Ref("cwal.simulate.data:load_task", {"task": task, **sizes, **dev})
    settings = json.dumps([config.to_dict(), data.to_dict()], sort_keys=True)
    tag = (
        f"{task}{'-dev' if args.dev else ''}-{config.mode}-{config.budget}-{len(config.seeds)}seeds"
        f"{'-quick' if quick else ''}-{hashlib.sha1(settings.encode()).hexdigest()[:8]}"
    )
    out = Path(args.out) / tag
    sink = JsonDirSink(out)
    sink.write_experiment({"config": config.to_dict(), "data": data.to_dict()})
    resumed = not sink.curves().empty
    start = time.perf_counter()
    run_experiment(config, data, Ref("cwal.simulate.sinks:JsonDirSink", {"path": str(out)}),
                   workers=args.workers, cluster=args.cluster)  # fmt: skip
    wall = time.perf_counter() - start
    curves = sink.curves()
    table = summarize(curves)
    last = curves.groupby(["strategy", "seed"]).last()
    cpu = float(last["cpu_seconds"].sum()) if "cpu_seconds" in last else math.nan
    pick, why = recommend(table)
    costs = word_costs(curves)
    rnd_words = table.loc["random", "final_words"] if "random" in table.index else math.nan
    ratio = {s: table.loc[s, "words_to_random"] / rnd_words for s in KD if s in table.index}
    cells = per_seed(curves).set_index(["strategy", "seed"])
    seed_ratio = {
        s: (cells.loc[s, "words_to_random"] / rnd_words).round(3).tolist() for s in ratio
    }  # the mean hides a wide spread: the curves are flat where they cross Random's final F1
    beyond = {s: float(table.loc[s, "f1_beyond"]) if s in table.index else math.nan
              for s in ("min-conf-margin", "min-margin")}  # fmt: skip
    by_seed = cells["f1_beyond"]
    seed_gap = [  # paired by seed: is the mean difference larger than the seeds' spread?
        round(float(by_seed[("min-conf-margin", seed)] - by_seed[("min-margin", seed)]), 5)
        for seed in config.seeds
        if ("min-conf-margin", seed) in by_seed.index and ("min-margin", seed) in by_seed.index
    ]
    targets = {
        "words_vs_random": cost_targets(costs, len(config.seeds)),
        "kd_half_of_random_words": {
            "met": len(ratio) == len(KD)
            and all(
                math.isfinite(r)
                and r <= 0.5
                and table.loc[s, "reached_random"] == len(config.seeds)
                for s, r in ratio.items()
            ),
            "ratio": ratio,
            "per_seed": seed_ratio,
        },
        "minconfmargin_beyond_10k": {
            "met": bool(beyond["min-conf-margin"] >= beyond["min-margin"]),
            "f1": beyond,
            "per_seed_difference": seed_gap,
        },
        "time_limit": {
            "met": (not resumed) and wall <= TIME_LIMIT,
            "seconds": wall,
            "cpu_seconds": cpu,
            "load_average": os.getloadavg()[0],
        },
    }
    return {
        "task": task,
        "config": config.to_dict(),
        "out": str(out),
        "wall_seconds": wall,
        "resumed": resumed,
        "summary": json.loads(table.reset_index().to_json(orient="records")),
        "table": format_table(table),
        "word_costs": json.loads(costs.reset_index().to_json(orient="records"))
        if len(costs)
        else [],
        "costs_table": format_costs(costs),
        "stopping": json.loads(stop_table(curves).reset_index().to_json(orient="records")),
        "stopping_table": format_stops(stop_table(curves)),
        "recommended": pick,
        "why": why,
        "targets": targets,
    }


def show(result: dict) -> None:
    print(f"\n== {result['task']}  ({result['wall_seconds']:.0f} s"
          f"{', resumed' if result['resumed'] else ''}; {result['out']})")  # fmt: skip
    print(result["table"])
    print(f"recommended: {result['recommended']} ({result['why']})\n")
    print(result["costs_table"])
    print(result["stopping_table"])
    t = result["targets"]
    best, kd = t["words_vs_random"]["best"], t["words_vs_random"]["kd"]
    if best.get("strategy"):
        lo, hi = best["interval"]
        print(f"target one strategy <= {BEST} of Random's words (upper <= {BEST_HIGH}): "
              f"{'met' if best['met'] else 'MISSED'} ({best['strategy']} {best['ratio']:.2f} "
              f"[{lo:.2f}, {hi:.2f}])")  # fmt: skip
    else:
        print("target one strategy <= 0.5 of Random's words: MISSED (none reaches it every seed)")
    print(
        f"target KD-Fixed and KD-PC <= {KD_MAX}: {'met' if kd['met'] else 'MISSED'} ("
        + ", ".join(f"{k} {v:.2f}" for k, v in kd["ratio"].items())
        + ")"
    )
    r = t["kd_half_of_random_words"]["ratio"]
    print(f"target KD reach Random's F1 with <= 1/2 its words: "
          f"{'met' if t['kd_half_of_random_words']['met'] else 'MISSED'} "
          f"({', '.join(f'{k} {v:.2f}' for k, v in r.items())} of Random's words)")  # fmt: skip
    for name, values in t["kd_half_of_random_words"].get("per_seed", {}).items():
        shown = ", ".join("-" if math.isnan(v) else f"{v:.2f}" for v in values)
        print(f"  {name} per seed: {shown}")
    b = t["minconfmargin_beyond_10k"]["f1"]
    if math.isfinite(b["min-margin"]) and math.isfinite(b["min-conf-margin"]):
        print(f"target MinConfMargin >= MinMargin beyond 10K words: "
              f"{'met' if t['minconfmargin_beyond_10k']['met'] else 'MISSED'} (mean F1 "
              f"{100 * b['min-conf-margin']:.2f} vs {100 * b['min-margin']:.2f})")  # fmt: skip
        gaps = t["minconfmargin_beyond_10k"].get("per_seed_difference", [])
        if gaps:
            print("  MinConfMargin - MinMargin per seed (F1 points): "
                  + ", ".join(f"{100 * g:+.2f}" for g in gaps))  # fmt: skip
    else:
        print("target MinConfMargin >= MinMargin beyond 10K words: n/a (shorter curves)")
    tl = t["time_limit"]
    verdict = "n/a (resumed)" if result["resumed"] else "met" if tl["met"] else "MISSED"
    print(f"target <= 15 min: {verdict} ({tl['seconds']:.0f} s wall, load average "
          f"{tl['load_average']:.1f}; the cells used {tl['cpu_seconds']:.0f} CPU s, "
          f"{tl['cpu_seconds'] / 2:.0f} s on 2 idle cores)")  # fmt: skip


def plain(value: object) -> object:
    """``value`` as strict JSON data: numbers as floats/ints, NaN and infinity as null."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bool | int | str) or value is None:
        return value
    number = float(value)  # numpy scalars
    return number if math.isfinite(number) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="1 seed, budget 300, small splits, an evaluation every 25")  # fmt: skip
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--tasks", nargs="+", default=["np", "esp"], choices=["np", "esp", "ned"])
    parser.add_argument("--mode", choices=["retrain", "online"], default="retrain")
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--budget-words", type=int,
                        help="stop each run at this many labeled words instead of --budget "
                        "sentences (fair to strategies that pick shorter sentences)")  # fmt: skip
    parser.add_argument("--eval-every", type=int, metavar="SENTENCES",
                        help="evaluate (refit, F1, stopping-signal check) every this many labeled "
                        "sentences (default 100; 25 with --quick, so the signal's 3 checks in a "
                        "row fit in the quick curves)")  # fmt: skip
    parser.add_argument("--learner", default="cw")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--cluster", metavar="ADDRESS", help="a Dask scheduler to run the cells on")
    parser.add_argument("--out", default="/tmp/cwal-bench-active-learning")
    parser.add_argument("--dev", type=float, default=0.0, metavar="FRACTION",
                        help="pool and evaluation both from the training file: a seeded FRACTION "
                        "of it held out for evaluation (never reads the test file)")  # fmt: skip
    parser.add_argument("--strategies", nargs="+", default=list(DEFAULT_STRATEGIES),
                        choices=sorted(STRATEGIES) + [f"{s}{DIVERSE}" for s in sorted(STRATEGIES)])  # fmt: skip
    parser.add_argument("--seeds", type=int, nargs="+", help="default 0 1 2 3 4 (0 with --quick)")
    parser.add_argument("--epochs", type=int, default=SimConfig.epochs, help="retrain epochs")
    parser.add_argument("--s", type=float, help="KD scale of kd-fixed and kd-pc")
    parser.add_argument("--k", type=int, help="KD draws of kd-fixed and kd-pc")
    parser.add_argument("--rank", choices=RANKS, help="KD token ranking of kd-fixed and kd-pc")
    parser.add_argument("--strategy-params", metavar="JSON",
                        help='parameters per strategy, e.g. \'{"errors-per-word": {"density": '
                        '0.5, "rank": "z-delta"}}\'')  # fmt: skip
    parser.add_argument("--no-full-data", action="store_true", help="skip the full-data cells")
    args = parser.parse_args()
    results = []
    for task in args.tasks:
        results.append(run_task(task, args))
        show(results[-1])
    if args.json:
        Path(args.json).write_text(json.dumps(plain(results), indent=2, allow_nan=False))


if __name__ == "__main__":
    main()
