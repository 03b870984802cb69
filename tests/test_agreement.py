"""Agreement measures against hand-computed values and reference implementations
(scikit-learn's cohen_kappa_score, the krippendorff package, nervaluate)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cwal.io import schemes
from cwal.measures.agreement import ALL, OVERALL, agreement, pair_matrix, partial_counts

krippendorff = pytest.importorskip("krippendorff")
nervaluate = pytest.importorskip("nervaluate")
sklearn_metrics = pytest.importorskip("sklearn.metrics")

HAND = [
    {"a": ["B-PER", "I-PER", "O", "B-LOC"], "b": ["B-PER", "O", "O", "B-LOC"]},
    {"a": ["O", "B-ORG", "O"], "b": ["O", "B-ORG", "O"], "c": ["B-ORG", "I-ORG", "O"]},
]


def _get(table, scope, measure, type_=ALL):
    row = table[(table.scope == scope) & (table.type == type_) & (table.measure == measure)]
    assert len(row) == 1
    return row.iloc[0]


def test_hand_computed_pair():
    t = agreement(HAND, replicates=50)
    # a × b: spans a = {PER 0-2, LOC 3, ORG 1}, b = {PER 0, LOC 3, ORG 1}: 2 exact of 3 + 3
    assert _get(t, "a × b", "span F1 exact").value == pytest.approx(4 / 6)
    # PER overlaps: partial counts one half: 2 * 2.5 / 6
    assert _get(t, "a × b", "span F1 partial").value == pytest.approx(5 / 6)
    # 7 tokens, 6 agree; a: PER 2, O 3, LOC 1, ORG 1; b: PER 1, O 4, LOC 1, ORG 1
    pe = (2 * 1 + 3 * 4 + 1 + 1) / 49
    assert _get(t, "a × b", "Cohen's kappa").value == pytest.approx((6 / 7 - pe) / (1 - pe))
    row = _get(t, "a × b", "span F1 exact")
    assert (row["items"], row["units"]) == (2, 6)
    assert _get(t, "a × b", "span F1 exact", "PER").value == 0.0
    assert _get(t, "a × b", "span F1 partial", "PER").value == pytest.approx(0.5)
    # overall exact pools the pairs: matches 2 + 0 + 0 over spans 6 + 2 + 2
    assert _get(t, OVERALL, "span F1 exact").value == pytest.approx(4 / 10)


def test_hand_computed_alpha():
    # two coders, four tokens: O/O, PER/PER, PER/O, O/O -> coincidences o_OO=4, o_PP=2, o_OP=o_PO=1
    items = [{"a": ["O", "B-PER", "B-PER", "O"], "b": ["O", "B-PER", "O", "O"]}]
    # alpha = 1 - (n - 1) * (n - o_OO - o_PP) / (n^2 - n_O^2 - n_P^2) = 1 - 7 * 2 / 30
    expected = 1 - 14 / 30
    t = agreement(items, replicates=20)
    assert _get(t, OVERALL, "Krippendorff's alpha").value == pytest.approx(expected)


def _random_items(seed: int, n: int = 40, coders=("ann", "bob", "cat")):
    rng = random.Random(seed)
    types = ["PER", "LOC", "ORG"]
    items = []
    for _ in range(n):
        length = rng.randint(3, 9)
        base = [rng.choice(["O", "O", "O", "PER", "LOC", "ORG"]) for _ in range(length)]
        item = {}
        for c in coders:
            if rng.random() < 0.2 and len(item) >= 2:
                continue
            lab = [x if rng.random() < 0.8 else rng.choice(["O", *types]) for x in base]
            tags, prev = [], "O"
            for x in lab:
                if x == "O":
                    tags.append("O")
                else:
                    begin = prev != x or rng.random() < 0.3
                    tags.append(("B-" if begin else "I-") + x)
                prev = x
            item[c] = tags
        items.append(item)
    return items


def _token_types(tags):
    out = ["O"] * len(tags)
    for typ, s, e in schemes.spans(tags, "IOB2"):
        out[s:e] = [typ] * (e - s)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kappa_matches_scikit_learn(seed):
    items = _random_items(seed)
    t = agreement(items, replicates=20)
    for a, b in [("ann", "bob"), ("ann", "cat"), ("bob", "cat")]:
        ya, yb = [], []
        for it in items:
            if a in it and b in it:
                ya += _token_types(it[a])
                yb += _token_types(it[b])
        want = sklearn_metrics.cohen_kappa_score(ya, yb)
        assert _get(t, f"{a} × {b}", "Cohen's kappa").value == pytest.approx(want)
        per = sklearn_metrics.cohen_kappa_score([x == "PER" for x in ya], [y == "PER" for y in yb])
        assert _get(t, f"{a} × {b}", "Cohen's kappa", "PER").value == pytest.approx(per)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_matches_the_krippendorff_package(seed):
    items = _random_items(seed)
    coders = ["ann", "bob", "cat"]
    codes = {"O": 0, "PER": 1, "LOC": 2, "ORG": 3}
    columns = []
    for it in items:
        n = len(next(iter(it.values())))
        types = {c: _token_types(it[c]) for c in coders if c in it}
        for i in range(n):
            columns.append([codes[types[c][i]] if c in types else np.nan for c in coders])
    data = np.array(columns, dtype=float).T
    want = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    t = agreement(items, replicates=20)
    assert _get(t, OVERALL, "Krippendorff's alpha").value == pytest.approx(want)
    loc = np.where(np.isnan(data), np.nan, (data == 2).astype(float))
    want_loc = krippendorff.alpha(reliability_data=loc, level_of_measurement="nominal")
    assert _get(t, OVERALL, "Krippendorff's alpha", "LOC").value == pytest.approx(want_loc)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_span_f1_matches_nervaluate(seed):
    items = _random_items(seed)
    a, b = "ann", "bob"
    true = [it[a] for it in items if a in it and b in it]
    pred = [it[b] for it in items if a in it and b in it]
    ev = nervaluate.Evaluator(true, pred, tags=["PER", "LOC", "ORG"], loader="list")
    got = ev.evaluate()
    t = agreement(items, replicates=20)
    assert _get(t, f"{a} × {b}", "span F1 exact").value == pytest.approx(
        got["overall"]["strict"].f1
    )
    assert _get(t, f"{a} × {b}", "span F1 partial").value == pytest.approx(
        got["overall"]["partial"].f1
    )
    for typ in ("PER", "LOC", "ORG"):
        if typ in got["entities"]:
            res = got["entities"][typ]
            assert _get(t, f"{a} × {b}", "span F1 partial", typ).value == pytest.approx(
                res["partial"].f1
            )
            assert _get(t, f"{a} × {b}", "span F1 exact", typ).value == pytest.approx(
                res["strict"].f1
            )


def test_partial_counts_follow_nervaluates_greedy_order():
    # b's first span overlaps both a-spans; it takes the first, the second b-span matches exactly
    a = [("X", 0, 2), ("X", 2, 4)]
    b = [("X", 1, 3), ("X", 2, 4)]
    assert partial_counts(a, b) == (1, 1)
    assert partial_counts([], b) == (0, 0)


def test_intervals_bracket_the_value_and_are_seeded():
    items = _random_items(5, n=60)
    t1 = agreement(items, replicates=300, seed=3)
    t2 = agreement(items, replicates=300, seed=3)
    assert t1.equals(t2)
    ok = t1.dropna(subset=["value", "low", "high"])
    assert len(ok) > 20
    assert (ok.low <= ok.value + 1e-9).all() and (ok.value <= ok.high + 1e-9).all()
    assert (ok.high - ok.low > 0).any()


def test_matrix_and_empty_input():
    t = agreement(HAND, replicates=10)
    m = pair_matrix(t)
    assert len(m) == 6 and set(m.a) == {"a", "b", "c"}
    assert agreement([{"a": ["O"]}]).empty


@pytest.mark.parametrize("scheme", ["IOB2", "IOB1", "BIOES"])
def test_spans_of_all_tokens_at_once_equal_the_scheme_reader(scheme) -> None:
    """The numpy span finder reads every sequence, valid or not, as ``schemes.spans`` does."""
    import random

    from cwal.io import schemes
    from cwal.measures.agreement_counts import _TagTable

    rng = random.Random(1)
    prefixes = sorted(schemes.get(scheme).alphabet)
    items = []
    for _ in range(300):
        n = rng.randint(1, 9)
        items.append({
            a: [rng.choice(["O", *(f"{p}-{t}" for p in prefixes for t in "XY")]) for _ in range(n)]
            for a in ("a", "b")
        })  # fmt: skip
    lengths = np.array([len(it["a"]) for it in items])
    table = _TagTable(items, ["a", "b"], lengths, scheme)
    for a in ("a", "b"):
        typ, start, end = table.spans(a)
        got = [
            (table.types[t - 1], int(s), int(e)) for t, s, e in zip(typ, start, end, strict=True)
        ]
        want = []
        for i, it in enumerate(items):
            base = int(table.offsets[i])
            want += [(t, s + base, e + base) for t, s, e in schemes.spans(it[a], scheme)]
        assert got == want
