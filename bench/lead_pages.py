"""The lead pages: how long each takes to render, and whether the pool-accuracy estimate can be
trusted.

1. Render time of the dashboard, error analysis and review pages (Streamlit's AppTest runs the
   page script as the server does) on a project of 10,000 sentences and 5,000 annotations with a
   consolidated checkpoint: ``first_s`` each page alone in a fresh process (nothing imported but
   Streamlit, no view cached: the first page after a server start), ``cold_s`` the pages in turn
   in the benchmark's process (the engine already imported, no view cached: the dashboard, then
   error analysis, then review, as a lead opens them), warm (nothing changed) and after a new
   label (a new model version: the dashboard and error analysis serve the views of up to
   ``analysis.PAGE_LAG`` labels ago while the current ones are computed in the background,
   ``stale`` says whether they did; ``fresh_after_s``: label to every view current; the review
   page always computes the current view). ``target_met``: cold, warm and after a label within
   ``TARGET_S``.
2. The pool-accuracy estimate against the measured token accuracy: the real live service
   (``ProjectSession``) serves sentences and a gold annotator labels them, on the demo project
   (its pool's gold regenerated) and on a CoNLL-2002 Spanish pool; at every checkpoint the
   estimate (mean calibrated KD-PC confidence on the unlabeled pool sample) is set against the
   accuracy on those same tokens (true pool accuracy) and on the evaluation split.

    python bench/lead_pages.py [--quick] [--json PATH] [--part render|estimate|all]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._common import bench_parser, emit, format_table  # noqa: E402

PAGES = ("dashboard", "error_analysis", "review")
TARGET_S = 2.0
ESTIMATE_POINTS = 2.0  # the estimate should stay within 2 points after 200 labels
# Streamlit's first element in a process inspects the whole stack once (~0.2 s); in the server
# app.py's sidebar pays it before any page, so the benchmark pays it before timing a page too.
WARM_UP = "import streamlit as st\nst.caption('warm-up')"
FIRST_RENDER = """
import sys, time
from streamlit.testing.v1 import AppTest
AppTest.from_string(sys.argv[3]).run()
at = AppTest.from_file(sys.argv[1], default_timeout=300)
at.session_state["cw_user_id"] = int(sys.argv[2])
start = time.perf_counter()
at.run()
seconds = time.perf_counter() - start
if at.exception or at.error:
    sys.exit(f"{sys.argv[1]}: {at.exception or [e.value for e in at.error]}")
print(seconds)
"""


def first_render(page: str, lead: int) -> float:
    """Seconds of the page's render in a fresh process (the store from the environment)."""
    args = [str(ROOT / "pages" / f"{page}.py"), str(lead), WARM_UP]
    done = subprocess.run(
        [sys.executable, "-c", FIRST_RENDER, *args], cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return float(done.stdout.split()[-1])


def render_times(home: Path, n_labeled: int, n_unlabeled: int) -> list[dict]:
    """Seconds per page render: cold, warm and after one new label."""
    from streamlit.testing.v1 import AppTest

    from db import open_database
    from db import repository as repo
    from db.repository import analysis
    from tests.app.test_lead_pages import build_big

    url = f"sqlite:///{home / 'render.sqlite3'}"
    os.environ["CWAL_DATABASE_URL"], os.environ["CWAL_HOME"] = url, str(home)
    engine = open_database(url)
    lead = repo.add_user(engine, "lena", "benchmark password", role="lead")
    start = time.perf_counter()
    big = build_big(engine, lead, n_labeled, n_unlabeled, 300)
    print(f"built the project in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    def run(page: str) -> float:
        at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=300)
        at.session_state["cw_user_id"] = lead
        t0 = time.perf_counter()
        at.run()
        seconds = time.perf_counter() - t0
        if at.exception or at.error:
            raise RuntimeError(f"{page}: {at.exception or [e.value for e in at.error]}")
        return seconds

    rows = {p: {"page": p, "first_s": first_render(p, lead)} for p in PAGES}
    AppTest.from_string(WARM_UP).run()
    for p in PAGES:
        rows[p]["cold_s"] = run(p)
    for p in PAGES:
        rows[p]["warm_s"] = run(p)
    sentence = analysis.unlabeled_pool_ids(engine, big.project)[0]
    n = len(repo.get_sentence(engine, sentence).tokens)
    repo.submit_annotation(engine, sentence, lead, ["O"] * n)
    t_label = time.perf_counter()
    for p in PAGES:
        rows[p]["new_label_s"] = run(p)
        rows[p]["stale"] = analysis.refreshing(engine, big.project)
    analysis.wait_fresh(engine, big.project)
    fresh_after = time.perf_counter() - t_label  # until every view reflects the new label
    for r in rows.values():
        r["fresh_after_s"] = fresh_after
        r["target_met"] = max(r["cold_s"], r["warm_s"], r["new_label_s"]) <= TARGET_S
    engine.dispose()
    return list(rows.values())


def _gold_demo() -> dict[tuple[str, ...], list[str]]:
    from tests.app.test_lead_pages import demo_gold

    return demo_gold()


def estimate_curve(home: Path, corpus: str, n_label: int, n_pool: int) -> list[dict]:
    """Label with the live service and a gold annotator; one row per checkpoint."""
    import numpy as np

    from cwal import reports
    from cwal.live import CheckpointMeta
    from db import imports, open_database
    from db import repository as repo
    from db.repository import analysis
    from db.service import install_demo
    from db.store import close_session, live_session

    url = f"sqlite:///{home / f'{corpus}.sqlite3'}"
    engine = open_database(url)
    user = repo.add_user(engine, "gold", "benchmark password", role="annotator")
    if corpus == "demo":
        project = install_demo(engine)
        gold = _gold_demo()
    else:
        import json

        from cwal.corpora import load
        from cwal.io import schemes

        train, dev = load("esp", "train"), load("esp", "test")[:500]
        for s in train + dev:  # a few CoNLL-2002 chunks open with I-: read as IOB2
            s.tags = schemes.repair(s.tags or [], "IOB2")
        tags = sorted({t for s in train for t in s.tags or ()})
        settings = {"scheme": "IOB2", "tagset": tags, "feature_template": "ner",
                    "strategy_params": {"candidates": 300}}  # fmt: skip
        project = repo.create_project(engine, "CoNLL-2002 Spanish", settings)
        pool = train[:n_pool]
        data = "".join(json.dumps({"tokens": s.tokens}) + "\n" for s in pool).encode()
        imports.import_bytes(engine, project, data, "pool.jsonl", split="pool")
        evals = "".join(json.dumps({"tokens": s.tokens, "tags": s.tags}) + "\n" for s in dev)
        imports.import_bytes(engine, project, evals.encode(), "eval.jsonl", split="eval")
        gold = {tuple(s.tokens): s.tags for s in pool}
    service = live_session(engine, project)
    start = time.perf_counter()
    for i in range(n_label):
        got = service.next(user)
        if not got:
            break
        s = got[0]
        service.submit(s.sentence_id, list(gold[tuple(s.tokens)]), user, 5.0)
        if i % 50 == 49:
            service.wait_idle(600)
            print(f"{corpus}: {i + 1} labeled, {time.perf_counter() - start:.0f} s",
                  file=sys.stderr)  # fmt: skip
    service.wait_idle(600)
    close_session(engine, project)

    settings = repo.get_project(engine, project).settings
    log = analysis.label_log(engine, project)
    sample = analysis.pool_sample_ids(engine, project)
    pool_rows = analysis.split_sentences(engine, project, "pool", sample)
    evals = [(s, g) for s, g in analysis.split_sentences(engine, project, "eval") if g]
    cache = reports.FeatureCache(settings.get("feature_template", "chunk"))
    rows = []
    for meta in repo.list_checkpoints(engine, project):
        x = meta.last_annotation_id or 0
        state = reports.checkpoint_state(
            settings, CheckpointMeta(meta.id, x, dict(meta.info)),
            repo.get_checkpoint(engine, meta.id).state,
        )  # fmt: skip
        labeled = reports.labeled_sentences(log[log["id"] <= x])
        unl = [s for s, _ in pool_rows if s.id not in labeled]
        frame = reports.token_frame(state, cache.encode(state.model, unl), unl, seed=meta.id)
        truth = [t for s in unl for t in gold[tuple(s.tokens)]]
        pool_acc = float(np.mean(frame["predicted"].to_numpy() == np.array(truth)))
        ev = reports.evaluate(state, cache.encode(state.model, [s for s, _ in evals]),
                              [g for _, g in evals])  # fmt: skip
        est = state.expected_accuracy(frame["delta"].to_numpy(), frame["predicted"].to_numpy())
        rows.append(
            {
                "corpus": corpus,
                "labeled": len(labeled),
                "version": state.version,
                "s_pc": state.s,
                "estimate": est,
                "pool_accuracy": pool_acc,
                "eval_accuracy": ev["accuracy"] if ev else float("nan"),
                "eval_f1": ev["f1"] if ev else float("nan"),
                "gap_pool_pts": 100 * (est - pool_acc),
                "gap_eval_pts": 100 * (est - (ev["accuracy"] if ev else float("nan"))),
                "pool_tokens": len(frame),
            }
        )
    engine.dispose()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--part", choices=("render", "estimate", "all"), default="all")
    args = parser.parse_args(argv)
    tables, payload = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        if args.part in ("render", "all"):
            sizes = (1000, 1000) if args.quick else (5000, 5000)
            rows = render_times(home, *sizes)
            title = f"Lead page render seconds ({sum(sizes):,} sentences, {sizes[0]:,} labeled)"
            tables[title] = format_table(rows)
            payload["render"] = rows
        if args.part in ("estimate", "all"):
            runs = [("demo", 120 if args.quick else 320, 320)]
            runs.append(("esp", 150 if args.quick else 600, 800 if args.quick else 3000))
            rows = []
            for corpus, n_label, n_pool in runs:
                rows += estimate_curve(home, corpus, n_label, n_pool)
            tables["Pool-accuracy estimate vs measured token accuracy"] = format_table(
                rows, digits={"s_pc": 5}
            )
            after = [r for r in rows if r["labeled"] >= 200]
            payload["estimate"] = rows
            payload["estimate_within_2pts_after_200"] = {
                c: all(abs(r["gap_pool_pts"]) <= ESTIMATE_POINTS for r in after if r["corpus"] == c)
                for c in {r["corpus"] for r in after}
            }
    emit(tables, args, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
