"""Per-sentence agreement counts kept up to date item by item (``SentenceCounts``) equal the
counts of the same items computed afresh, whatever the updates bring or take away: new and
removed items, new annotators, new entity types, annotators and types no item uses any more."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from cwal.measures.agreement import agreement, counts_table
from cwal.measures.agreement_counts import SentenceCounts, sentence_counts


def _item(rng: random.Random, coders, types) -> dict[str, list[str]]:
    n = rng.randint(1, 7)
    base = [rng.choice(["O", "O", *types]) for _ in range(n)]
    item = {}
    for c in coders:
        tags = []
        for x in base:
            x = x if rng.random() < 0.8 else rng.choice(["O", *types])
            tags.append("O" if x == "O" else f"{rng.choice('BI')}-{x}")
        item[c] = tags
    return item


def _afresh(items: dict[int, dict]) -> tuple[np.ndarray, object]:
    kept = [items[k] for k in sorted(items) if items[k] is not None and len(items[k]) >= 2]
    return sentence_counts(kept) if kept else (np.zeros((0, 0)), None)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_updates_equal_the_counts_computed_afresh(seed):
    rng = random.Random(seed)
    coders, types = ["ann", "bob", "cat", "dan"], ["PER", "LOC", "ORG", "MISC"]
    items: dict[int, dict | None] = {}
    counts = SentenceCounts()
    partial = 0
    for step in range(40):
        changed = {}
        for _ in range(rng.randint(1, 6)):
            key = rng.randrange(30)
            if rng.random() < 0.25:
                changed[key] = None  # the sentence leaves
            else:  # a few coders and types early, all of them later: the layout grows
                pool = coders[: 2 + step // 12]
                some = rng.sample(pool, rng.randint(1, len(pool)))
                changed[key] = _item(rng, some, types[: 1 + step // 10])
        items.update(changed)
        recounted = counts.update(changed)
        want, lay = _afresh(items)
        if want.shape[0] == 0:
            assert counts.layout is None and counts.keys.size == 0
            continue
        assert counts.layout == lay
        np.testing.assert_array_equal(counts.stats, want)
        live = sorted(k for k, v in items.items() if v is not None and len(v) >= 2)
        assert counts.keys.tolist() == live
        partial += recounted < len(live)
    assert partial >= 10  # most updates recounted only their items


def test_a_type_no_item_uses_any_more_leaves_the_table():
    counts = SentenceCounts()
    counts.update({1: {"a": ["B-PER", "O"], "b": ["B-PER", "O"]},
                   2: {"a": ["B-LOC"], "b": ["O"]}})  # fmt: skip
    assert counts.layout.types == ["LOC", "PER"]
    assert counts.update({2: {"a": ["O"], "b": ["O"]}}) == 2  # LOC gone: every row recounted
    assert counts.layout.types == ["PER"]
    table = counts_table(counts, replicates=30)
    want = agreement([{"a": ["B-PER", "O"], "b": ["B-PER", "O"]}, {"a": ["O"], "b": ["O"]}],
                     replicates=30)  # fmt: skip
    pd.testing.assert_frame_equal(table, want)
    assert set(table.type) == {"all types", "PER"}
    assert counts.update({1: None, 2: None}) == 0 and counts_table(counts).empty
