"""What every bench script shares: the same options (``--quick``, ``--json PATH``, ``--tasks``,
``--data-dir``), a plain-text table, JSON output, peak memory, and running a worker in its own
process (so its peak memory is its own).

    from _common import bench_parser, emit
    parser = bench_parser(__doc__, tasks=["np", "chunk"])
    args = parser.parse_args()
    emit(rows, args, meta={...})
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def bench_parser(doc: str | None, tasks: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """An argparse parser with the options every bench script takes."""
    p = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick", action="store_true", help="a small subset that runs in under a minute"
    )
    p.add_argument("--json", metavar="PATH", help="also write every figure as JSON to PATH")
    if tasks is not None:
        p.add_argument("--tasks", nargs="+", choices=list(tasks), default=list(tasks))
        p.add_argument("--data-dir", help="the shared corpora folder (default CWAL_DATA_DIR)")
    return p


def _cell(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.{digits}f}"
    return str(value)


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
                 digits: dict[str, int] | None = None) -> str:  # fmt: skip
    """Rows as an aligned plain-text table; ``digits`` per column for floats (default 3)."""
    if not rows:
        return "(no rows)"
    columns = list(columns or rows[0].keys())
    digits = digits or {}
    cells = [[_cell(r.get(c), digits.get(c, 3)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    line = "  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True))
    out = [line, "-" * len(line)]
    for row in cells:
        out.append("  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)))
    return "\n".join(out)


def emit(tables: dict[str, str], args: argparse.Namespace, payload: dict[str, Any]) -> None:
    """Print each titled table; with ``--json`` write ``payload`` to that path."""
    for title, table in tables.items():
        print(f"\n{title}\n{table}", flush=True)
    if getattr(args, "json", None):
        Path(args.json).write_text(json.dumps(payload, indent=2, default=float) + "\n")
        print(f"\nwrote {args.json}")


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_worker(script: Path, argv: Sequence[str], timeout: float = 3600) -> dict[str, Any]:
    """Run ``python script argv`` in a fresh process; its last stdout line is a JSON object."""
    done = subprocess.run(
        [sys.executable, str(script), *argv], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"worker {argv} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
