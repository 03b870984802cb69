"""The sequence learner: one class, one contract, the update rule chosen by name.

``learn_one`` applies one online update and returns nothing; ``predict`` decodes with the averaged
mean; ``fit`` runs seeded epochs over a corpus. The feature index grows as new sentences arrive, so
the weight arrays grow with it (capacity doubling; the arrays, their averaging and snapshots live in
``_state``). Persistence lives in ``_persist``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from statistics import NormalDist
from typing import Any, ClassVar

import numpy as np

from cwal.decode import emissions, viterbi, viterbi_batch
from cwal.features import Encoded, FeatureIndex
from cwal.io.sentence import Sentence
from cwal.learners import _kernels as K
from cwal.learners import _persist
from cwal.learners._state import LearnerState
from cwal.learners._tags import TagCodec
from cwal.measures import Report, chunk_f1

Progress = Callable[[int, int, dict[str, Any]], None]


class SequenceLearner(LearnerState):
    """A linear first-order sequence labeler trained online (algorithms.md §2).

    ``algorithm`` is one of ``perceptron``, ``pa``, ``cw`` (``form`` ``var`` or ``stdev``) and
    ``arow``. ``c`` is PA's aggressiveness C or AROW's r; ``eta`` is CW's confidence (phi is its
    normal quantile); ``projection`` is ``l2`` (the sequence paper's diagonal) or ``kl``.
    ``k`` competing labelings (k-best Viterbi) are used per sentence; ``mistake_driven`` skips
    sentences already labeled right, else a too-small margin to the best wrong labeling updates.
    ``min_count`` drops features seen fewer times in ``fit``'s data (then the index is frozen).
    ``encoding`` ``bioes`` trains on BIOES re-encoded chunk tags (``labels_`` then holds BIOES
    labels; ``predict`` converts back to the training scheme), ``raw`` on the tags as given.
    ``clusters``: ``fit`` on a fresh index first learns word clusters from the text of its data
    and its ``unlabeled`` sentences (cwal/features/clusters.py) and adds them as features.
    """

    name: ClassVar[str] = "learner"
    has_covariance: ClassVar[bool] = False
    registry: ClassVar[dict[str, type[SequenceLearner]]] = {}
    """Every learner class by its ``name`` (the first class to take a name keeps it): how a
    saved model finds its class without this module knowing the learners."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            SequenceLearner.registry.setdefault(cls.name, cls)

    def __init__(
        self,
        labels: Sequence[str] = (),
        template: str = "chunk",
        *,
        algorithm: str = "arow",
        c: float = 1.0,
        eta: float = 0.9,
        form: str = "stdev",
        projection: str = "l2",
        init_variance: float = 1.0,
        min_count: int = 1,
        k: int = 1,
        mistake_driven: bool = False,
        encoding: str = "raw",
        clusters: bool = False,
        documents: bool = False,
        lexicon: bool = False,
    ) -> None:
        codes = {"perceptron": K.PERCEPTRON, "pa": K.PA, "arow": K.AROW}
        if algorithm == "cw":
            self._algo = K.CW_VAR if form == "var" else K.CW_STDEV
        elif algorithm in codes:
            self._algo = codes[algorithm]
        else:
            raise ValueError(f"unknown algorithm {algorithm!r}")
        if projection not in ("l2", "kl"):
            raise ValueError(f"projection must be 'l2' or 'kl', not {projection!r}")
        if form not in ("var", "stdev"):
            raise ValueError(f"form must be 'var' or 'stdev', not {form!r}")
        if int(k) < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        if not 0.5 < float(eta) < 1.0:
            raise ValueError(f"eta must lie in (0.5, 1), not {eta}")
        if float(c) <= 0 or float(init_variance) <= 0:
            raise ValueError("c and init_variance must be positive")
        self.params: dict[str, Any] = {
            "algorithm": algorithm,
            "c": float(c),
            "eta": float(eta),
            "form": form,
            "projection": projection,
            "init_variance": float(init_variance),
            "min_count": int(min_count),
            "k": int(k),
            "mistake_driven": bool(mistake_driven),
            "encoding": encoding,
            "clusters": bool(clusters),
            "documents": bool(documents),
            "lexicon": bool(lexicon),
        }
        self.codec_ = TagCodec(encoding)
        self.labels_: list[str] = list(labels)
        self.features_ = FeatureIndex(template, documents=documents)
        self.count_ = 0.0
        self.n_updates_ = 0
        self._arrays_for(0)
        self._avg: tuple[np.ndarray, np.ndarray] | None = None

    # ----- learning ---------------------------------------------------------------------------
    def _tag_ids(self, tags: Sequence[str]) -> np.ndarray:
        index = {t: i for i, t in enumerate(self.labels_)}
        return np.array([index[t] for t in tags], dtype=np.int32)

    def _phi(self) -> float:
        return NormalDist().inv_cdf(self.params["eta"])

    def _run(self, order: np.ndarray, enc: Encoded, gold: np.ndarray) -> int:
        """One compiled pass over ``order``; returns the tokens mislabeled before each update."""
        self._grow(self.n_features_)
        self.count_, errors = self._epoch(order, enc, gold)
        self.n_updates_ += len(order)
        self._avg = None
        return int(errors)

    def _epoch(self, order: np.ndarray, enc: Encoded, gold: np.ndarray) -> tuple[float, int]:
        """The compiled epoch kernel: ``(new count_, mistakes)``. A subclass with its own update
        rule overrides this hook (it must update W_/A_ and the lazy averages UW_/UA_)."""
        p = self.params
        return K.train_epoch(
            order, enc.feat_ids, enc.tok_offsets, enc.sent_offsets, gold,
            self.W_, self.A_, self.SW_, self.SA_, self.UW_, self.UA_, self.count_,
            self._algo, K.PROJ_L2 if p["projection"] == "l2" else K.PROJ_KL,
            p["c"], self._phi(), p["k"], p["mistake_driven"],
        )  # fmt: skip

    def learn_one(
        self, tokens: Sequence[str], tags: Sequence[str], **columns: Sequence[str]
    ) -> None:
        """One online update on one labeled sentence (new features and labels are admitted)."""
        enc, gold = self._admit_one(tokens, tags, columns)
        self._run(np.zeros(1, dtype=np.int64), enc, gold)

    def _admit_one(
        self, tokens: Sequence[str], tags: Sequence[str], columns: dict[str, Sequence[str]]
    ) -> tuple[Encoded, np.ndarray]:
        """One labeled sentence encoded with its new features and labels admitted: ``(enc, gold
        label ids)``; a token / tag count mismatch raises ValueError."""
        if len(tokens) != len(tags):
            raise ValueError(f"{len(tokens)} tokens but {len(tags)} tags")
        internal = self.codec_.encode(tags)
        self._add_labels(internal)
        s = Sentence(list(tokens), None, {k: list(v) for k, v in columns.items()})
        return self.features_.encode([s]), self._tag_ids(internal)

    def _admit_corpus(
        self, sentences: Iterable[Sentence]
    ) -> tuple[list[Sentence], Encoded, np.ndarray, bool]:
        """The labeled ``sentences`` encoded with their features and labels admitted (the
        ``min_count`` cut-off on a fresh index): ``(data, enc, gold label ids, fresh)``."""
        data = [s for s in sentences if s.tags is not None]
        internal = [self.codec_.encode(s.tags) for s in data]
        self._add_labels(t for tags in internal for t in tags)
        fresh = not self.features_.frozen and not self.n_features_
        if self.params["min_count"] > 1 and fresh:
            enc = self.features_.encode_pruned(data, self.params["min_count"])
        else:
            enc = self.features_.encode(data)
        return data, enc, self._tag_ids([t for tags in internal for t in tags]), fresh

    def fit(
        self,
        sentences: Iterable[Sentence],
        epochs: int = 10,
        seed: int = 0,
        dev: Sequence[Sentence] | None = None,
        progress: Progress | None = None,
        patience: int | None = None,
        unlabeled: Iterable[Sequence[str]] = (),
    ) -> SequenceLearner:
        """Train ``epochs`` passes in seeded random orders (same seed, same model).

        After each epoch ``progress(epoch, epochs, stats)`` gets ``mistakes`` (training tokens
        mislabeled before their update), ``seconds`` and, when ``dev`` is given, ``dev_f1``.
        With ``dev`` and ``patience``, the model keeps the state of its best dev epoch (the
        earliest on a tie; ``best_epoch_``) and training stops once ``patience`` epochs in a row
        have not beaten it; ``stats`` then also holds ``best_epoch``.
        (``cwal.learners.shards.fit_shards`` trains copies on disjoint shards in parallel
        processes and merges them.) ``unlabeled`` (token sequences) adds text to learn word
        clusters from when the ``clusters`` parameter is on and the index is still empty.
        """
        if patience is not None and int(patience) < 1:
            raise ValueError(f"patience must be at least 1, not {patience}")
        sentences = list(sentences)
        self._learn_clusters(sentences, unlabeled)
        self._learn_lexicon(sentences)
        data, enc, gold, fresh = self._admit_corpus(sentences)
        self._grow(self.n_features_, exact=fresh)
        held = [s for s in dev if s.tags is not None] if dev is not None else []
        held_enc = self.encode(held)  # the index no longer grows during the epochs
        rng = np.random.default_rng(seed)
        choose = dev is not None and patience is not None
        best_f1, best, kept = -1.0, 0, None
        for epoch in range(1, epochs + 1):
            start = time.perf_counter()
            errors = self._run(rng.permutation(len(data)).astype(np.int64), enc, gold)
            stats: dict[str, Any] = {"mistakes": errors, "seconds": time.perf_counter() - start}
            if dev is not None:
                pred = self.tags_of(self.predict_ids(held_enc), [len(s) for s in held])
                stats["dev_f1"] = chunk_f1([s.tags for s in held], pred).f1
                if choose and stats["dev_f1"] > best_f1:
                    best_f1, best, kept = stats["dev_f1"], epoch, self._snapshot(kept)
                stats["best_epoch"] = best
            if progress is not None:
                progress(epoch, epochs, stats)
            if choose and epoch - best >= patience:
                break
        if kept is not None and best != epoch:
            self._restore(kept)
        self.best_epoch_ = best if choose else epochs
        return self

    def _learn_clusters(
        self, sentences: Sequence[Sentence], unlabeled: Iterable[Sequence[str]]
    ) -> None:
        """With ``clusters`` on and an empty index: clusters from all the text (or none when
        there is too little of it; cwal.features.clusters.MIN_TOKENS)."""
        index = self.features_
        if not self.params.get("clusters") or index.frozen or len(index) or index.clusters:
            return
        from cwal.features import clusters

        texts = [*(s.tokens for s in sentences), *unlabeled]
        found = clusters.learn(texts)
        if found is not None:
            index.set_clusters(found)

    def _learn_lexicon(self, sentences: Sequence[Sentence]) -> None:
        """With ``lexicon`` on and an empty index: the labeled spans of ``sentences`` as a
        lexicon feature (cwal/features/lexicon.py; jackknifed over the training data)."""
        index = self.features_
        if not self.params.get("lexicon") or index.frozen or len(index) or index.lexicon:
            return
        from cwal.features.lexicon import Lexicon

        index.lexicon = Lexicon.learn(sentences)

    # ----- prediction -------------------------------------------------------------------------
    def encode(self, sentences: Iterable[Sentence]) -> Encoded:
        """Encode for prediction: unseen features are dropped, never added."""
        return self.features_.encode(sentences, grow=False)

    def predict_ids(self, enc: Encoded) -> np.ndarray:
        """Internal label ids (into ``labels_``) of every token of an encoded batch under the
        averaged mean; ``tags_of`` turns them into user tags."""
        W, A = self.averaged()
        return viterbi_batch(emissions(enc.feat_ids, enc.tok_offsets, W), enc.sent_offsets, A)

    def predict(self, sentences: Iterable[Sentence]) -> list[list[str]]:
        """Tags of every sentence under the averaged mean (empty lists before any training)."""
        sents = list(sentences)
        if not self.labels_:
            return [[] for _ in sents]
        return self.tags_of(self.predict_ids(self.encode(sents)), [len(s) for s in sents])

    def tags_of(self, ids: np.ndarray, lengths: Sequence[int]) -> list[list[str]]:
        """User tags from ``predict_ids`` output (internal label ids, sentences concatenated)."""
        out, t = [], 0
        for n in lengths:
            out.append(self.codec_.decode([self.labels_[i] for i in ids[t : t + n]]))
            t += n
        return out

    def predict_one(self, tokens: Sequence[str], **columns: Sequence[str]) -> list[str]:
        """Tags of one sentence given as tokens plus optional columns (``pos=[...]``)."""
        if not self.labels_:
            return []
        s = Sentence(list(tokens), None, {k: list(v) for k, v in columns.items()})
        enc = self.encode([s])
        W, A = self.averaged()
        ids = viterbi(emissions(enc.feat_ids, enc.tok_offsets, W), A)
        return self.codec_.decode([self.labels_[i] for i in ids])

    def score(self, sentences: Sequence[Sentence]) -> Report:
        """conlleval chunk scores (``cwal.measures.Report``) of the predictions on labeled data."""
        labeled = [s for s in sentences if s.tags is not None]
        return chunk_f1([s.tags for s in labeled], self.predict(labeled))

    # ----- persistence ------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The model as the bytes of an ``.npz`` (arrays plus JSON metadata; never pickle)."""
        return _persist.to_bytes(self)

    def save(self, path: str | Path) -> None:
        """Write the model to ``path`` (an ``.npz``; see ``to_bytes``)."""
        _persist.save(self, path)

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bytes>") -> SequenceLearner:
        """Rebuild a model from ``to_bytes`` output; a malformed file raises ModelFileError."""
        return _persist.from_bytes(data, _build, source)

    @classmethod
    def load(cls, path: str | Path) -> SequenceLearner:
        """Read a model saved by ``save``; a missing or malformed file raises ModelFileError."""
        return _persist.load(path, _build)

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.params.items() if k != "algorithm"}
        return f"{type(self).__name__}({shown}, labels={len(self.labels_)}, features={len(self.features_)})"


def _build(name: str, **params: Any) -> SequenceLearner:
    """A new learner of the registered class ``name`` (what a saved model is rebuilt into)."""
    try:
        cls = SequenceLearner.registry[name]
    except KeyError:
        raise ValueError(f"unknown learner {name!r}") from None
    params.pop("algorithm", None)
    return cls(**params)
