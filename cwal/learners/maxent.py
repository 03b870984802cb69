"""The L1-regularised maximum-entropy token classifier (Haffner, Phillips & Schapire): a baseline
that labels each token on its own from the same feature template, with no transitions.

``form="exclusive"``: their conditional model Q3(lambda), one multinomial over the labels fitted
by scikit-learn's ``saga`` (its only L1 multinomial solver). ``form="independent"``: Q3(lambda^c),
one binary "label vs non-label" model per label fitted by ``liblinear``; the top label is the
argmax of the per-label scores, probabilities are the sigmoids renormalised over the labels
(scikit-learn's one-vs-rest ``predict_proba``). No solver is written here: scikit-learn fits a
binary token x feature CSR matrix (the template's constant ``b`` feature is the intercept, so
``fit_intercept=False``; C is scikit-learn's: C x summed log-loss + |w|_1) and the coefficients
fill the shared ``W (F, L)`` (that side lives in ``_maxent_solver``). ``A`` stays zero, so
Viterbi under ``(W, A)`` is the argmax.
Cost: liblinear fits CoNLL-2000 NP (212k tokens) in 10-20 s per C at its own tolerance 0.01;
saga's L1 steps cost 1-2 min per pass there, so cap its passes (``max_iter``) on big data.

``learn_one`` is lazy because the solver is a batch one: an online update is a refit on every
sentence so far, so the sentence is stored and the refit runs at the next read of the model
(prediction, ``averaged()``, ``W_``, saving), once for everything queued. In the contract's
average each example counts once with the solution that absorbed it (the exact per-example mean
when the model is read after each example; ``average=False`` uses the latest solution). Model
files keep the encoded training data (int32 arrays), so a loaded model continues identically.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from cwal.decode import emissions
from cwal.features import Encoded
from cwal.io.sentence import Sentence
from cwal.learners._maxent_solver import FORMS, TOL, normalise, pad, solve, token_matrix
from cwal.learners.base import Progress, SequenceLearner
from cwal.measures import chunk_f1

C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
DEFAULT_C = 1.0  # used by learn_one before any fit has chosen C
DEV_FRACTION = 0.1

Chunk = tuple[np.ndarray, np.ndarray, np.ndarray]  # feature ids, features per token, label ids


class _Fresh:
    """A learned attribute that is read after any pending refit (``learn_one`` only queues)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = "_" + name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        obj._flush()
        return obj.__dict__[self.key]

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.key] = value


class MaxEntL1(SequenceLearner):
    """L1 maxent token classifier (``maxent-l1``) on scikit-learn's ``LogisticRegression``.

    ``form`` ``exclusive`` (multinomial, ``saga``) or ``independent`` (one-vs-rest, ``liblinear``
    by default); ``c`` fixes C, else ``fit`` picks it from ``c_grid`` on the last 10% of the
    sentences it is given (then refits on all of them). ``tol`` / ``max_iter`` go to the solver.
    Learned: ``c_`` (the C in use), ``c_path_`` (dev F1 / log-loss / non-zeros per grid value),
    ``n_nonzero_`` (non-zero weights of the current solution), ``converged_``, ``seed_``.
    ``fit``'s ``epochs`` is ignored (the solver runs to ``tol`` or ``max_iter``); ``seed`` is
    the solver's ``random_state``; ``dev`` is only scored for ``progress``, never used to choose.
    """

    name: ClassVar[str] = "maxent-l1"
    has_covariance: ClassVar[bool] = False
    DTYPES: ClassVar[dict[str, type]] = dict.fromkeys(
        ("W", "A", "SW", "SA", "UW", "UA"), np.float64
    )
    W_ = _Fresh()
    UW_ = _Fresh()
    SW_ = _Fresh()
    count_ = _Fresh()
    n_nonzero_ = _Fresh()
    converged_ = _Fresh()
    _pending = 0

    def __init__(
        self,
        labels: Sequence[str] = (),
        template: str = "chunk",
        *,
        form: str = "exclusive",
        c: float | None = None,
        c_grid: Sequence[float] = C_GRID,
        solver: str | None = None,
        tol: float | None = None,
        max_iter: int = 100,
        average: bool = True,
        min_count: int = 1,
        encoding: str = "raw",
    ) -> None:
        if form not in FORMS:
            raise ValueError(f"form must be one of {sorted(FORMS)}, not {form!r}")
        solver = solver or FORMS[form][0]
        if solver not in FORMS[form]:
            raise ValueError(f"the {form} form is fitted by {FORMS[form]}, not {solver!r}")
        grid = [float(x) for x in c_grid]
        if (c is not None and not float(c) > 0) or not grid or min(grid) <= 0:
            raise ValueError("c and every value of c_grid must be positive")
        tol = TOL[solver] if tol is None else float(tol)
        if not tol > 0 or int(max_iter) < 1:
            raise ValueError("tol must be positive and max_iter at least 1")
        super().__init__(labels, template, min_count=min_count, encoding=encoding)
        self.params = {
            "form": form,
            "c": None if c is None else float(c),
            "c_grid": grid,
            "solver": solver,
            "tol": tol,
            "max_iter": int(max_iter),
            "average": bool(average),
            "min_count": int(min_count),
            "encoding": encoding,
        }
        self.c_: float | None = self.params["c"]
        self.c_path_: list[dict[str, Any]] = []
        self.seed_ = 0
        self.n_nonzero_ = 0
        self.converged_ = True
        self._chunks: list[Chunk] = []
        self._seen = np.zeros(0, dtype=bool)  # labels with training tokens at the last refit
        self._fit_key: tuple | None = None

    # ----- training data and refits -----------------------------------------------------------
    def _append(self, enc: Encoded, gold: np.ndarray) -> None:
        counts = np.diff(enc.tok_offsets).astype(np.int32)
        self._chunks.append((np.asarray(enc.feat_ids, np.int32), counts, gold.astype(np.int32)))

    def _data(self) -> Chunk:
        """All stored training tokens (concatenated once, then kept as one chunk)."""
        if len(self._chunks) != 1:
            feats, counts, gold = ([c[i] for c in self._chunks] for i in range(3))
            empty = np.zeros(0, np.int32)
            join = np.concatenate if self._chunks else lambda _: empty
            self._chunks = [(join(feats), join(counts), join(gold))]
        return self._chunks[0]

    def _solve(self, X: Any, y: np.ndarray, c: float, seed: int) -> tuple[np.ndarray, bool]:
        """``(W (F, L), converged)`` of the L1 maxent fitted by scikit-learn on rows ``X``."""
        return solve(X, y, len(self.labels_), c, seed, self.params)

    def _refit(self, c: float, seed: int, examples: int) -> None:
        """Refit on every stored token and absorb ``examples`` sentences into the average."""
        feats, counts, gold = self._data()
        F, L = self.n_features_, len(self.labels_)
        d = self.__dict__
        key = (len(gold), F, L, c, seed)
        if key == self._fit_key:  # nothing new to learn from (e.g. an empty sentence)
            W, ok = d["_W_"], d["_converged_"]
        else:
            W, ok = self._solve(token_matrix(feats, counts, F), gold, c, seed)
            self._fit_key = key
        U = pad(d["_UW_"], (F, L))
        if self.params["average"]:  # mean of per-example solutions: w_T - sum_t (t-1) dw_t / T
            U += d["_count_"] * (W - pad(d["_W_"], (F, L)))
        d.update(_W_=W, _UW_=U, _SW_=np.ones((F, L)), _n_nonzero_=int(np.count_nonzero(W)))
        d["_count_"] = d["_count_"] + examples
        d["_converged_"] = ok
        self._seen = np.bincount(gold, minlength=L) > 0
        self._avg = None

    def _flush(self) -> None:
        """Absorb the sentences ``learn_one`` queued (one refit for all of them)."""
        pending = self._pending
        if pending:
            self._pending = 0
            if self.c_ is None:
                self.c_ = DEFAULT_C
            self._refit(self.c_, self.seed_, pending)

    def _add_labels(self, tags: Iterable[str]) -> None:
        new = [t for t in dict.fromkeys(tags) if t not in self.labels_]
        if not new:
            return
        self._flush()  # queued sentences are absorbed under the label set they came with
        self.labels_.extend(new)
        L, d = len(self.labels_), self.__dict__
        for per_feature, trans, fill in (
            ("_W_", "A_", 0.0),
            ("_UW_", "UA_", 0.0),
            ("_SW_", "SA_", 1.0),
        ):
            d[per_feature] = pad(d[per_feature], (d[per_feature].shape[0], L), fill)
            setattr(self, trans, np.full((L + 2, L), fill))  # no transitions: constant
        self._avg = None

    # ----- learning ---------------------------------------------------------------------------
    def learn_one(
        self, tokens: Sequence[str], tags: Sequence[str], **columns: Sequence[str]
    ) -> None:
        """Queue one labeled sentence; the model is refit on all data at its next read."""
        self._append(*self._admit_one(tokens, tags, columns))
        self._pending += 1
        self.n_updates_ += 1

    def fit(
        self,
        sentences: Iterable[Sentence],
        epochs: int = 10,
        seed: int = 0,
        dev: Sequence[Sentence] | None = None,
        progress: Progress | None = None,
    ) -> MaxEntL1:
        """Add the labeled ``sentences`` to the training data and refit on all of it, with ``c``
        or the C chosen on the last 10% of ``sentences``. ``epochs`` is ignored (a batch
        solver); ``progress(1, 1, stats)`` is called once (``mistakes``: training tokens
        mislabeled by the new model, ``seconds``, ``c``, ``n_nonzero``, ``dev_f1`` if ``dev``)."""
        start = time.perf_counter()
        self._flush()
        data, enc, gold_ids, _ = self._admit_corpus(sentences)
        self._append(enc, gold_ids)
        self.seed_ = int(seed)
        if self.params["c"] is None:
            self.c_, self.c_path_ = self._choose_c(data)
        else:
            self.c_ = self.params["c"]
        self._refit(self.c_, self.seed_, len(data))
        self.n_updates_ += len(data)
        feats, counts, gold = self._data()
        S = np.asarray(token_matrix(feats, counts, self.n_features_) @ self.averaged()[0])
        train_pred = np.argmax(self._masked(S), axis=1)
        stats: dict[str, Any] = {
            "mistakes": int(np.sum(train_pred != gold)),
            "seconds": time.perf_counter() - start,
            "c": self.c_,
            "n_nonzero": self.n_nonzero_,
        }
        if dev is not None:
            held = [s for s in dev if s.tags is not None]
            stats["dev_f1"] = self.score(held).f1
        if progress is not None:
            progress(1, 1, stats)
        return self

    def _choose_c(self, data: Sequence[Sentence]) -> tuple[float, list[dict[str, Any]]]:
        """The grid value with the best dev F1 (then lowest dev log-loss, then smallest C),
        dev = the last 10% of ``data`` (the newest stored tokens), trained on all tokens before."""
        n_dev = max(1, round(len(data) * DEV_FRACTION)) if len(data) >= 2 else 0
        dev = list(data[len(data) - n_dev :]) if n_dev else []
        lengths = [len(s) for s in dev]
        feats, counts, gold = self._data()
        n_train = len(gold) - sum(lengths)
        if not sum(lengths) or len(np.unique(gold[:n_train])) < 2:
            return DEFAULT_C, []
        X = token_matrix(feats, counts, self.n_features_)
        X_train, X_dev, y_dev = X[:n_train], X[n_train:], gold[n_train:]
        unseen = np.bincount(gold[:n_train], minlength=len(self.labels_)) == 0
        path: list[dict[str, Any]] = []
        for c in self.params["c_grid"]:
            W, ok = self._solve(X_train, gold[:n_train], c, self.seed_)
            S = np.asarray(X_dev @ W)
            S[:, unseen] = -np.inf
            P = normalise(S, self.params["form"])
            pred = self.tags_of(np.argmax(S, axis=1), lengths)
            p_gold = np.maximum(P[np.arange(len(y_dev)), y_dev], 1e-15)
            path.append({
                "c": c, "dev_f1": chunk_f1([s.tags for s in dev], pred).f1,
                "dev_log_loss": float(-np.mean(np.log(p_gold))),
                "n_nonzero": int(np.count_nonzero(W)), "converged": ok,
            })  # fmt: skip
        best = max(path, key=lambda r: (r["dev_f1"], -r["dev_log_loss"], -r["c"]))
        return best["c"], path

    # ----- prediction -------------------------------------------------------------------------
    def averaged(self) -> tuple[np.ndarray, np.ndarray]:
        """The averaged ``(W, A)`` predictions use (after any pending refit); ``A`` is zero."""
        self._flush()
        return super().averaged()

    def _masked(self, S: np.ndarray) -> np.ndarray:
        """Scores ``S`` (changed in place) with the labels that no training token had at -inf:
        a label declared up front is never predicted before it is seen (its weights are 0)."""
        seen = np.zeros(len(self.labels_), dtype=bool)
        seen[: len(self._seen)] = self._seen[: len(seen)]
        if seen.any():
            S[:, ~seen] = -np.inf
        return S

    def _scores(self, enc: Encoded) -> np.ndarray:
        W, _ = self.averaged()
        return self._masked(emissions(enc.feat_ids, enc.tok_offsets, W))

    def predict_ids(self, enc: Encoded) -> np.ndarray:
        """Internal label ids of every token of an encoded batch (per-token argmax)."""
        if not self.labels_:
            return np.zeros(enc.n_tokens, dtype=np.int32)
        return np.argmax(self._scores(enc), axis=1).astype(np.int32)

    def predict_one(self, tokens: Sequence[str], **columns: Sequence[str]) -> list[str]:
        """Tags of one sentence given as tokens plus optional columns (``pos=[...]``)."""
        if not self.labels_:
            return []
        s = Sentence(list(tokens), None, {k: list(v) for k, v in columns.items()})
        ids = self.predict_ids(self.encode([s]))
        return self.codec_.decode([self.labels_[i] for i in ids])

    def predict_proba(self, enc: Encoded) -> np.ndarray:
        """``(n_tokens, L)`` label probabilities of an encoded batch under the averaged weights
        (after a fresh ``fit``: scikit-learn's ``predict_proba``); labels never seen get 0."""
        if not self.labels_:
            raise ValueError("the model has no labels yet: train it on at least one sentence")
        return normalise(self._scores(enc), self.params["form"])

    def token_proba(self, enc: Encoded) -> np.ndarray:
        """Per token, the probability of its predicted label (``predict_ids``)."""
        P = self.predict_proba(enc)
        return P[np.arange(len(P)), self.predict_ids(enc)]

    # ----- persistence (cwal.learners._persist calls these) ---------------------------------------
    def extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """JSON metadata and int32 arrays (the encoded training data) beyond ``W``/``A``."""
        self._flush()
        feats, counts, gold = self._data()
        meta = {"c": self.c_, "c_path": self.c_path_, "seed": self.seed_,
                "n_nonzero": self.n_nonzero_, "converged": self.converged_}  # fmt: skip
        return meta, {"feats": feats, "counts": counts, "gold": gold}

    def restore_state(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        """Undo ``extra_state``; inconsistent data raises ValueError (a damaged file)."""
        feats, counts, gold = (
            np.ascontiguousarray(arrays[k], np.int32) for k in ("feats", "counts", "gold")
        )
        F, L = self.n_features_, len(self.labels_)
        if (
            int(counts.sum()) != len(feats)
            or len(counts) != len(gold)
            or (len(feats) and not 0 <= feats.min() <= feats.max() < F)
            or (len(gold) and not 0 <= gold.min() <= gold.max() < L)
        ):
            raise ValueError("stored training data does not match the features and labels")
        self._chunks = [(feats, counts, gold)]
        self.c_ = None if meta["c"] is None else float(meta["c"])
        self.c_path_ = list(meta["c_path"])
        self.seed_ = int(meta["seed"])
        self.n_nonzero_ = int(meta["n_nonzero"])
        self.converged_ = bool(meta["converged"])
        self._seen = np.bincount(gold, minlength=L) > 0
        self._fit_key = (len(gold), F, L, self.c_, self.seed_)
