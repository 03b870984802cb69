"""``python -m cwal simulate``: compare query strategies on a gold corpus.

    python -m cwal simulate --task np --out runs/np
    python -m cwal simulate --pool train.txt --eval test.txt --keep NP --out runs/mine
    python -m cwal simulate --db sqlite:///cwal.sqlite3 --project 3 --name "first look"
    python -m cwal simulate --db URL --resume KEY

Results go to a folder of JSON files (``--out``; rerun the same command to resume) or to the
database (``--db``; resume with ``--resume KEY``). The table at the end gives, per strategy, the
final F1, labeled words, the words needed to reach 95% of the full-data F1 and Random's final F1,
and the area under the F1-vs-words curve; then each strategy's words per picked sentence and its
words to reach Random's final F1 and 95% / 99% of the full-data F1 relative to Random's, with a
95% bootstrap interval over the seeds (five by default); then where the stopping signal fires
(successive models' tags on a stop set agree with kappa >= 0.99 three times in a row) against the
words needed to reach 99% of the full-data F1; ``--json`` prints all of it as JSON instead.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from cwal.cli import UsageError, add_corpus_options, guess_template, read_labeled
from cwal.corpora import TASKS
from cwal.simulate import (
    DEFAULT_SEEDS,
    DEFAULT_STRATEGIES,
    FULL_DATA,
    MODES,
    JsonDirSink,
    Ref,
    SimConfig,
    format_costs,
    recommend,
    run_experiment,
    summarize,
    word_costs,
)
from cwal.simulate.stopping import format_stops, stop_table
from cwal.simulate.summary import format_table

HELP = "compare query strategies on a gold corpus (simulated active learning)"


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _params(items: list[str], scoped: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        scope, _, pair = item.partition(":") if scoped else ("", "", item)
        key, eq, value = pair.partition("=")
        if not eq or not key or (scoped and not scope):
            want = "STRATEGY:KEY=VALUE" if scoped else "KEY=VALUE"
            raise UsageError(f"simulate: expected {want}, got {item!r}")
        target = out.setdefault(scope, {}) if scoped else out
        target[key] = _value(value)
    return out


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``simulate`` subcommand on an argparse subparsers object."""
    p = subparsers.add_parser("simulate", help=HELP, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    data = p.add_argument_group("gold data (a task, files, or a project of the database)")
    data.add_argument("--task", choices=sorted(TASKS), help="a research task (CWAL_DATA_DIR)")
    data.add_argument("--data-dir", help="the research corpora folder (default CWAL_DATA_DIR)")
    data.add_argument("--pool", help="pool file (any format cwal reads), with gold tags")
    data.add_argument("--eval", help="held-out evaluation file, with gold tags")
    add_corpus_options(data)
    data.add_argument("--features", choices=["chunk", "ner"],
                      help="feature template of --pool (default: guessed from its tags)")  # fmt: skip
    data.add_argument("--keep", nargs="+", help="chunk types to keep (e.g. NP); others become O")
    data.add_argument("--pool-size", type=int, help="use only the first N pool sentences")
    data.add_argument("--eval-size", type=int, help="use only the first N eval sentences")
    data.add_argument("--project", type=int, help="a project id (with --db): its gold data")
    run = p.add_argument_group("protocol")
    run.add_argument("--strategies", nargs="+", default=list(DEFAULT_STRATEGIES),
                     help=f"default: {' '.join(DEFAULT_STRATEGIES)}")  # fmt: skip
    run.add_argument("--seeds", nargs="+", type=int, default=list(DEFAULT_SEEDS),
                     help=f"default: {' '.join(map(str, DEFAULT_SEEDS))}")  # fmt: skip
    run.add_argument("--budget", type=int, default=2000, help="labeled sentences at the end")
    run.add_argument("--budget-words", type=int,
                     help="stop each run at this many labeled words instead of --budget sentences "
                     "(the fair budget for strategies that pick shorter sentences)")  # fmt: skip
    run.add_argument("--initial", type=int, default=50)
    run.add_argument("--batch", type=int, default=10, help="sentences labeled per step")
    run.add_argument("--candidates", type=int, default=1000, help="sentences scored per step")
    run.add_argument("--eval-every", type=int, default=100)
    run.add_argument("--mode", choices=MODES, default="retrain",
                     help="retrain: also refit on all labels at each evaluation (the paper's "
                     "curves); online: only one update per labeled sentence")  # fmt: skip
    run.add_argument("--epochs", type=int, default=5, help="epochs of retrain / full-data fits")
    run.add_argument("--learner", default="cw")
    run.add_argument("--learner-param", action="append", default=[], metavar="KEY=VALUE")
    run.add_argument("--strategy-param", action="append", default=[],
                     metavar="STRATEGY:KEY=VALUE")  # fmt: skip
    run.add_argument("--no-full-data", action="store_true", help="skip the full-data reference")
    out = p.add_argument_group("output")
    out.add_argument("--out", type=Path, help="folder of JSON results (rerun to resume)")
    out.add_argument("--db", nargs="?", const="", help="store in the database (default URL)")
    out.add_argument("--name", default="strategy comparison", help="experiment name (--db)")
    out.add_argument("--resume", metavar="KEY", help="resume a database experiment")
    out.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                     help="worker processes on this machine (joblib/loky; 1: in this process)")  # fmt: skip
    out.add_argument("--cluster", metavar="ADDRESS",
                     help="run the cells on a Dask distributed cluster (e.g. tcp://host:8786; "
                     "needs pip install 'dask[distributed]'); --out must be a folder every worker sees")  # fmt: skip
    out.add_argument("--json", action="store_true", help="print the summary as JSON")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_command)
    return p


def config_from(args: argparse.Namespace) -> SimConfig:
    """The simulation settings of the command line (UsageError when they do not hold)."""
    try:
        return _config(args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _config(args: argparse.Namespace) -> SimConfig:
    return SimConfig(
        strategies=tuple(args.strategies), seeds=tuple(args.seeds), initial=args.initial,
        batch=args.batch, candidates=args.candidates, eval_every=args.eval_every,
        budget=args.budget, budget_words=args.budget_words, mode=args.mode, epochs=args.epochs,
        learner=args.learner,
        learner_params=_params(args.learner_param, False), template=None,
        strategy_params=_params(args.strategy_param, True), full_data=not args.no_full_data,
    )  # fmt: skip


def data_ref(args: argparse.Namespace, url: str | None) -> Ref:
    if args.task:
        folder = str(Path(args.data_dir).resolve()) if args.data_dir else None
        kwargs = {"task": args.task, "data_dir": folder, "pool_size": args.pool_size,
                  "eval_size": args.eval_size}  # fmt: skip
        return Ref("cwal.simulate.data:load_task", kwargs)
    if args.pool and args.eval:
        template = args.features
        if template is None:
            template, why = guess_template(read_labeled(args.pool, args.format, args.columns))
            print(f"features: {template} ({why}; override with --features)", file=sys.stderr)
        kwargs = {"pool": str(Path(args.pool).resolve()), "eval": str(Path(args.eval).resolve()),
                  "template": template, "keep": args.keep, "columns": args.columns,
                  "format": args.format, "pool_size": args.pool_size,
                  "eval_size": args.eval_size}  # fmt: skip
        return Ref("cwal.simulate.data:load_files", kwargs)
    if args.project is not None and url is not None:
        return Ref("db.simulations:load_project_data", {"project_id": args.project})
    raise UsageError("simulate: give --task, --pool and --eval files, or --db with --project")


class Bar:
    """A one-line progress bar on stderr, fed by ``run_experiment``'s listener."""

    def __init__(self, config: SimConfig, enabled: bool = True) -> None:
        self.config, self.enabled = config, enabled
        self.cells = {c: 0.0 for c in config.cells()}
        self.start, self.drawn = time.monotonic(), 0.0

    def __call__(self, strategy: str, seed: int, labeled: int, status: str) -> None:
        c = self.config
        if status != "running":
            self.cells[strategy, seed] = 1.0
        elif strategy != FULL_DATA:
            self.cells[strategy, seed] = (labeled - c.initial) / max(c.budget - c.initial, 1)
        now = time.monotonic()
        if self.enabled and (now - self.drawn > 0.5 or status != "running"):
            self.drawn = now
            done = sum(self.cells.values()) / len(self.cells)
            finished = sum(v >= 1.0 for v in self.cells.values())
            spent = now - self.start
            eta = f"{spent / done - spent:5.0f}s left" if done > 0.01 else ""
            bar = "#" * int(30 * done) + "." * (30 - int(30 * done))
            sys.stderr.write(f"\r[{bar}] {100 * done:5.1f}% {finished}/{len(self.cells)} cells "
                             f"{spent:5.0f}s {eta}   ")  # fmt: skip
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def report(curves: Any, as_json: bool, extra: dict[str, Any]) -> None:
    table = summarize(curves)
    if table.empty:
        print("no finished curves")
        return
    pick, why = recommend(table)
    costs, stops = word_costs(curves), stop_table(curves)
    if as_json:
        parts = (("summary", table), ("word_costs", costs), ("stopping", stops))
        records = {name: json.loads(t.reset_index().to_json(orient="records")) if len(t) else []
                   for name, t in parts}  # fmt: skip
        print(json.dumps({**extra, **records, "recommended": pick, "why": why}, indent=2))
    else:
        print(format_table(table))
        print()
        print(format_costs(costs))
        print(format_stops(stops))
        print(f"\nrecommended: {pick} ({why})")


def run_command(args: argparse.Namespace) -> int:
    """Run, or resume, a comparison and print its summary."""
    if args.db is not None:
        if args.cluster:
            raise UsageError("simulate: --cluster works with --out (a folder the workers share)")
        db = importlib.import_module("db.simulations")  # the store is optional for the engine
        url = args.db or db.database_url()
        if args.resume:
            key = args.resume
        else:
            config = config_from(args)
            key = db.start(url, args.name, config, data_ref(args, url), args.project)
            print(f"experiment {key} (resume with --resume {key})", file=sys.stderr)
        bar = Bar(SimConfig.from_dict(db.experiment_config(url, key)), not args.quiet)
        try:
            db.run(url, key, args.workers, listener=bar)
        finally:
            bar.close()
        report(db.curves_of(url, key), args.json, {"experiment": key})
        return 0
    if args.out is None:
        raise UsageError("simulate: give --out FOLDER (JSON results) or --db")
    config = config_from(args)
    ref = data_ref(args, None)
    sink = JsonDirSink(args.out)
    try:
        sink.write_experiment({"config": config.to_dict(), "data": ref.to_dict()})
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    bar = Bar(config, not args.quiet)
    try:
        run_experiment(config, ref, Ref("cwal.simulate.sinks:JsonDirSink",
                                        {"path": str(args.out.resolve())}), args.workers, bar,
                       cluster=args.cluster)  # fmt: skip
    finally:
        bar.close()
    report(sink.curves(), args.json, {"out": str(args.out)})
    return 0
