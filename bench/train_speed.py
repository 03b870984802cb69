"""The whole ``python -m cwal train`` command against python-crfsuite's feature extraction plus
training, in one run, with the CLI's default settings.

For each task the cwal command (reading, features, epochs, saving the model; compiled kernels
already in the on-disk cache: one untimed warm-up run first) and a crfsuite worker (our template's
feature strings, then L-BFGS with c1 = c2 = 0.1; timed from the first feature to the trained
model) alternate ``--repeats`` times; the table gives medians, the ratio of the medians
(crfsuite / cwal: the issue's target is >= 10), the same for CPU seconds (steadier than wall
time on a loaded machine), cwal's peak memory (the child's ru_maxrss) and
the test F1 of the last cwal model (``python -m cwal evaluate``) and of crfsuite.

    python bench/train_speed.py [--quick] [--json PATH] [--tasks chunk esp ned] [--repeats N]
                                [--crf-iterations 100]

``--quick``: np on the first 2,000 training sentences, one repeat, crfsuite 30 iterations. Run
it under ``nice`` on a shared machine: both sides then suffer the same load.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, bench_parser, emit, format_table

from cwal import corpora

ACCURACY = Path(__file__).resolve().parent / "accuracy.py"
COLUMNS = ["task", "sentences", "cwal_s", "crf_s", "ratio", "cwal_cpu_s", "crf_cpu_s", "cpu_ratio",
           "cwal_peak_mb", "cwal_f1", "crf_f1",
           "cwal_runs", "crf_runs"]  # fmt: skip


def _peak_of(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MB, CPU seconds) of a child, read with wait4 (its own figures)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{err[-2000:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def one_task(task: str, repeats: int, iterations: int, limit: int | None,
             data_dir: str | None) -> dict[str, Any]:  # fmt: skip
    """Alternate the cwal command and the crfsuite worker ``repeats`` times on one task."""
    spec = corpora.get_task(task)
    root = corpora.data_dir(data_dir)
    with tempfile.TemporaryDirectory() as tmp:
        train_file, test_file = str(root / spec.train), str(root / spec.test)
        n = len(corpora.load(task, "train", data_dir))
        if limit or spec.keep is not None:  # np's NP-only view and --limit: write the view out
            from cwal.io import write_conll

            sents = corpora.load(task, "train", data_dir)[:limit]
            n = len(sents)
            train_file = str(Path(tmp) / "train.txt")
            write_conll(sents, train_file)
            test_file = str(Path(tmp) / "test.txt")
            write_conll(corpora.load(task, "test", data_dir), test_file)
        model = str(Path(tmp) / "model.npz")
        train = [sys.executable, "-m", "cwal", "train", "--train", train_file, "--model", model,
                 "--quiet"]  # fmt: skip
        crf = [sys.executable, str(ACCURACY), "--worker", "crf", task, str(iterations), "raw"]
        crf += ["--limit", str(limit)] if limit else []
        crf += ["--data-dir", data_dir] if data_dir else []
        _peak_of(train)  # warm-up: the kernels compile into the on-disk cache once
        cwal_s, crf_s, peaks, cwal_cpu, crf_cpu = [], [], [], [], []
        crf_f1 = float("nan")
        for _ in range(repeats):
            wall, peak, cpu = _peak_of(train)
            cwal_s.append(wall)
            cwal_cpu.append(cpu)
            peaks.append(peak)
            done = subprocess.run(crf, capture_output=True, text=True, cwd=ROOT, check=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            crf_s.append(row["extract_seconds"] + row["append_seconds"] + row["train_seconds"])
            crf_cpu.append(row["cpu_seconds"])
            crf_f1 = row["f1"][-1]
            print(f"{task}: cwal train {wall:.1f}s ({peak:.0f} MB), crfsuite {crf_s[-1]:.1f}s",
                  file=sys.stderr, flush=True)  # fmt: skip
        scores = str(Path(tmp) / "scores.json")
        ev = [sys.executable, "-m", "cwal", "evaluate", "--model", model, "--test", test_file,
              "--json", scores]  # fmt: skip
        subprocess.run(ev, capture_output=True, text=True, cwd=ROOT, check=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
        cwal_f1 = json.loads(Path(scores).read_text())["f1"]
    med_cwal, med_crf = statistics.median(cwal_s), statistics.median(crf_s)
    return {
        "task": task, "sentences": n, "cwal_s": med_cwal, "crf_s": med_crf,
        "ratio": med_crf / med_cwal, "cwal_peak_mb": max(peaks), "cwal_f1": cwal_f1,
        "cwal_cpu_s": statistics.median(cwal_cpu), "crf_cpu_s": statistics.median(crf_cpu),
        "cpu_ratio": statistics.median(crf_cpu) / statistics.median(cwal_cpu),
        "crf_f1": crf_f1, "cwal_runs": " ".join(f"{s:.1f}" for s in cwal_s),
        "crf_runs": " ".join(f"{s:.1f}" for s in crf_s),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, tasks=list(corpora.TASKS))
    parser.set_defaults(tasks=["chunk", "esp", "ned"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--crf-iterations", type=int, default=100)
    parser.add_argument("--limit", type=int, help="the first N training sentences only")
    args = parser.parse_args(argv)
    if args.quick:
        args.tasks, args.repeats, args.crf_iterations = ["np"], 1, 30
        args.limit = args.limit or 2000
    start = time.perf_counter()
    rows = [
        one_task(t, args.repeats, args.crf_iterations, args.limit, args.data_dir)
        for t in args.tasks
    ]
    digits = {
        "cwal_s": 1,
        "crf_s": 1,
        "ratio": 2,
        "cwal_cpu_s": 1,
        "crf_cpu_s": 1,
        "cpu_ratio": 2,
        "cwal_peak_mb": 0,
        "cwal_f1": 4,
        "crf_f1": 4,
    }
    title = (f"python -m cwal train (whole command, defaults) vs crfsuite extraction + training "
             f"({args.crf_iterations} iterations), medians of {args.repeats}; ratio = crf / cwal")  # fmt: skip
    meta = {"repeats": args.repeats, "crf_iterations": args.crf_iterations,
            "limit": args.limit, "seconds": time.perf_counter() - start,
            "load_avg": os.getloadavg()}  # fmt: skip
    emit({title: format_table(rows, COLUMNS, digits)}, args, {"meta": meta, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
