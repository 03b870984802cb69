"""Pre-fill threshold: keystrokes to correct each served sentence, replayed on the demo project.

A fresh SQLite demo project (the app's default settings, the pool shuffled by each seed) is
annotated by a simulated annotator who takes each sentence the live service serves and submits
its gold tags. Before submitting, the bench counts for every threshold the actions needed to turn
the pre-fill (``cwal.live.prefill.confident_spans`` of the served prediction and calibrated
confidence) into the gold spans (``cwal.live.prefill.keystrokes``: one per gold span not
pre-filled, one per wrong pre-filled span nothing overwrites). Threshold 0 is the old policy (the
whole prediction), above 1 pre-fills nothing. Figures: keystrokes per sentence in stages of labels
(1-10, 11-50, 51-N) and overall, wrong pre-filled spans per sentence, and the share of pre-filled
spans that were right. The threshold chosen (``choose``) has the fewest keystrokes among those
within 0.02 of the least keystrokes plus wrong spans shown: keystrokes alone favour pre-filling
everything (a wrong span under a gold one is overwritten by the same key press that labels a blank
one), but a wrong pre-filled label is also an error the annotator must catch or lets through.

    python bench/prefill.py [--quick] [--json PATH] [--seeds N] [--labels N]
"""

from __future__ import annotations

import sys
import tempfile
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _common import bench_parser, emit, format_table  # noqa: E402
from early_calibration import corpus  # noqa: E402

from cwal.io import schemes  # noqa: E402
from cwal.live import ProjectSession  # noqa: E402
from cwal.live.prefill import THRESHOLD, confident_spans, keystrokes  # noqa: E402
from db.engine import make_engine, upgrade  # noqa: E402
from db.imports import import_file  # noqa: E402
from db.repository import add_user, create_project, list_sentences  # noqa: E402
from db.store import SqlStore  # noqa: E402

THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.01)
STAGES = ((1, 10), (11, 50), (51, 10**9))


def run(seed: int, labels: int, folder: Path) -> list[dict]:
    """One replay: per served sentence, its label number and keystrokes per threshold."""
    path, settings, gold = corpus("demo", 0, seed, folder)
    engine = make_engine(f"sqlite:///{folder / f'prefill-{uuid.uuid4().hex[:8]}.sqlite3'}")
    upgrade(engine)
    user = add_user(engine, f"ann-{uuid.uuid4().hex[:6]}", "pw")
    pid = create_project(engine, f"demo-{seed}", settings)
    import_file(engine, pid, path)
    gold_by_id = {s.id: gold[tuple(s.tokens)] for s in list_sentences(engine, pid)}
    live = ProjectSession(SqlStore(engine), pid)
    rows = []
    try:
        for n in range(1, min(labels, len(gold_by_id)) + 1):
            live.wait_idle()
            (sug,) = live.next(user)
            truth = gold_by_id[sug.sentence_id]
            rows.append({"seed": seed, "label": n, "predicted": list(sug.predicted or []),
                         "confidence": sug.confidence, "gold": list(truth)})  # fmt: skip
            live.submit(sug.sentence_id, truth, user, 1.0)
    finally:
        live.close()
        engine.dispose()
    return rows


def costs(rows: list[dict]) -> list[dict]:
    """Per served sentence: keystrokes, pre-filled and right spans for every threshold."""
    out = []
    for r in rows:
        want = schemes.spans(r["gold"], "IOB2")
        row = {"label": r["label"]}
        for t in THRESHOLDS:
            kept = confident_spans(r["predicted"], r["confidence"], "IOB2", t)
            row[t] = keystrokes(kept, want)
            row[f"kept{t}"] = len(kept)
            row[f"right{t}"] = len(set(kept) & set(want))
        out.append(row)
    return out


def summary(records: list[dict]) -> list[dict]:
    """Mean keystrokes per sentence by threshold and stage, and the precision of the pre-fill."""
    rows = costs(records)
    out = []
    for t in THRESHOLDS:
        row: dict = {"threshold": t}
        for lo, hi in STAGES:
            part = [r for r in rows if lo <= r["label"] <= hi]
            name = f"{lo}-{hi}" if hi < 10**9 else f"{lo}+"
            row[f"keys/sent {name}"] = float(np.mean([r[t] for r in part])) if part else None
        row["keys/sent all"] = float(np.mean([r[t] for r in rows]))
        wrong = [r[f"kept{t}"] - r[f"right{t}"] for r in rows]
        row["wrong shown/sent"] = float(np.mean(wrong))
        row["keys+wrong"] = row["keys/sent all"] + row["wrong shown/sent"]
        kept = sum(r[f"kept{t}"] for r in rows)
        row["prefilled spans"] = kept
        row["right %"] = 100.0 * sum(r[f"right{t}"] for r in rows) / kept if kept else None
        out.append(row)
    return out


def choose(table: list[dict], tolerance: float = 0.02) -> float:
    """The threshold: among those within ``tolerance`` of the least keystrokes plus wrong spans
    shown (a wrong pre-filled label is a keystroke or an error the annotator lets through), the
    one with the fewest keystrokes."""
    low = min(r["keys+wrong"] for r in table)
    near = [r for r in table if r["keys+wrong"] <= low + tolerance]
    return min(near, key=lambda r: r["keys/sent all"])["threshold"]


def main() -> None:
    p = bench_parser(__doc__)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--labels", type=int, default=200, help="sentences annotated per seed")
    args = p.parse_args()
    if args.quick:
        args.seeds, args.labels = 1, 40
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            rows += run(seed, args.labels, Path(tmp))
    table = summary(rows)
    best = choose(table)
    tables = {
        f"Keystrokes per sentence to correct the pre-fill ({args.seeds} seeds x {args.labels} "
        f"labels; the app's THRESHOLD is {THRESHOLD}, this run's choice {best})":
            format_table(table),
    }  # fmt: skip
    emit(tables, args, {"summary": table, "best": best, "threshold": THRESHOLD,
                        "records": rows})  # fmt: skip


if __name__ == "__main__":
    main()
