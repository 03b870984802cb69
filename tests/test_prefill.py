"""The pre-fill policy: only the spans the model is confident about, and the keystroke count
that chose its threshold (bench/prefill.py)."""

from __future__ import annotations

import pytest

from cwal.live.prefill import THRESHOLD, confident_spans, keystrokes, prefill_tags

TAGS = ["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG"]


def test_only_spans_sure_on_every_token_are_kept() -> None:
    conf = [0.9, 0.8, 0.2, 0.45, 0.9, 0.5]
    assert confident_spans(TAGS, conf, "IOB2", 0.5) == [("PER", 0, 2), ("ORG", 5, 6)]
    assert prefill_tags(TAGS, conf, "IOB2", 0.5) == ["B-PER", "I-PER", "O", "O", "O", "B-ORG"]
    # one unsure token blanks its whole span, never half of it
    conf = [0.9, 0.3, 0.9, 0.9, 0.9, 0.9]
    assert prefill_tags(TAGS, conf, "IOB2", 0.5) == ["O", "O", "O", "B-LOC", "O", "B-ORG"]


def test_a_young_model_pre_fills_nothing_and_no_confidence_means_no_pre_fill() -> None:
    assert prefill_tags(TAGS, [0.3] * 6, "IOB2") is None
    assert prefill_tags(TAGS, None, "IOB2") is None
    assert prefill_tags(None, [0.9] * 6, "IOB2") is None
    assert prefill_tags(TAGS, [0.99] * 6, "IOB2") == TAGS


def test_other_schemes_and_invalid_sequences() -> None:
    bioes = ["S-PER", "O", "B-LOC", "E-LOC"]
    assert prefill_tags(bioes, [0.9, 0.9, 0.9, 0.1], "BIOES") == ["S-PER", "O", "O", "O"]
    # an I- without its B- (a model's invalid sequence) is repaired, not dropped silently
    assert confident_spans(["O", "I-PER"], [0.9, 0.9], "IOB2") == [("PER", 1, 2)]


def test_threshold_is_a_probability() -> None:
    assert 0.0 < THRESHOLD < 1.0


@pytest.mark.parametrize(
    ("pre", "gold", "cost"),
    [
        ([], [("PER", 0, 2)], 1),  # blank: label it
        ([("PER", 0, 2)], [("PER", 0, 2)], 0),  # right: nothing
        ([("LOC", 0, 2)], [("PER", 0, 2)], 1),  # wrong type: relabel overwrites it
        ([("PER", 0, 3)], [("PER", 0, 2)], 2),  # too long: relabel, then clear the rest
        ([("ORG", 4, 5)], [], 1),  # spurious: clear it
        ([("ORG", 4, 5)], [("PER", 0, 2)], 2),
    ],
)
def test_keystrokes(pre, gold, cost) -> None:
    assert keystrokes(pre, gold) == cost
