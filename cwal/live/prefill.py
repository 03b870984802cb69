"""Which predicted spans the editor pre-fills: only those the model is confident about.

A token's calibrated confidence (its Delta margin through the session's ``MarginMap``) is the
chance that its predicted tag is right. A predicted span is pre-filled when every one of its
tokens is at least ``THRESHOLD`` sure; the others are left blank for the annotator. A young model
(a handful of labels) is rarely that sure, so the first sentences come mostly blank instead of
full of noise to clear, and a trained one pre-fills most of them right.

Keystrokes to correct a sentence: a wrong pre-filled span costs one (clear or relabel it), a
gold span left blank costs one (label it), and a wrong pre-filled span is also an error the
annotator must catch. ``bench/prefill.py`` replays the demo project through the live service and
counts both for a range of thresholds. Measured (2 seeds x 150 labels): pre-filling every
prediction needs the fewest keystrokes overall (0.98 per sentence against 1.14 at 0.6) but shows
1.05 wrong spans per sentence (0.28 at 0.6), and in the first 5 sentences 33 of 34 pre-filled spans
were wrong (3.6 keystrokes per sentence against 2.5 at 0.6, which pre-fills none of them);
keystrokes plus wrong spans are lowest, and flat, from 0.6 to 0.9, and 0.6 needs the fewest
keystrokes there.
"""

from __future__ import annotations

from collections.abc import Sequence

from cwal.io import schemes

THRESHOLD = 0.6
"""Least calibrated confidence of every token of a pre-filled span (bench/prefill.py)."""


def confident_spans(
    tags: Sequence[str],
    confidence: Sequence[float] | None,
    scheme: str,
    threshold: float = THRESHOLD,
) -> list[tuple[str, int, int]]:
    """The predicted spans ``(type, start, end_exclusive)`` whose every token's calibrated
    confidence is at least ``threshold``. No confidence (a model with no labels): none."""
    if confidence is None or len(confidence) != len(tags):
        return []
    try:
        found = schemes.spans(tags, scheme)
    except ValueError:
        found = schemes.spans(schemes.repair(tags, scheme), scheme)
    return [(t, s, e) for t, s, e in found if min(float(c) for c in confidence[s:e]) >= threshold]


def prefill_tags(
    tags: Sequence[str] | None,
    confidence: Sequence[float] | None,
    scheme: str,
    threshold: float = THRESHOLD,
) -> list[str] | None:
    """``tags`` with every span the model is not sure of blanked (``O``); None when nothing
    is pre-filled."""
    if not tags:
        return None
    kept = confident_spans(tags, confidence, scheme, threshold)
    return schemes.from_spans(kept, len(tags), scheme) if kept else None


def keystrokes(
    predicted: Sequence[tuple[str, int, int]], gold: Sequence[tuple[str, int, int]]
) -> int:
    """Editor actions that turn the pre-filled ``predicted`` spans into ``gold``: each gold span
    not pre-filled exactly is selected and labeled (one action; like the editor, it cuts the
    spans under it), then every piece of a wrong span left over is cleared (one action each)."""
    spans = set(predicted)
    want = set(gold)
    actions = 0
    for typ, a, b in sorted(want - spans, key=lambda g: g[1]):
        cut = set()
        for t, s, e in spans:
            if e <= a or s >= b:
                cut.add((t, s, e))
                continue
            if s < a:
                cut.add((t, s, a))
            if e > b:
                cut.add((t, b, e))
        spans = cut | {(typ, a, b)}
        actions += 1
    return actions + len(spans - want)
