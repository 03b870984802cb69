"""cwal.decode against brute-force enumeration of all L**n labelings on small random problems."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cwal import decode

CASES = [(n, L, seed) for n in range(1, 7) for L in range(2, 5) for seed in range(3)]


def all_labelings(n: int, L: int) -> np.ndarray:
    """Every labeling of n tokens with L labels, in lexicographic order: (L**n, n)."""
    return np.array(list(itertools.product(range(L), repeat=n)), dtype=np.int64).reshape(-1, n)


def brute_scores(E: np.ndarray, A: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Score of each row of Y straight from the formula in docs/design.md."""
    n, L = E.shape
    s = E[np.arange(n), Y].sum(axis=1) + A[L, Y[:, 0]] + A[L + 1, Y[:, -1]]
    return s + A[Y[:, :-1], Y[:, 1:]].sum(axis=1)


def problem(n: int, L: int, seed: int, integer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Random E (n, L) and A (L+2, L); integer=True draws small integers so that ties abound."""
    rng = np.random.default_rng(seed)
    if integer:
        return (
            rng.integers(-2, 3, size=(n, L)).astype(float),
            rng.integers(-2, 3, size=(L + 2, L)).astype(float),
        )
    return rng.normal(size=(n, L)), rng.normal(size=(L + 2, L))


def batch(seed: int, L: int, lengths: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return rng.normal(size=(offsets[-1], L)), offsets, rng.normal(size=(L + 2, L))


def test_emissions_equal_dense_feature_counts_times_w() -> None:
    rng = np.random.default_rng(1)
    F, L, n = 30, 4, 12
    counts = rng.integers(0, 5, size=n)
    counts[3] = 0  # a token without features
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    ids = rng.integers(0, F, size=offsets[-1]).astype(np.int32)
    ids[offsets[5] : offsets[5] + 2] = 7  # a feature repeated inside one token counts twice
    W = rng.normal(size=(F, L))
    X = np.zeros((n, F))
    np.add.at(X, (np.repeat(np.arange(n), counts), ids), 1.0)
    np.testing.assert_allclose(decode.emissions(ids, offsets, W), X @ W, atol=1e-12)
    Wk = rng.normal(size=(3, F, L))
    np.testing.assert_allclose(
        decode.emissions_multi(ids, offsets, Wk), np.stack([X @ w for w in Wk]), atol=1e-12
    )


def test_emissions_of_no_tokens_is_empty() -> None:
    E = decode.emissions(np.zeros(0, np.int32), np.zeros(1, np.int64), np.ones((5, 3)))
    assert E.shape == (0, 3)


def test_sequence_score_by_hand() -> None:
    E = np.array([[1.0, 2.0], [3.0, 5.0]])
    A = np.array([[10.0, 20.0], [30.0, 40.0], [100.0, 200.0], [1000.0, 2000.0]])
    # y = (1, 0): E[0,1] + E[1,0] + start->1 + 1->0 + 0->end = 2 + 3 + 200 + 30 + 1000
    assert decode.sequence_score(E, A, np.array([1, 0])) == 1235.0
    assert decode.sequence_score(np.zeros((0, 2)), A, np.zeros(0, np.int32)) == 0.0


@pytest.mark.parametrize(("n", "L", "seed"), CASES)
def test_viterbi_is_the_brute_force_argmax(n: int, L: int, seed: int) -> None:
    E, A = problem(n, L, seed)
    Y = all_labelings(n, L)
    scores = brute_scores(E, A, Y)
    y = decode.viterbi(E, A)
    assert y.dtype == np.int32 and y.shape == (n,)
    assert decode.sequence_score(E, A, y) == pytest.approx(scores.max(), abs=1e-9)
    top2 = np.sort(scores)[-2:]
    if top2[1] - top2[0] > 1e-9:
        np.testing.assert_array_equal(y, Y[scores.argmax()])


@pytest.mark.parametrize("seed", range(20))
def test_viterbi_ties_go_to_lowest_labels_from_the_end(seed: int) -> None:
    n, L = 1 + seed % 5, 2 + seed % 3
    E, A = problem(n, L, seed, integer=True)
    Y = all_labelings(n, L)
    scores = brute_scores(E, A, Y)
    optimal = Y[scores == scores.max()]
    expected = min(optimal.tolist(), key=lambda y: y[::-1])
    assert decode.viterbi(E, A).tolist() == expected


def test_viterbi_all_ties_gives_label_zero() -> None:
    assert decode.viterbi(np.zeros((5, 3)), np.zeros((5, 3))).tolist() == [0] * 5


def test_viterbi_single_token() -> None:
    E, A = problem(1, 4, 7)
    assert decode.viterbi(E, A).tolist() == [int(np.argmax(E[0] + A[4] + A[5]))]


def test_viterbi_batch_equals_per_sentence_calls() -> None:
    lengths = [3, 0, 1, 7, 0, 5, 2]
    E, offsets, A = batch(3, 4, lengths)
    got = decode.viterbi_batch(E, offsets, A)
    assert got.dtype == np.int32
    expected = np.concatenate([decode.viterbi(E[s:e], A) for s, e in itertools.pairwise(offsets)])
    np.testing.assert_array_equal(got, expected)


def test_viterbi_multi_equals_batch_under_each_weight_vector() -> None:
    rng = np.random.default_rng(5)
    lengths = [4, 1, 0, 9, 6]
    _, offsets, _ = batch(0, 3, lengths)
    K, L = 6, 3
    E = rng.normal(size=(K, offsets[-1], L))
    A = rng.normal(size=(K, L + 2, L))
    got = decode.viterbi_multi(E, offsets, A)
    assert got.shape == (K, offsets[-1]) and got.dtype == np.int32
    for k in range(K):
        np.testing.assert_array_equal(got[k], decode.viterbi_batch(E[k], offsets, A[k]))
    assert len({tuple(row) for row in got}) > 1  # the K weight vectors really differ


@pytest.mark.parametrize(("n", "L", "seed"), CASES)
def test_kbest_is_the_exact_brute_force_top_k(n: int, L: int, seed: int) -> None:
    E, A = problem(n, L, seed)
    Y = all_labelings(n, L)
    scores = brute_scores(E, A, Y)
    order = np.argsort(-scores, kind="stable")
    k = 10
    labels, got = decode.kbest(E, A, k)
    kk = min(k, L**n)
    assert labels.shape == (kk, n) and got.shape == (kk,) and labels.dtype == np.int32
    np.testing.assert_allclose(got, scores[order[:kk]], atol=1e-9)
    np.testing.assert_array_equal(labels, Y[order[:kk]])  # continuous scores: no ties
    np.testing.assert_array_equal(labels[0], decode.viterbi(E, A))


@pytest.mark.parametrize("seed", range(20))
def test_kbest_under_ties_is_still_exact_and_distinct(seed: int) -> None:
    n, L = 1 + seed % 5, 2 + seed % 3
    E, A = problem(n, L, seed, integer=True)
    Y = all_labelings(n, L)
    scores = brute_scores(E, A, Y)
    k = 1 + seed % 9
    labels, got = decode.kbest(E, A, k)
    np.testing.assert_array_equal(got, np.sort(scores)[::-1][: min(k, L**n)])
    assert len({tuple(row) for row in labels}) == len(labels)
    np.testing.assert_array_equal(brute_scores(E, A, labels.astype(np.int64)), got)
    np.testing.assert_array_equal(labels[0], decode.viterbi(E, A))


@pytest.mark.parametrize("seed", range(6))
def test_forbidden_transitions_minus_inf(seed: int) -> None:
    """-inf transitions (e.g. invalid BIO moves) are never chosen while a finite path exists."""
    n, L = 4, 3
    E, A = problem(n, L, seed, integer=True)
    A[np.random.default_rng(seed).random(A.shape) < 0.4] = -np.inf
    Y = all_labelings(n, L)
    scores = brute_scores(E, A, Y)
    labels, got = decode.kbest(E, A, L**n)
    np.testing.assert_array_equal(got, np.sort(scores)[::-1])
    assert len({tuple(row) for row in labels}) == L**n
    np.testing.assert_array_equal(brute_scores(E, A, labels.astype(np.int64)), got)
    assert decode.sequence_score(E, A, decode.viterbi(E, A)) == scores.max()
    expected = np.array([[scores[Y[:, p] == y].max() for y in range(L)] for p in range(n)])
    np.testing.assert_array_equal(decode.max_marginals(E, A), expected)


def test_kbest_larger_than_all_labelings_returns_every_labeling() -> None:
    E, A = problem(3, 3, 11)
    labels, got = decode.kbest(E, A, 1000)
    assert labels.shape == (27, 3)
    assert {tuple(row) for row in labels} == {tuple(row) for row in all_labelings(3, 3)}
    assert np.all(np.diff(got) <= 0)


@pytest.mark.parametrize(("n", "L", "seed"), CASES)
def test_max_marginals_and_delta_vs_brute_force(n: int, L: int, seed: int) -> None:
    E, A = problem(n, L, seed)
    Y = all_labelings(n, L)
    scores = brute_scores(E, A, Y)
    expected = np.array([[scores[Y[:, p] == y].max() for y in range(L)] for p in range(n)])
    np.testing.assert_allclose(decode.max_marginals(E, A), expected, atol=1e-9)
    y_hat = Y[scores.argmax()]
    delta = [scores.max() - np.delete(expected[p], y_hat[p]).max() for p in range(n)]
    np.testing.assert_allclose(decode.delta_margin(E, A), delta, atol=1e-9)


def test_delta_is_zero_where_two_labels_tie() -> None:
    E = np.array([[1.0, 1.0], [0.0, 3.0]])
    np.testing.assert_array_equal(decode.delta_margin(E, np.zeros((4, 2))), [0.0, 3.0])


def test_max_marginals_and_delta_batch_equal_per_sentence_calls() -> None:
    E, offsets, A = batch(8, 3, [2, 0, 6, 1, 4])
    spans = list(itertools.pairwise(offsets))
    np.testing.assert_array_equal(
        decode.max_marginals_batch(E, offsets, A),
        np.concatenate([decode.max_marginals(E[s:e], A) for s, e in spans]),
    )
    np.testing.assert_array_equal(
        decode.delta_margin_batch(E, offsets, A),
        np.concatenate([decode.delta_margin(E[s:e], A) for s, e in spans]),
    )


def test_empty_sentence() -> None:
    E, A = np.zeros((0, 3)), np.ones((5, 3))
    y = decode.viterbi(E, A)
    assert y.shape == (0,) and y.dtype == np.int32
    labels, scores = decode.kbest(E, A, 4)
    assert labels.shape == (1, 0) and scores.tolist() == [0.0]
    assert decode.max_marginals(E, A).shape == (0, 3)
    assert decode.delta_margin(E, A).shape == (0,)
    empty = np.zeros(3, np.int64)
    assert decode.viterbi_batch(E, empty, A).shape == (0,)
    assert decode.viterbi_multi(np.zeros((2, 0, 3)), empty, np.ones((2, 5, 3))).shape == (2, 0)
    assert decode.max_marginals_batch(E, empty, A).shape == (0, 3)


@pytest.mark.parametrize(
    "call",
    [
        lambda: decode.viterbi(np.zeros((3, 2)), np.zeros((3, 2))),
        lambda: decode.viterbi_batch(np.zeros((3, 2)), np.array([0, 2]), np.zeros((4, 2))),
        lambda: decode.viterbi_batch(np.zeros((3, 2)), np.array([0, 2, 1, 3]), np.zeros((4, 2))),
        lambda: decode.viterbi_multi(np.zeros((2, 3, 2)), np.array([0, 3]), np.zeros((3, 4, 2))),
        lambda: decode.kbest(np.zeros((3, 2)), np.zeros((4, 2)), 0),
        lambda: decode.sequence_score(np.zeros((3, 2)), np.zeros((4, 2)), np.array([0, 2, 1])),
        lambda: decode.emissions(np.array([0, 5]), np.array([0, 2]), np.zeros((5, 2))),
        lambda: decode.emissions(np.array([0, 1]), np.array([0, 3]), np.zeros((5, 2))),
    ],
)
def test_bad_shapes_and_values_are_rejected(call) -> None:
    with pytest.raises(ValueError):
        call()
