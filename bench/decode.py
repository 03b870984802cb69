"""Decoding speed: median wall time of the cwal.decode kernels on synthetic batches.

Sizes follow the corpora: ~9,000 training sentences of ~24 tokens (CoNLL-2000 chunking, L=3 for
NP-only IOB, L=9 for NER-sized tag sets) and a KD-PC pool step of K=50 draws over 1,000 sentences of
~28 tokens. Emission scores are random: decoding cost does not depend on their values.

    python bench/decode.py [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cwal import decode  # noqa: E402


def make_batch(rng: np.random.Generator, n_sent: int, mean_len: int, L: int, K: int = 0):
    """Random batch: E (n_tok, L) or (K, n_tok, L), sent_offsets, A (L+2, L) or (K, L+2, L)."""
    lengths = rng.integers(mean_len // 2, mean_len * 3 // 2 + 1, size=n_sent)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    lead = (K,) if K else ()
    return rng.normal(size=(*lead, offsets[-1], L)), offsets, rng.normal(size=(*lead, L + 2, L))


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``fn()`` in milliseconds, after one warm-up call (compilation)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def run(repeats: int) -> list[dict]:
    """Time every case; returns one row per case."""
    rng = np.random.default_rng(0)
    rows = []

    def add(name: str, size: str, n_sent: int, fn: Callable[[], object]) -> None:
        ms = median_ms(fn, repeats)
        rows.append({"case": name, "size": size, "median_ms": ms, "us_per_sent": ms * 1e3 / n_sent})

    for L in (3, 9):
        E, off, A = make_batch(rng, 9000, 24, L)
        size = f"9000 sent ~24 tok, L={L}"
        add("viterbi_batch", size, 9000, lambda E=E, off=off, A=A: decode.viterbi_batch(E, off, A))
        add(
            "max_marginals_batch",
            size,
            9000,
            lambda E=E, off=off, A=A: decode.max_marginals_batch(E, off, A),
        )
    E, off, A = make_batch(rng, 9000, 24, 9)
    spans = list(zip(off[:-1], off[1:], strict=True))
    add(
        "viterbi (per-sentence calls)",
        "9000 sent ~24 tok, L=9",
        9000,
        lambda: [decode.viterbi(E[s:e], A) for s, e in spans],
    )
    add(
        "kbest k=30 (per-sentence calls)",
        "1000 sent ~24 tok, L=9",
        1000,
        lambda: [decode.kbest(E[s:e], A, 30) for s, e in spans[:1000]],
    )
    E, off, A = make_batch(rng, 1000, 28, 9, K=50)
    n_threads = numba.get_num_threads()
    for threads in sorted({1, n_threads}):
        numba.set_num_threads(threads)
        add(
            f"viterbi_multi, {threads} thread(s)",
            "K=50 x 1000 sent ~28 tok, L=9",
            1000,
            lambda: decode.viterbi_multi(E, off, A),
        )
    numba.set_num_threads(n_threads)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 11")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON to PATH")
    args = parser.parse_args(argv)
    rows = run(3 if args.quick else 11)
    print(f"{'case':<34} {'size':<32} {'median ms':>10} {'us/sent':>9}")
    for r in rows:
        print(f"{r['case']:<34} {r['size']:<32} {r['median_ms']:>10.2f} {r['us_per_sent']:>9.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
