"""Per-token confidence, the paper's §5 experiment (mejer-crammer-2010) on np, esp and ned.

Train CW and PA (and the logistic learners and the L1 maxent baseline, ``--learners``) for 10
epochs on the train file minus its last 10% (the dev split: whole documents, as a test set is),
tune each estimator's s and K on dev (by AP as the paper; KD also by ECE and by RMSE), label the
test split and report per method (KD, Delta, KBV, WKBV, the N-best soft-max, maxent's own
probabilities): AP of retrieving the errors, errors among the first 5,000 ranked tokens,
calibration RMSE (paper's bin centres), ECE and seconds. Peer: python-crfsuite's marginals on the
same split and features. Then KD-PC's calibration RMSE against the lowest other methods' and
crfsuite's (the paper's figure: it gates nothing, a constant 1.0 wins it), and the Brier score
(a proper scoring rule) of KD-PC (its vote share at the ECE-tuned s; and its draw margin at the
AP-tuned s through an isotonic map fitted on dev) and of the live app's calibrated Delta
(``MarginMap`` fitted on dev) minus crfsuite's, each with a 95% interval from a paired bootstrap over test sentences. Then the speed of
KD-PC (K = 50, 1,000 Spanish sentences, one core) with its breakdown and the multiply-add floor.

    python bench/confidence.py [--quick] [--json PATH] [--tasks np esp ned] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._confidence_speed import speed  # noqa: E402
from bench._confidence_tasks import (  # noqa: E402
    LEARNERS,
    TASKS,
    crf_peer,
    load_task,
    trained,
)
from cwal.confidence import draw_signal, estimate, fit_map, tune  # noqa: E402
from cwal.confidence.calibration import MarginMap  # noqa: E402
from cwal.confidence.proba import has_proba  # noqa: E402
from cwal.learners import LEARNERS as ALL_LEARNERS  # noqa: E402
from cwal.measures import (  # noqa: E402
    average_precision,
    brier_score,
    calibration_rmse,
    errors_in_top,
    expected_calibration_error,
    paired_difference,
)

K_GRID = (10, 20, 30, 40, 50, 60, 70, 80)
SOFTMAX_S_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)  # N-best soft-max scales (searched beyond the edges)


def measures(key: np.ndarray, ok: np.ndarray, conf=None) -> dict:
    """AP and errors in the first 5,000 by ``key`` (ascending); calibration of ``conf``."""
    row = {"ap": average_precision(key, ok), "err@5000": errors_in_top(key, ok, 5000)}
    if conf is not None:
        row["rmse"] = calibration_rmse(conf, ok)
        row["ece"] = expected_calibration_error(conf, ok)
        row["brier"] = brier_score(conf, ok)
    return row


def gold_of(model, sentences) -> np.ndarray:
    index = {t: i for i, t in enumerate(model.labels_)}
    return np.array([index.get(t, -1) for s in sentences for t in s.tags])


def run_model(task, algo, model, dev, test, quick: bool, tuned: dict, kept: dict) -> list[dict]:
    """Tune every applicable estimator on dev, then measure it on test; ``kept[(algo, label)]``
    gets each absolute method's confidences and correctness (for ``calibration_gaps``)."""
    ks = (50,) if quick else K_GRID
    enc = model.encode(test)
    gold = gold_of(model, test)
    rows: list[dict] = []

    def measure(label: str, method: str, tuned=None, **kw) -> None:
        if tuned is not None:
            kw.setdefault("k", tuned.k)
            kw.setdefault("s", tuned.s)
        start = time.perf_counter()
        conf = estimate(model, enc, method, **kw)
        seconds = time.perf_counter() - start
        ok = conf.labels == gold
        row = {"task": task, "learner": algo, "method": label, "error_rate": 1 - ok.mean()}
        row.update(measures(conf.rank_key(), ok, conf.confidence if conf.absolute else None))
        row.update(seconds=seconds, k=kw.get("k"), s=kw.get("s"))
        row["ones"] = float(np.mean(conf.confidence == 1.0)) if conf.absolute else None
        if conf.absolute:
            kept[(algo, label)] = (conf.confidence, ok)
        rows.append(row)
        print(f"  {algo:4s} {label:28s} AP {row['ap']:.3f}  s={row['s']}  k={row['k']}", flush=True)

    kd = ["kd-fixed"] + (["kd-pc"] if model.has_covariance else [])
    for method in kd:
        name = {"kd-pc": "KD-PC", "kd-fixed": "KD-Fixed"}[method]
        best = tune(model, dev, method, criterion="ap", k_grid=ks, seeds=1 if quick else 3)
        plain = tune(model, dev, method, criterion="ap", rank="votes", k_grid=ks)
        tuned[f"{task}/{algo}/{method}"] = {"ap": best.s, "ap-plain": plain.s}
        measure(name, method, best)
        for rank in ("votes", "votes+delta", "votes+z-delta", "votes+draws", "draw-margin"):
            measure(f"{name} @s-plain {rank}", method, plain, rank=rank)  # item 2, paper's s
        for crit in ("ece", "rmse"):
            cal = tune(model, dev, method, criterion=crit, k_grid=ks)
            tuned[f"{task}/{algo}/{method}"][crit] = cal.s
            measure(f"{name} [s by {crit}]", method, cal)
        approx = tune(model, dev, method, criterion="ap", k_grid=(best.k,), correlated=False)
        measure(f"{name} marginal-approx", method, approx, correlated=False)
        measure(f"{name} independent draws", method, best, antithetic=False)
        if method == "kd-pc":
            measure(f"{name} float64", method, best, dtype=np.float64)
            rows.append(dev_mapped(task, algo, model, dev, enc, gold, best, kept))
    measure("Delta", "delta")
    # the live app's confidence: Delta through the calibration map, fitted here on dev
    dev_conf = estimate(model, model.encode(dev), "delta")
    ok_dev = dev_conf.labels == gold_of(model, dev)
    fitted = MarginMap.fit([(dev_conf.margin, ok_dev)], aged=False)  # one model scored dev
    delta = estimate(model, enc, "delta")
    ok, mapped = delta.labels == gold, fitted(delta.margin)
    row = {"task": task, "learner": algo, "method": MAPPED, "error_rate": 1 - ok.mean()}
    row.update(measures(delta.rank_key(), ok, mapped), seconds=None, k=None, s=None)
    row["ones"] = float(np.mean(mapped == 1.0))
    kept[(algo, MAPPED)] = (mapped, ok)
    rows.append(row)
    for method in ("wkbv", "kbv"):
        measure(method.upper(), method, tune(model, dev, method, criterion="ap", k_grid=ks))
    soft = tune(model, dev, "nbest-softmax", criterion="ap", s_grid=SOFTMAX_S_GRID)
    measure("N-best soft-max", "nbest-softmax", soft)
    cal = tune(model, dev, "nbest-softmax", criterion="ece", s_grid=SOFTMAX_S_GRID)
    measure("N-best soft-max [s by ece]", "nbest-softmax", cal)
    if has_proba(model):
        measure("maxent probabilities", "maxent")
    ok = model.predict_ids(enc) == gold
    row = {"task": task, "learner": algo, "method": "random", "error_rate": 1 - ok.mean()}
    row.update(measures(np.zeros(len(ok)), ok), seconds=0.0, k=None, s=None)
    rows.append(row)
    return rows


def dev_mapped(task, algo, model, dev, enc, gold, best, kept: dict) -> dict:
    """KD-PC at the AP-tuned s and K, its draw margin through an isotonic map fitted on dev
    (``cwal.confidence.fit_map``): a probability finer than the vote share's K + 1 levels."""
    start = time.perf_counter()
    fitted = fit_map(model, dev, "kd-pc", k=best.k, s=best.s)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    conf = estimate(model, enc, "kd-pc", k=best.k, s=best.s, rank="draw-margin")
    mapped = fitted(draw_signal(conf))
    seconds = time.perf_counter() - start
    ok = conf.labels == gold
    row = {"task": task, "learner": algo, "method": DEV_MAP, "error_rate": 1 - ok.mean()}
    row.update(measures(conf.rank_key(), ok, mapped), seconds=seconds, k=best.k, s=best.s)
    row.update(ones=float(np.mean(mapped == 1.0)), fit_seconds=fit_seconds)
    kept[(algo, DEV_MAP)] = (mapped, ok)
    print(f"  {algo:4s} {DEV_MAP:28s} Brier {row['brier']:.4f}  ECE {row['ece']:.4f}", flush=True)
    return row


CALIBRATED = ("cw", "KD-PC [s by ece]")  # the KD-PC row the calibration target is about
MAPPED = "Delta [calibration map]"  # Delta through cwal.confidence.calibration.MarginMap
DEV_MAP = "KD-PC [draw margin, dev map]"  # KD-PC's draw margin through fit_map's isotonic map


def brier_gaps(task: str, test, kept: dict, quick: bool) -> list[dict]:
    """Brier score of KD-PC [s by ece], of KD-PC's draw margin through a dev map and of Delta
    through the calibration map (cw) minus crfsuite's marginals', with a 95% interval of a paired bootstrap over test sentences (the Brier score
    is a proper scoring rule: a constant confidence cannot win it, unlike the paper's RMSE)."""
    crf = kept.get(("crf", "crfsuite marginals"))
    if crf is None:
        return []
    lengths = [len(s) for s in test]
    out = []
    for key in (CALIBRATED, ("cw", DEV_MAP), ("cw", MAPPED)):
        if key not in kept:
            continue
        conf, ok = kept[key]
        d = paired_difference(brier_score, lengths, conf, crf[0], ok, crf[1],
                              replicates=200 if quick else 1000)  # fmt: skip
        out.append({"task": task, "method": f"{key[0]} {key[1]}", "brier": brier_score(conf, ok),
                    "crf_brier": brier_score(*crf), "difference": d.value, "low": d.low,
                    "high": d.high, "upper_le_0": d.high <= 0})  # fmt: skip
    return out


def calibration_gaps(task: str, test, rows: list[dict], kept: dict, quick: bool) -> list[dict]:
    """KD-PC's calibration RMSE minus that of the other absolute methods with the lowest RMSE
    (and crfsuite's), with a 95% interval from a paired bootstrap over test sentences: is a
    difference in the table larger than what resampling the sentences moves it by?"""
    if CALIBRATED not in kept:
        return []
    mine = {(r["learner"], r["method"]): r for r in rows
            if r["task"] == task and r.get("rmse") is not None}  # fmt: skip
    others = sorted((r["rmse"], key) for key, r in mine.items() if key[1].split(" ")[0] != "KD-PC")
    chosen = [key for _, key in others[:3]]
    chosen += [key for key in mine if key[0] == "crf" and key not in chosen]
    lengths = [len(s) for s in test]
    conf, ok = kept[CALIBRATED]
    out = []
    for key in chosen:
        other, ok_other = kept[key]
        d = paired_difference(calibration_rmse, lengths, conf, other, ok, ok_other,
                              replicates=200 if quick else 1000)  # fmt: skip
        out.append(
            {
                "task": task,
                "versus": f"{key[0]} {key[1]}",
                "kd_pc_rmse": mine[CALIBRATED]["rmse"],
                "other_rmse": mine[key]["rmse"],
                "other_ones": mine[key].get("ones"),
                "difference": d.value,
                "low": d.low,
                "high": d.high,
                "significant": d.significant,
            }
        )
    return out


def table(rows: list[dict]) -> str:
    cols = ["task", "learner", "method", "ap", "err@5000", "rmse", "ece", "brier", "seconds", "k",
            "s"]  # fmt: skip
    fmt = {"ap": "{:.3f}", "rmse": "{:.4f}", "ece": "{:.4f}", "brier": "{:.4f}",
           "seconds": "{:.2f}", "s": "{:.3g}"}  # fmt: skip
    lines = [" | ".join(cols), " | ".join("---" for _ in cols)]
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            cells.append("–" if v is None else fmt.get(c, "{}").format(v))
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small splits, 3 epochs, K = 50 only")
    ap.add_argument("--json", type=Path, help="write every figure to this file")
    ap.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/cwal-bench-confidence"))
    ap.add_argument("--no-crf", action="store_true", help="skip the python-crfsuite peer")
    ap.add_argument("--learners", nargs="+", default=LEARNERS, choices=sorted(ALL_LEARNERS),
                    help="learners whose confidence is measured (cw first: the speed figure)")  # fmt: skip
    args = ap.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    epochs = 3 if args.quick else 10
    rows: list[dict] = []
    report: dict = {"rows": rows, "tuned": {}, "speed": None, "calibration_gaps": [],
                    "brier_gaps": []}  # fmt: skip
    for task in args.tasks:
        train, dev, test, template = load_task(task, args.quick)
        kept: dict = {}
        print(f"{task}: train {len(train)}, dev {len(dev)}, test {len(test)} sentences", flush=True)
        for algo in args.learners:
            model, secs = trained(task, algo, train, template, epochs, args.cache)
            print(f"  {algo} trained in {secs:.1f}s", flush=True)
            rows.extend(run_model(task, algo, model, dev, test, args.quick, report["tuned"], kept))
            if algo == "cw" and task == "esp":
                s = next(r["s"] for r in rows if r["task"] == "esp" and r["method"] == "KD-PC")
                report["speed"] = speed(model, test, s, 2 if args.quick else 5)
        if not args.no_crf:
            labels, conf, secs = crf_peer(task, train, test, template, args.cache, args.quick)
            ok = labels == np.array([t for s in test for t in s.tags])
            row = {"task": task, "learner": "crf", "method": "crfsuite marginals"}
            row.update(measures(conf, ok, conf), error_rate=1 - ok.mean(), seconds=secs)
            row.update(k=None, s=None)
            rows.append(row)
            kept[("crf", "crfsuite marginals")] = (conf, ok)
        report["calibration_gaps"].extend(calibration_gaps(task, test, rows, kept, args.quick))
        report["brier_gaps"].extend(brier_gaps(task, test, kept, args.quick))
    print()
    print(table(rows))
    if report["calibration_gaps"]:
        print("\nCalibration RMSE, KD-PC [s by ece] (cw) minus the lowest others and crfsuite,")
        print("95% interval of a paired bootstrap over test sentences (* = excludes 0); the share")
        print("of the other method's tokens at confidence 1.0 (near 100%: a constant 1.0 scores")
        print("|accuracy - 0.975| on the paper's RMSE, whatever its confidence says):")
        for g in report["calibration_gaps"]:
            mark = "*" if g["significant"] else " "
            at_one = "" if g["other_ones"] is None else f"  {100 * g['other_ones']:.1f}% at 1.0"
            print(f"  {g['task']:4s} vs {g['versus']:36s} {g['kd_pc_rmse']:.4f} - "
                  f"{g['other_rmse']:.4f} = {g['difference']:+.4f} "
                  f"[{g['low']:+.4f}, {g['high']:+.4f}] {mark}{at_one}")  # fmt: skip
    if report["brier_gaps"]:
        print("\nBrier score minus crfsuite's marginals', 95% interval of a paired bootstrap over")
        print("test sentences (target: upper bound <= 0 on two of np, esp, ned):")
        for g in report["brier_gaps"]:
            print(f"  {g['task']:4s} {g['method']:32s} {g['brier']:.4f} - {g['crf_brier']:.4f} = "
                  f"{g['difference']:+.4f} [{g['low']:+.4f}, {g['high']:+.4f}]"
                  f"{'  upper <= 0' if g['upper_le_0'] else ''}")  # fmt: skip
    if report["speed"]:
        sp = report["speed"]
        print(
            "\nKD-PC speed, K=50, {sentences} esp sentences, {tokens} tokens, L={labels}:".format(
                **sp
            )
        )
        keys = ("total_1core", "predict+delta", "remap", "sampling", "emissions", "decoding")
        extra = ("margins", "votes_only_1core", "float64_1core", "marginal_approx_1core",
                 "independent_draws_1core")  # fmt: skip
        for key in (*keys, *extra):
            print(f"  {key:14s} {sp[key] * 1e3:8.1f} ms")
        print(f"  floor: {sp['multiply_adds'] / 1e6:.0f} M multiply-adds / "
              f"{sp['rate_per_s'] / 1e9:.1f} G/s = {sp['floor'] * 1e3:.1f} ms; "
              f"all cores wall {sp['wall_all_cores'] * 1e3:.1f} ms")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
