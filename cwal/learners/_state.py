"""The learner's state arrays: the mean, the diagonal covariance and the lazy-average sums of the
per-feature weights (features x labels) and of the transitions, grown as features and labels
arrive, averaged for prediction and copied for early stopping (algorithms.md §2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from cwal.features import FeatureIndex
from cwal.features.encoded import release_heap


class LearnerState:
    """The arrays ``W_`` / ``SW_`` / ``UW_`` (features x labels) and ``A_`` / ``SA_`` / ``UA_``
    (labels + 2 x labels: the start and end rows last) of a :class:`SequenceLearner`, which
    sets ``params`` (``init_variance``), ``labels_``, ``features_``, ``count_``, ``n_updates_``
    and ``_avg`` (the cached average) before ``_arrays_for``."""

    params: dict[str, Any]
    labels_: list[str]
    features_: FeatureIndex
    count_: float
    n_updates_: int
    _avg: tuple[np.ndarray, np.ndarray] | None

    DTYPES: ClassVar[dict[str, type]] = {
        "W": np.float32, "A": np.float64, "SW": np.float32, "SA": np.float32, "UW": np.float32,
        "UA": np.float64,
    }  # fmt: skip
    """Element type of each state array. The per-feature arrays (``W``, ``SW``, ``UW``: features
    x labels, 270 MB in float64 on CoNLL-2000 chunking) dominate memory, so all three are
    float32 (the kernels compute in float64 and round on store; 7 significant digits are far
    finer than the steps that change them; the lazy-average sums ``UW`` too: the averaged
    weights ``W - UW / count``, computed in float64 by ``averaged()`` and by the row snapshots
    of cwal/confidence/rows.py alike, agree with a float64 learner's to ~1e-5 relative and give
    the same chunk/esp F1, tests/test_learners.py); the small transition arrays stay float64
    but ``SA`` (``shrink`` treats both covariances alike)."""

    def _arrays_for(self, n_features: int) -> None:
        L = len(self.labels_)
        a0, dt = self.params["init_variance"], self.DTYPES
        self.W_ = np.zeros((n_features, L), dt["W"])
        self.A_ = np.zeros((L + 2, L), dt["A"])
        self.SW_ = np.full((n_features, L), a0, dt["SW"])
        self.SA_ = np.full((L + 2, L), a0, dt["SA"])
        self.UW_ = np.zeros((n_features, L), dt["UW"])
        self.UA_ = np.zeros((L + 2, L), dt["UA"])

    def _grow(self, n_features: int, exact: bool = False) -> None:
        """Make room for ``n_features`` rows (amortised doubling unless ``exact``); new weights 0,
        variance ``init_variance``."""
        old = self.W_.shape[0]
        if n_features <= old:
            return
        rows = n_features if exact else max(n_features, 2 * old, 1024)
        # the freed pages of the encoding before go back first (chunk: 4 MiB less at the start)
        release_heap(rows - old)
        L = len(self.labels_)
        for name, fill in (("W_", 0.0), ("SW_", self.params["init_variance"]), ("UW_", 0.0)):
            arr = np.full((rows, L), fill, self.DTYPES[name[:-1]])
            arr[:old] = getattr(self, name)
            setattr(self, name, arr)

    def _add_labels(self, tags: Iterable[str]) -> None:
        new = [t for t in dict.fromkeys(tags) if t not in self.labels_]
        if not new:
            return
        old_L = len(self.labels_)
        self.labels_.extend(new)
        L = len(self.labels_)
        a0 = self.params["init_variance"]

        def widen(arr: np.ndarray, fill: float, trans: bool) -> np.ndarray:
            rows = L + 2 if trans else arr.shape[0]
            out = np.full((rows, L), fill, arr.dtype)
            if trans:
                out[:old_L, :old_L] = arr[:old_L]
                out[L : L + 2, :old_L] = arr[old_L : old_L + 2]
            else:
                out[:, :old_L] = arr
            return out

        for name, fill in (("W_", 0.0), ("SW_", a0), ("UW_", 0.0)):
            setattr(self, name, widen(getattr(self, name), fill, False))
        for name, fill in (("A_", 0.0), ("SA_", a0), ("UA_", 0.0)):
            setattr(self, name, widen(getattr(self, name), fill, True))
        self._avg = None

    @property
    def n_features_(self) -> int:
        return len(self.features_)

    def averaged(self) -> tuple[np.ndarray, np.ndarray]:
        """The averaged mean ``(W, A)`` that predictions use: the mean of the weight vectors left
        after each example so far (cached until the next update)."""
        if self._avg is None:
            F = self.n_features_
            if self.count_ > 0:  # w - U / count in float64, with one temporary array
                W = np.multiply(self.UW_[:F], -1.0 / self.count_, dtype=np.float64)
                W += self.W_[:F]
                A = np.subtract(self.A_, self.UA_ / self.count_, dtype=np.float64)
            else:
                W, A = self.W_[:F].copy(), self.A_.copy()
            self._avg = (W, A)
        return self._avg

    def covariance(self) -> tuple[np.ndarray, np.ndarray]:
        """The diagonal covariance ``(SW, SA)`` (all ``init_variance`` for learners without one)."""
        return self.SW_[: self.n_features_], self.SA_

    _STATE = ("W_", "A_", "SW_", "SA_", "UW_", "UA_")

    def _snapshot(self, into: dict[str, Any] | None) -> dict[str, Any]:
        """A copy of the learned state (reusing ``into``'s buffers where shapes agree)."""
        out: dict[str, Any] = {} if into is None else into
        for name in self._STATE:
            arr = getattr(self, name)
            if name in out and out[name].shape == arr.shape:
                np.copyto(out[name], arr)
            else:
                out[name] = arr.copy()
        out["count_"], out["n_updates_"] = self.count_, self.n_updates_
        return out

    def _restore(self, kept: dict[str, Any]) -> None:
        """Put a ``_snapshot`` back (the weights, covariance, averages and counters)."""
        for name in (*self._STATE, "count_", "n_updates_"):
            setattr(self, name, kept[name])
        self._avg = None
