"""Submit-to-next-sentence latency in a real browser: from pressing Enter in the token editor to the
next sentence being shown and editable (measured inside the page, after the next paint), and to
the server's answer (the submission stored, the model updated: "saved").

It runs ``streamlit run app.py`` on a fresh SQLite store, drives Debian's headless Chromium through
Playwright, signs in as an annotator and submits sentence after sentence (the model's pre-filled
labels, as an annotator accepting them would), on the demo project and on a 10,000-sentence pool.
The live model learns from every submission and consolidates in the background meanwhile.

``--part lead`` (``bench/_browser_lead.py``): the lead pages (dashboard, error analysis, review)
on a 10,000-sentence project with 5,000 annotations and a consolidated model, from the click on
the page's link to the page fully rendered (charts drawn): the first visit after the server
start, revisits, and visits right after a new label; medians against the 2 s target.

``--part cold`` (``bench/_browser_cold.py``): a fresh install as a new user meets it (an empty
numba cache, the first lead created with the demo project in the browser, the sidebar to
Annotate): the first sentence shown (target 5 s) and each of the first 20 submits confirmed
(target: the slowest within 1 s).

    python bench/browser.py [--part editor|lead|cold|all] [--quick] [--json PATH] [--sentences N]
                            [--pool N] [--think MS] [--starts N] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from demo.make_demo import sentences  # noqa: E402
from tests.app import harness  # noqa: E402

PASSWORD = "benchmark password"
WARMUP = 5
THINK_MS = 400  # default time on a sentence before Enter: a very fast annotator
TARGET_P95_MS, REACH_P95_MS = 1000.0, 500.0


def percentile(values: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) with linear interpolation."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def make_store(home: Path, pool: int | None) -> str:
    """A store with an annotator and either the demo project or a ``pool``-sentence project."""
    from db import imports, open_database
    from db import repository as repo
    from db.service import DEMO_DIR, DEMO_TYPES, install_demo, tagset

    url = f"sqlite:///{home / 'cwal.sqlite3'}"
    ids = harness.seed(url, [("bench", PASSWORD, "annotator")])
    engine = open_database(url)
    if pool is None:
        project = install_demo(engine)
    else:
        settings = {"tagset": tagset(DEMO_TYPES, "IOB2"), "feature_template": "ner"}
        project = repo.create_project(engine, f"Pool of {pool:,}", settings)
        data = "".join(json.dumps({"tokens": t}) + "\n" for t in sentences(pool)).encode()
        imports.import_bytes(engine, project, data, "pool.jsonl", split="pool")
        imports.import_file(engine, project, DEMO_DIR / "ner_eval.jsonl", split="eval")
    repo.set_member(engine, project, ids["bench"], "annotator")  # annotators see their projects
    engine.dispose()
    return url


def _submissions(url: str) -> int:
    from db import open_database
    from db import repository as repo

    engine = open_database(url)
    try:
        return sum(len(repo.current_annotations(engine, p.id)) for p in repo.list_projects(engine))
    finally:
        engine.dispose()


def measure(url: str, home: Path, n: int, think_ms: int = THINK_MS) -> dict:
    """Sign in, submit ``WARMUP`` + ``n`` sentences ``think_ms`` after each appears; latencies
    of the last ``n`` (ms)."""
    outside: list[float] = []
    with harness.app_server(url, home) as base, harness.chromium() as page:
        harness.sign_in(page, base, "bench", PASSWORD)
        sid = harness.wait_ready(page, timeout=120)
        for _ in range(WARMUP):
            page.wait_for_timeout(think_ms)
            page.keyboard.press("Enter")
            sid = harness.wait_ready(page, sid)
        harness.install_probe(page)
        page.wait_for_timeout(200)  # the probe attaches to the editor
        for _ in range(n):
            page.wait_for_timeout(think_ms)
            start = time.perf_counter()
            page.keyboard.press("Enter")
            sid = harness.wait_ready(page, sid)
            outside.append((time.perf_counter() - start) * 1e3)
        for _ in range(100):  # the last answers may still be on their way
            inside, saved = harness.probe_results(page)
            if len(saved) >= n:
                break
            page.wait_for_timeout(100)
    if len(inside) != n or len(saved) != n:
        raise RuntimeError(f"the in-page probe saw {len(inside)} / {len(saved)} of {n} sentences")
    stored = _submissions(url)
    if stored != WARMUP + n:  # every Enter must have reached the store, none twice
        raise RuntimeError(f"{stored} submissions stored for {WARMUP + n} Enter presses")
    return {
        "n": n,
        "p50_ms": percentile(inside, 0.5),
        "p95_ms": percentile(inside, 0.95),
        "max_ms": max(inside),
        "mean_ms": statistics.fmean(inside),
        "saved_p50_ms": percentile(saved, 0.5),
        "saved_p95_ms": percentile(saved, 0.95),
        "playwright_p50_ms": percentile(outside, 0.5),
    }


def run(n: int, pool: int, think_ms: int = THINK_MS) -> list[dict]:
    rows = []
    for name, size in (("demo project (320 pool)", None), (f"{pool:,}-sentence pool", pool)):
        with tempfile.TemporaryDirectory(prefix="cwal-bench-") as tmp:
            home = Path(tmp)
            started = time.perf_counter()
            url = make_store(home, size)
            setup = time.perf_counter() - started
            row = {"case": name, **measure(url, home, n, think_ms), "setup_s": setup}
            row["think_ms"] = think_ms
            row["target_p95_1s"] = row["p95_ms"] <= TARGET_P95_MS
            row["reach_p95_0.5s"] = row["p95_ms"] <= REACH_P95_MS
            rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    """Enter -> next sentence editable (the target), and Enter -> the server's answer."""
    head = (
        f"{'case':<26} {'n':>4} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'p95<=1s':>7}"
        f" {'saved p50':>9} {'saved p95':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        ok = "yes" if r["target_p95_1s"] else "NO"
        lines.append(
            f"{r['case']:<26} {r['n']:>4} {r['p50_ms']:>7.0f} {r['p95_ms']:>7.0f}"
            f" {r['max_ms']:>7.0f} {ok:>7} {r['saved_p50_ms']:>9.0f} {r['saved_p95_ms']:>9.0f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="editor: 10 sentences, a 2,000 pool; lead: a 2,000-sentence project; cold: 10 "
        "submits, without waiting for the model to be ready",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument(
        "--sentences", type=int, default=None, help="measured sentences (50; cold: 20)"
    )
    parser.add_argument("--pool", type=int, default=None, help="size of the large pool (10000)")
    parser.add_argument(
        "--think", type=int, default=THINK_MS, help="ms on each sentence before Enter (400)"
    )
    parser.add_argument("--part", choices=("editor", "lead", "cold", "all"), default="all")
    parser.add_argument("--starts", type=int, default=None, help="lead: server starts (3; 1)")
    parser.add_argument(
        "--repeats", type=int, default=None, help="lead: warm and after-label rounds (5; 2)"
    )
    args = parser.parse_args(argv)
    payload: dict = {}
    if args.part in ("editor", "all"):
        n = args.sentences or (10 if args.quick else 50)
        pool = args.pool or (2000 if args.quick else 10_000)
        payload["editor"] = rows = run(n, pool, args.think)
        print("Enter to next sentence (annotator)\n" + table(rows), flush=True)
    if args.part in ("lead", "all"):
        from bench import _browser_lead as lead

        starts = args.starts or (1 if args.quick else 3)
        repeats = args.repeats if args.repeats is not None else (2 if args.quick else 5)
        with tempfile.TemporaryDirectory(prefix="cwal-bench-lead-") as tmp:
            payload["lead"] = got = lead.run(args.quick, starts, repeats, repeats, Path(tmp))
        print(f"\nLead pages: click to rendered, medians (setup {got['setup_s']:.0f} s)\n"
              + lead.table(got["rows"]))  # fmt: skip
    if args.part in ("cold", "all"):
        from bench import _browser_cold as cold

        n = args.sentences or (10 if args.quick else 20)
        payload["cold"] = got = cold.run(n, wait_ready=not args.quick)
        print("\nFresh install, empty numba cache, first lead in the browser\n" + cold.table(got))
    if args.json:
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
