"""Honest confidence from the first label: gold answers replayed through the live service.

For the demo project and slices of esp (CoNLL-2002 Spanish NER), ned (Dutch NER) and np
(CoNLL-2000 NP chunks), a fresh SQLite project with the app's default settings (its tag set given
up front, as the new-project form stores it) is annotated by a simulated annotator who takes each
sentence the live service serves (``ProjectSession.next``) and submits its gold tags.
After 5, 10, 20, 50, 100, 200 and 500 labels (those the pool allows) the bench reads, on a sample
of the unlabeled pool, the confidence annotators see (each token's Delta and predicted tag through
the session's calibration map): token ECE (15 equal-mass bins) overall and over entity tokens
(gold or predicted not O), Brier, mean confidence and accuracy; the dashboard's pool estimate
(``analysis.pool_view``, as the page computes it) minus the accuracy measured on the same
sentences, the width of its 95% interval and whether it holds that accuracy; ECE and mean
confidence minus accuracy of the map without its model-age term (the map before it, fitted as if
every entry came from the current model); how many of the top 10 of the live ranking two draw
seeds share (KD-PC, ``Strategy.rank``, on the queue's candidates); and the seconds the live queue
took to rank its 1,000 candidates. Each seed shuffles the pool. ``--fit-prior`` instead prints
the map fitted on the first ``--max-labels`` labels of demo, ned and np (training files): the
calibration prior's constants.

    python bench/early_calibration.py [--quick] [--json PATH] [--seeds N]
                                      [--corpora demo esp ned np] [--max-labels N] [--pool N]
                                      [--fit-prior]
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _common import bench_parser, emit, format_table  # noqa: E402

from cwal.confidence import estimate  # noqa: E402
from cwal.confidence.calibration import MarginMap  # noqa: E402
from cwal.io import (  # noqa: E402
    Sentence,
    read_conll,
    schemes,  # noqa: E402
    write_conll,
)
from cwal.io.schemes import task_view  # noqa: E402
from cwal.live import ProjectSession  # noqa: E402
from cwal.live.scoring import strategy_for  # noqa: E402
from cwal.measures.confidence import brier_score  # noqa: E402
from db.engine import make_engine, upgrade  # noqa: E402
from db.imports import import_file  # noqa: E402
from db.repository import (  # noqa: E402
    add_user,
    analysis,  # noqa: E402
    create_project,
    list_sentences,
)
from db.store import close_session, live_session  # noqa: E402

DATA = Path(os.environ.get("CWAL_DATA_DIR", ROOT.parent / "shared" / "data"))
DEMO = ROOT / "demo"
STAGES = (5, 10, 20, 50, 100, 200, 500)
CORPORA = {  # file, feature template, chunk types kept (None: all)
    "esp": ("conll2002/esp.train", "ner", None),
    "ned": ("conll2002/ned.train", "ner", None),
    "np": ("conll2000/train.txt", "chunk", {"NP"}),
}
PRIOR_CORPORA = ("demo", "ned", "np")  # --fit-prior: training files only, never a test file
TARGETS = {10: (0.10, 0.05), 50: (0.05, 0.03), 200: (0.03, None)}  # labels: (ECE, |gap|)


def ece_equal_mass(conf: np.ndarray, ok: np.ndarray, bins: int = 15) -> float:
    """ECE over ``bins`` bins of equal token count (sorted by confidence)."""
    if conf.size == 0:
        return float("nan")
    order = np.argsort(conf, kind="stable")
    parts = np.array_split(order, min(bins, conf.size))
    return float(sum(len(p) * abs(conf[p].mean() - ok[p].mean()) for p in parts) / conf.size)


def tagset(types: list[str]) -> list[str]:
    """The tag set the app's project form stores for these entity types (IOB2, ``O`` first):
    a project knows its labels before the first one is given."""
    return ["O"] + [f"{p}-{t}" for t in types for p in sorted(schemes.get("IOB2").alphabet)]


def corpus(name: str, n: int, seed: int, folder: Path) -> tuple[Path, dict, dict]:
    """The pool file (shuffled by ``seed``), project settings and gold tags by token tuple."""
    rng = random.Random(seed)
    if name == "demo":
        sys.path.insert(0, str(DEMO))
        import make_demo

        gen = random.Random(make_demo.SEED)
        namer, gold = make_demo.Namer(gen), {}
        while len(gold) < make_demo.N_POOL:
            tokens, tags = make_demo.fill(gen.choice(make_demo.TEMPLATES), namer, gen)
            gold.setdefault(tuple(tokens), tags)
        sents = [Sentence(list(t), g) for t, g in gold.items()]
        types = sorted({t.split("-", 1)[1] for g in gold.values() for t in g if t != "O"})
        settings = {"scheme": "IOB2", "feature_template": "ner", "learner": "arow",
                    "tagset": tagset(types)}  # fmt: skip
    else:
        rel, template, keep = CORPORA[name]
        sents = []
        for s in read_conll(DATA / rel):
            tags = task_view(s.tags, keep) if keep else s.tags
            sents.append(Sentence(s.tokens, tags, s.columns))
        sents = sents[:n]
        types = sorted({t.split("-", 1)[1] for s in sents for t in s.tags if t != "O"})
        settings = {"scheme": "IOB2", "strict_scheme": False, "feature_template": template,
                    "tagset": tagset(types)}  # fmt: skip
    rng.shuffle(sents)
    path = folder / f"{name}-{seed}.conll"
    columns = ["word", *sorted(sents[0].columns), "tag"]
    write_conll(sents, path, columns=columns)
    return path, settings, {tuple(s.tokens): list(s.tags) for s in sents}


def measure(live: ProjectSession, engine, pid: int, gold: dict, seed: int) -> dict:
    """The figures of one stage (see the module docstring)."""
    live.wait_idle()
    labeled = {i for i, ids in live.live.labeled.items() if ids}
    sents = [s for s in list_sentences(engine, pid) if s.id not in labeled]
    sample = random.Random(seed).sample(sents, min(600, len(sents)))
    batch = [Sentence(list(s.tokens), None, dict(s.columns or {})) for s in sample]
    pred = live.model.predict(batch)
    delta = estimate(live.model, batch, "delta").margin
    truth = [gold[tuple(s.tokens)] for s in sample]
    flat_pred = np.array([t for p in pred for t in p])
    conf = live.calibration(delta, flat_pred)
    flat_gold = np.array([t for g in truth for t in g])
    ok = (flat_pred == flat_gold).astype(float)
    entity = (flat_gold != "O") | (flat_pred != "O")
    view = analysis.pool_view(engine, pid)
    shown = view.pool.groupby("sentence_id")["predicted"].apply(list)
    by_id = {s.id: gold[tuple(s.tokens)] for s in sents}
    hits = [p == g for sid, tags in shown.items() for p, g in zip(tags, by_id[sid], strict=True)]
    scored = live.queue.current
    cands = {s.id: s for s in list_sentences(engine, pid) if s.id in set(scored.candidates)}
    cand_sents = [Sentence(list(cands[i].tokens), None, dict(cands[i].columns or {}))
                  for i in scored.candidates]  # fmt: skip
    tops = []
    for draw in (1, 2):
        strategy = strategy_for("kd-pc", k=live.config.k, s=scored.s, candidates=1000)
        ranking = strategy.rank(live.model, cand_sents, 7919 * draw + seed)
        tops.append({scored.candidates[i] for i in ranking.order[:10]})
    record = live.store.calibration_keys(pid)
    static = MarginMap.fit(record, aged=False)(delta, flat_pred)  # the map without its age term
    measured, (low, high) = float(np.mean(hits)), view.pool_interval
    return {
        "ece": ece_equal_mass(conf, ok),
        "ece_no_age": ece_equal_mass(static, ok),
        "gap_no_age": float(static.mean() - ok.mean()),
        "ece_entity": ece_equal_mass(conf[entity], ok[entity]),
        "brier": brier_score(conf, ok),
        "confidence": float(conf.mean()),
        "accuracy": float(ok.mean()),
        "gap": view.pool_estimate - measured,
        "interval": high - low,
        "covered": int(low <= measured <= high),
        "top10": len(tops[0] & tops[1]),
        "rank_s": scored.seconds,
        "map_labels": live.calibration.labels,
        "s": scored.s,
    }


def run(name: str, seed: int, args, folder: Path, record: list | None = None) -> list[dict]:
    """Replay ``name`` shuffled by ``seed`` up to ``args.max_labels``: one row per stage. With
    ``record``, only label (no stage figures) and append the prequential record to it."""
    path, settings, gold = corpus(name, args.pool, seed, folder)
    engine = make_engine(f"sqlite:///{folder / f'early-{uuid.uuid4().hex[:8]}.sqlite3'}")
    upgrade(engine)
    user = add_user(engine, f"ann-{uuid.uuid4().hex[:6]}", "pw")
    pid = create_project(engine, f"{name}-{seed}", settings)
    import_file(engine, pid, path)
    gold_by_id = {s.id: gold[tuple(s.tokens)] for s in list_sentences(engine, pid)}
    live = live_session(engine, pid)  # the session the dashboard's pool view reads too
    rows, done, start = [], 0, time.perf_counter()
    try:
        stages = [s for s in STAGES if s <= min(args.max_labels, len(gold_by_id) - 20)]
        for stage in stages if record is None else [args.max_labels]:
            while done < stage:
                (sug,) = live.next(user)
                live.submit(sug.sentence_id, gold_by_id[sug.sentence_id], user, 1.0)
                done += 1
            if record is not None:
                live.wait_idle()
                record.extend(live.store.calibration_keys(pid))
                break
            row = {"corpus": name, "seed": seed, "labels": stage,
                   **measure(live, engine, pid, gold, seed)}  # fmt: skip
            row["minutes"] = (time.perf_counter() - start) / 60
            rows.append(row)
            print(format_table([row]).splitlines()[-1], flush=True)
    finally:
        close_session(engine, pid)
        engine.dispose()
    return rows


def summary(rows: list[dict]) -> list[dict]:
    """Per corpus and stage: the worst seed of each figure, against the issue's targets."""
    out = []
    for key in sorted({(r["corpus"], r["labels"]) for r in rows}):
        group = [r for r in rows if (r["corpus"], r["labels"]) == key]
        worst_ece = max(r["ece"] for r in group)
        worst_gap = max(abs(r["gap"]) for r in group)
        target = next((TARGETS[t] for t in sorted(TARGETS, reverse=True) if key[1] >= t), None)
        met = None
        if target is not None:
            met = worst_ece <= target[0] and (target[1] is None or worst_gap <= target[1])
        out.append({"corpus": key[0], "labels": key[1], "seeds": len(group),
                    "worst_ece": worst_ece, "worst_|gap|": worst_gap,
                    "min_top10": min(r["top10"] for r in group),
                    "covered": f"{sum(r['covered'] for r in group)}/{len(group)}",
                    "median_rank_s": float(np.median([r["rank_s"] for r in group])),
                    "target": "-" if met is None else ("met" if met else "MISSED")})  # fmt: skip
    return out


VAGUE = ((0.0, 0.0, 0.0, 0.0), (100.0,) * 4)  # --fit-prior: each run's own fit


def fit_prior(args) -> None:
    """Print the mean and spread of the map ``(a, b, c, e)`` fitted (under a vague prior) on each
    prequential record of :data:`PRIOR_CORPORA`: the calibration prior's constants."""
    fits = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in PRIOR_CORPORA:
            for seed in range(args.seeds):
                part: list = []
                run(name, seed, args, Path(tmp), record=part)
                m = MarginMap.fit(part, prior=VAGUE[0], prior_sd=VAGUE[1])
                fits.append((m.a, m.b, m.c, m.e))
                print(f"{name} seed {seed}: a {m.a:.3f} b {m.b:.3f} c {m.c:.3f} e {m.e:.3f} "
                      f"on {m.labels} labels, {m.tokens} tokens", flush=True)  # fmt: skip
    mean, sd = np.mean(fits, axis=0), np.std(fits, axis=0, ddof=1)
    print(f"PRIOR = ({', '.join(f'{v:.3f}' for v in mean)}); "
          f"sd ({', '.join(f'{v:.3f}' for v in sd)}) over {len(fits)} records")  # fmt: skip


def main() -> None:
    p = bench_parser(__doc__)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--corpora", nargs="+", default=["demo", "esp", "np"],
                   choices=["demo", *CORPORA])  # fmt: skip
    p.add_argument("--max-labels", type=int, default=500, help="the last stage to reach")
    p.add_argument("--pool", type=int, default=3000, help="sentences of esp / np in the pool")
    p.add_argument(
        "--fit-prior",
        action="store_true",
        help="fit the calibration prior (cwal.confidence.calibration.PRIOR) on the "
        f"first --max-labels labels of {', '.join(PRIOR_CORPORA)} (training files)",
    )
    args = p.parse_args()
    if args.quick:
        args.seeds, args.corpora, args.max_labels = 1, ["demo"], 20
    missing = [c for c in args.corpora if c in CORPORA and not (DATA / CORPORA[c][0]).exists()]
    if missing:
        sys.exit(f"corpora {missing} need {DATA} (set CWAL_DATA_DIR)")
    if args.fit_prior:
        fit_prior(args)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.corpora:
            for seed in range(args.seeds):
                rows += run(name, seed, args, Path(tmp))
    cols = ["corpus", "seed", "labels", "ece", "ece_entity", "brier", "confidence", "accuracy",
            "gap", "interval", "covered", "ece_no_age", "gap_no_age", "top10", "s", "rank_s",
            "map_labels", "minutes"]  # fmt: skip
    tables = {
        "Per seed and stage (confidence = Delta through the session's calibration map)":
            format_table(rows, cols),
        "Worst seed per stage (targets: ECE <= .10 and |gap| <= .05 from 10 labels; <= .05 and "
        "<= .03 from 50; ECE <= .03 from 200; top-10 overlap >= 7)": format_table(summary(rows)),
    }  # fmt: skip
    emit(tables, args, {"rows": rows, "summary": summary(rows)})


if __name__ == "__main__":
    main()
