"""Tag schemes: spans against hand-checked lists and seqeval, conversions as random round trips."""

from __future__ import annotations

import random

import pytest
from seqeval.metrics.sequence_labeling import get_entities

from cwal.io import schemes

# One chunk layout written by hand in every scheme: NP(0-2) VP(2-3) NP(3-4) NP(4-6) O PP(7-8)
SPANS = [("NP", 0, 2), ("VP", 2, 3), ("NP", 3, 4), ("NP", 4, 6), ("PP", 7, 8)]


def t(tags: str) -> list[str]:
    """Space-separated tags as a list."""
    return tags.split()


BY_SCHEME = {
    "IOB1": "I-NP I-NP I-VP I-NP B-NP I-NP O I-PP",
    "IOB2": "B-NP I-NP B-VP B-NP B-NP I-NP O B-PP",
    "IOE1": "I-NP I-NP I-VP E-NP I-NP I-NP O I-PP",
    "IOE2": "I-NP E-NP E-VP E-NP I-NP E-NP O E-PP",
    "BIOES": "B-NP E-NP S-VP S-NP B-NP E-NP O S-PP",
    "BILOU": "B-NP L-NP U-VP U-NP B-NP L-NP O U-PP",
}


@pytest.mark.parametrize("name", sorted(BY_SCHEME))
def test_hand_written_encodings_decode_to_the_same_spans(name: str) -> None:
    tags = t(BY_SCHEME[name])
    assert schemes.spans(tags, name) == SPANS
    assert schemes.from_spans(SPANS, len(tags), name) == tags
    assert schemes.is_valid(tags, name)


def test_io_merges_adjacent_chunks_of_one_type() -> None:
    tags = t("I-NP I-NP I-VP I-NP I-NP I-NP O I-PP")
    assert schemes.spans(tags, "IO") == [("NP", 0, 2), ("VP", 2, 3), ("NP", 3, 6), ("PP", 7, 8)]


def _random_spans(rng: random.Random, n: int, types: list[str], io_safe: bool) -> list:
    out, p = [], 0
    while p < n:
        if rng.random() < 0.3:
            p += 1
            continue
        length = min(rng.randint(1, 4), n - p)
        typ = rng.choice(types)
        if io_safe and out and out[-1][2] == p and out[-1][0] == typ:
            p += 1
            continue
        out.append((typ, p, p + length))
        p += length
    return out


@pytest.mark.parametrize("seed", range(40))
def test_conversions_round_trip_between_all_schemes(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 25)
    names = list(schemes.SCHEMES)
    chunks = _random_spans(rng, n, ["NP", "VP", "B-X"], io_safe=seed % 2 == 0)
    for src in names:
        tags = schemes.from_spans(chunks, n, src)
        assert schemes.is_valid(tags, src)
        if src == "IO" and seed % 2:
            continue  # IO cannot hold two touching chunks of one type
        assert schemes.spans(tags, src) == chunks
        for dst in names:
            if dst == "IO" and seed % 2:
                continue
            there = schemes.convert(tags, src, dst)
            assert schemes.is_valid(there, dst)
            assert schemes.convert(there, dst, src) == tags


@pytest.mark.parametrize("seed", range(20))
def test_iob2_and_bioes_spans_agree_with_seqeval(seed: int) -> None:
    rng = random.Random(100 + seed)
    n = rng.randint(1, 30)
    chunks = _random_spans(rng, n, ["PER", "LOC", "ORG"], io_safe=False)
    want = sorted(chunks)
    for name in ("IOB2", "BIOES"):
        tags = schemes.from_spans(chunks, n, name)
        theirs = sorted((t, s, e + 1) for t, s, e in get_entities(tags))
        assert sorted(schemes.spans(tags, name)) == want == theirs


def test_invalid_sequences_are_located() -> None:
    assert schemes.first_invalid(t("B-NP I-NP O I-NP"), "IOB2") == 3
    assert schemes.check(t("O I-NP"), "IOB2") == (1, "B-NP")
    assert schemes.first_invalid(t("B-NP I-VP"), "IOB2") == 1
    assert schemes.first_invalid(t("B-NP I-NP O"), "BIOES") == 1  # chunk ends without E-
    assert schemes.first_invalid(t("B-NP O"), "IOB1") == 0  # IOB1 B- only after same type
    assert schemes.first_invalid(t("O S-NP"), "IOB2") == 1  # prefix outside the scheme
    assert schemes.first_invalid(t("O NP"), "IOB2") == 1  # malformed tag
    assert schemes.first_invalid(t("B-NP I-NP O B-PP"), "IOB2") is None
    assert not schemes.is_valid(["I-PER"], "IOB2")
    assert schemes.is_valid(["I-PER"], "IOB1")


def test_repair_gives_a_valid_sequence_with_the_lenient_chunks() -> None:
    assert schemes.repair(t("O I-NP I-NP"), "IOB2") == t("O B-NP I-NP")
    assert schemes.repair(t("B-NP I-NP O"), "BIOES") == t("B-NP E-NP O")
    assert schemes.repair(t("I-NP I-VP"), "IOB2") == t("B-NP B-VP")
    rng = random.Random(7)
    pool = ["O", "B-A", "I-A", "E-A", "S-A", "B-B", "I-B"]
    for _ in range(200):
        tags = [rng.choice(pool) for _ in range(rng.randint(1, 12))]
        for name in schemes.SCHEMES:
            fixed = schemes.repair(tags, name)
            assert schemes.is_valid(fixed, name)
            assert schemes.repair(fixed, name) == fixed


def test_task_view_and_tag_types() -> None:
    tags = t("B-NP I-NP B-VP B-NP O B-PP B-NP")
    assert schemes.task_view(tags, keep={"NP"}) == t("B-NP I-NP O B-NP O O B-NP")
    assert schemes.tag_types(tags) == ["NP", "PP", "VP"]
    assert schemes.tag_types(["O", "O"]) == []


def test_names_aliases_and_bad_input() -> None:
    assert schemes.get("bio") is schemes.SCHEMES["IOB2"]
    assert schemes.get("iobes") is schemes.SCHEMES["BIOES"]
    with pytest.raises(ValueError, match="unknown tag scheme"):
        schemes.get("XYZ")
    with pytest.raises(ValueError, match="not used by IOB2"):
        schemes.spans(["S-NP"], "IOB2")
    with pytest.raises(ValueError, match="malformed tag"):
        schemes.spans(["NP"], "IOB2")
    with pytest.raises(ValueError, match="overlap"):
        schemes.from_spans([("A", 0, 2), ("B", 1, 3)], 3, "IOB2")
