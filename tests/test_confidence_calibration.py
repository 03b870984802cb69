"""The isotonic calibration map: pool-adjacent-violators against scikit-learn's isotonic
regression, hand-computed maps, JSON round trips, and the live record's maps per scale."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from cwal.confidence.calibration import (
    CONSOLIDATED,
    PRIOR,
    PRIOR_SD,
    CalibrationMap,
    MarginMap,
    isotonic,
)


@pytest.mark.parametrize("seed", range(5))
def test_isotonic_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=40).cumsum() * rng.choice([-1, 1])
    weights = rng.uniform(0.1, 5.0, size=40)
    want = IsotonicRegression().fit_transform(np.arange(40), values, sample_weight=weights)
    assert np.allclose(isotonic(values, weights), want)


def test_map_of_a_hand_computed_example():
    """Confidence 0.5: 1 of 2 right; 0.8: 0 of 2 (a violation, pooled with 0.5: 1 of 4);
    1.0: 5 of 6."""
    conf = np.array([0.5, 0.5, 0.8, 0.8, 1, 1, 1, 1, 1, 1])
    ok = np.array([1, 0, 0, 0, 1, 1, 1, 1, 1, 0])
    cal = CalibrationMap.fit(conf, ok)
    assert cal.x == (0.5, 0.8, 1.0)
    assert np.allclose(cal.y, [0.25, 0.25, 5 / 6])
    assert np.allclose(
        cal(np.array([0.0, 0.5, 0.9, 1.0])), [0.25, 0.25, 0.25 + 0.5 * (5 / 6 - 0.25), 5 / 6]
    )
    assert cal.tokens == 10
    # the mean mapped confidence of the fitted tokens is their accuracy
    assert np.isclose(cal(conf).mean(), ok.mean())


def test_map_keeps_the_order_and_round_trips_through_json():
    rng = np.random.default_rng(3)
    conf = rng.integers(0, 51, size=2000) / 50
    ok = rng.random(2000) < conf**2
    cal = CalibrationMap.fit(conf, ok)
    grid = np.linspace(0, 1, 101)
    assert np.all(np.diff(cal(grid)) >= 0)
    back = CalibrationMap.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert back == cal


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {},
        {"x": [0.5, 0.4], "y": [0.1, 0.2]},
        {"x": [0.1, 0.2], "y": [0.5, 0.4]},
        {"x": [0.1], "y": [0.5, 0.6]},
        {"x": "ab", "y": "cd"},
    ],  # fmt: skip
)
def test_a_missing_or_malformed_map_reads_as_none(bad):
    assert CalibrationMap.from_dict(bad) is None


def test_fit_refuses_bad_input():
    with pytest.raises(ValueError):
        CalibrationMap.fit(np.array([]), np.array([]))
    with pytest.raises(ValueError):
        CalibrationMap.fit(np.array([0.5, np.nan]), np.array([1, 0]))


def test_margin_map_recovers_the_logistic_it_was_drawn_from():
    """Tokens drawn with P(right | Delta) = sigmoid(-1 + 1.5 log1p(Delta)): the MAP fit on
    40,000 of them lands on (-1, 1.5) (the weak prior is swamped)."""
    rng = np.random.default_rng(0)
    record = []
    for _ in range(19):
        delta = rng.exponential(3.0, 2000)
        p = 1 / (1 + np.exp(-(-1.0 + 1.5 * np.log1p(delta))))
        record.append((delta, rng.random(2000) < p))
    fitted = MarginMap.fit(record)
    assert fitted.a == pytest.approx(-1.0, abs=0.08) and fitted.b == pytest.approx(1.5, abs=0.08)
    assert fitted.labels == 19 and fitted.tokens == 38_000
    lo, hi = fitted.interval(record[0][0])
    truth = float(np.mean(1 / (1 + np.exp(-(-1.0 + 1.5 * np.log1p(record[0][0]))))))
    assert lo < truth < hi and hi - lo < 0.02
    # one model scored every token (a dev split): one entry, no age term, the same map
    pooled = [(np.concatenate([d for d, _ in record]), np.concatenate([c for _, c in record]))]
    held_out = MarginMap.fit(pooled, aged=False)
    assert held_out.a == pytest.approx(-1.0, abs=0.08) and held_out.b == pytest.approx(
        1.5, abs=0.08
    )
    assert held_out.c == 0.0 and held_out.labels == 1


def test_margin_map_is_the_prior_without_labels_and_monotone():
    prior = MarginMap.fit([])
    assert (prior.a, prior.b, prior.c, prior.e, prior.labels) == (*PRIOR, 0)
    assert prior(np.array([0.0]), ["O"])[0] == pytest.approx(1 / (1 + np.exp(-PRIOR[0])))
    entity = 1 / (1 + np.exp(-PRIOR[0] - PRIOR[3]))  # a predicted entity tag: shifted by e
    assert prior(np.array([0.0]), ["B-PER"])[0] == pytest.approx(entity)
    assert prior(np.array([np.inf]), ["I-LOC"])[0] == pytest.approx(1.0)
    with pytest.raises(ValueError):  # its e is not 0: the tags are needed
        prior(np.array([0.0]))
    lo, hi = prior.interval(np.array([1.0, 2.0]), ["O", "B-PER"])
    assert lo < float(np.mean(prior(np.array([1.0, 2.0]), ["O", "B-PER"]))) < hi
    # wrong at small margins, right at large ones: increasing, and refitted on all sentences
    record = [(np.array([0.05, 0.1, 3.0, 8.0]), np.array([False, True, True, True]))] * 30
    fitted = MarginMap.fit(record)
    assert fitted.labels == 30 and fitted.tokens == 120
    curve = fitted(np.array([0.0, 0.1, 1.0, 10.0]))
    assert np.all(np.diff(curve) > 0) and curve[0] < 0.6 and curve[-1] > 0.95


def test_single_label_tokens_do_not_drive_the_map():
    """The first sentences are all O: a model that knows one label gives every token an infinite
    Delta. Those tokens carry no information; later, finite margins set the map alone."""
    rng = np.random.default_rng(3)
    record = [(np.full(20, 1e6), np.ones(20, bool)) for _ in range(5)]
    delta = rng.exponential(1.0, (30, 20))
    record += [(d, rng.random(20) < 1 / (1 + np.exp(-(0.5 + 1.0 * np.log1p(d))))) for d in delta]
    fitted = MarginMap.fit(record)
    assert fitted.a == pytest.approx(0.5, abs=0.4) and fitted.b == pytest.approx(1.0, abs=0.5)
    assert fitted.tokens == 600 and fitted.labels == 35
    assert 0.6 < float(np.mean(fitted(delta.ravel()))) < 0.85


def test_margin_map_extrapolates_to_the_current_model():
    """Entry j of the record was predicted by a model that had learned j + 1 labels, and each
    later model is right more often at the same margin (true c = 1.5 on log1p of the labels).
    The fit recovers the age coefficient and maps the current model's tokens (n = 41 labels) to
    their accuracy, where a map without the age term, which averages over weaker models, is low."""
    rng = np.random.default_rng(7)
    a, b, c, n = 0.5, 2.0, 1.5, 41

    def truth(delta, m):
        return 1 / (1 + np.exp(-(a + b * np.log1p(delta) + c * (np.log1p(m) - np.log1p(n)))))

    record = []
    for j in range(n - 1):
        delta = rng.exponential(0.5, 400)
        record.append((delta, rng.random(400) < truth(delta, j + 1)))
    fitted = MarginMap.fit(record)
    assert fitted.c == pytest.approx(c, abs=0.3) and fitted.a == pytest.approx(a, abs=0.25)
    fresh = rng.exponential(0.5, 20_000)
    expected = float(np.mean(truth(fresh, n)))
    assert float(np.mean(fitted(fresh))) == pytest.approx(expected, abs=0.02)
    static = MarginMap.fit(record, aged=False)  # no age term: as if one model made the record
    assert static.c == 0.0 and float(np.mean(static(fresh))) < expected - 0.04


def test_a_consolidated_model_gets_its_own_shift():
    """Entries 0-29 come from single-pass models, 30-59 from a consolidated one that is less
    often right at the same margin (logit shift -1.5). Told where the consolidation began, the
    fit recovers the shift and maps the current model's tokens to their accuracy; told it began
    only now (no entry of its own yet), the map is the earlier models' shifted by the prior's d."""
    rng = np.random.default_rng(11)
    a, b = 0.5, 2.0

    def truth(delta, shift):
        return 1 / (1 + np.exp(-(a + shift + b * np.log1p(delta))))

    record = []
    for j in range(60):
        delta = rng.exponential(0.5, 400)
        record.append((delta, rng.random(400) < truth(delta, -1.5 if j >= 30 else 0.0)))
    fresh = rng.exponential(0.5, 20_000)
    plain = MarginMap.fit(record, aged=False)
    split = MarginMap.fit(record, aged=False, consolidated=30)
    expected = float(np.mean(truth(fresh, -1.5)))
    assert float(np.mean(split(fresh))) == pytest.approx(expected, abs=0.015)
    assert float(np.mean(plain(fresh))) > expected + 0.04  # the earlier models' surer map
    assert split.a == pytest.approx(a - 1.5, abs=0.2) and split.b == pytest.approx(b, abs=0.2)
    just = MarginMap.fit(record[:30], aged=False, consolidated=30)
    before = MarginMap.fit(record[:30], aged=False)
    assert just.a == pytest.approx(before.a + CONSOLIDATED[0], abs=0.05)
    assert just.b == pytest.approx(before.b)


def test_margin_map_fits_the_shift_of_predicted_entity_tags():
    """Tokens drawn with P(right) = sigmoid(2 + 3 log1p(Delta) - 3 [tag != O]): a young model's
    predicted O is nearly always right, its entity tags mostly wrong. The record's first half
    predicts entity tags on 80% of its tokens, the second half on 10%; the fit with the tags
    recovers e and maps a pool predicted like the newest model (10% entity) to its accuracy,
    where a map of the same record without the tags (no e: the two mixed) is far too low."""
    rng = np.random.default_rng(11)
    a, b, e = 2.0, 3.0, -3.0

    def draw(n, share):
        delta = rng.exponential(0.3, n)
        tags = np.where(rng.random(n) < share, "B-ORG", "O")
        p = 1 / (1 + np.exp(-(a + b * np.log1p(delta) + e * (tags != "O"))))
        return delta, rng.random(n) < p, tags

    record = [draw(60, 0.8 if j < 20 else 0.1) for j in range(40)]
    fitted = MarginMap.fit(record, aged=False)
    assert fitted.e == pytest.approx(e, abs=0.5) and fitted.a == pytest.approx(a, abs=0.5)
    delta, _, tags = draw(20_000, 0.1)
    truth = float(np.mean(1 / (1 + np.exp(-(a + b * np.log1p(delta) + e * (tags != "O"))))))
    assert float(np.mean(fitted(delta, tags))) == pytest.approx(truth, abs=0.02)
    lo, hi = fitted.interval(delta, tags)
    assert lo < truth < hi
    untagged = MarginMap.fit([(d, c) for d, c, _ in record], aged=False)
    assert untagged.e == 0.0  # pairs: no entity term, and no tags needed
    assert float(np.mean(untagged(delta))) < truth - 0.05


def _clustered_record(rng, sentences: int) -> list:
    """Sentences of 40 tokens whose rightness shares a random effect per sentence (sd 1.5)."""
    out = []
    for _ in range(sentences):
        delta, shift = rng.exponential(0.3, 40), rng.normal(0.0, 1.5)
        p = 1 / (1 + np.exp(-(1.0 + 3.0 * np.log1p(delta) + shift)))
        out.append((delta, rng.random(40) < p))
    return out


@pytest.mark.parametrize(
    "sentences, prior_sd, least",
    [(30, PRIOR_SD, 32), (6, (10.0, 10.0, 1.0, 2.0), 35)],
)  # fmt: skip
def test_the_interval_counts_sentences_not_tokens(sentences, prior_sd, least):
    """A sentence's tokens are right or wrong together: a record of 30 sentences of 40 tokens
    says less than 1,200 independent tokens would. Over 40 such records the 95% interval of the
    expected accuracy covers the population's accuracy in at least 32 (sentences as clusters:
    39; tokens as independent draws: 19). From 6 sentences (a vague prior, so the record
    decides) the cluster-robust interval needs Student t draws: 37 of 40 with them, 32 without."""
    rng = np.random.default_rng(5)
    population = _clustered_record(rng, 4000)
    truth = float(np.mean([ok.mean() for _, ok in population]))
    pool = np.concatenate([delta for delta, _ in population[:200]])
    covered = 0
    for _ in range(40):
        fitted = MarginMap.fit(_clustered_record(rng, sentences), aged=False, prior_sd=prior_sd)
        lo, hi = fitted.interval(pool)
        covered += lo <= truth <= hi
    assert covered >= least


def test_each_consolidation_shifts_the_map_by_a_step_of_its_own():
    """Entries 0-19 from single-pass models, 20-39 from a first consolidation (shift -1.5), 40-59
    from a second (shift -1.5 + 1.2): with both generations the current model's map lands on
    the second's accuracy; with the first alone (the former single shift) it is too low."""
    rng = np.random.default_rng(2)
    a, b = 1.0, 3.0

    def entry(shift):
        delta, tags = rng.exponential(0.4, 300), np.array(["O"] * 300)
        p = 1 / (1 + np.exp(-(a + b * np.log1p(delta) + shift)))
        return delta, rng.random(300) < p, tags

    record = [entry(0.0) for _ in range(20)] + [entry(-1.5) for _ in range(20)]
    record += [entry(-0.3) for _ in range(20)]
    fresh = rng.exponential(0.4, 20_000)
    truth = float(np.mean(1 / (1 + np.exp(-(a + b * np.log1p(fresh) - 0.3)))))
    tags = ["O"] * fresh.size
    both = MarginMap.fit(record, aged=False, consolidated=(20, 40))
    assert float(np.mean(both(fresh, tags))) == pytest.approx(truth, abs=0.015)
    first = MarginMap.fit(record, aged=False, consolidated=20)
    assert float(np.mean(first(fresh, tags))) < truth - 0.03
    # a consolidation just swapped in (no entries yet) keeps the last shift, less sure of it
    newest = MarginMap.fit(record, aged=False, consolidated=(20, 40, 60))
    assert float(np.mean(newest(fresh, tags))) == pytest.approx(truth, abs=0.015)
    assert np.diff(newest.interval(fresh, tags)) > np.diff(both.interval(fresh, tags))
