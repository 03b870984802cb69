"""Template features of pool sentences, extracted once and re-mapped to a growing model cheaply.

Running a feature template in Python costs ~0.3 ms a sentence, too slow to redo for 1,000
candidates after every update. The cache interns each sentence's feature strings once into
*global* ids; a map from global id to the live model's feature id (-1: unknown to the model) is
kept in step as the model's index grows, so encoding a batch is a few numpy gathers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from cwal.features import Encoded, FeatureIndex
from cwal.features.clusters import WordClusters
from cwal.live.protocol import PoolSentence


class PoolCache:
    """Interned features of pool sentences plus the map onto one model's feature index; with
    ``clusters``, the template's features include theirs (as the model's index does)."""

    def __init__(self, template: str, clusters: WordClusters | None = None) -> None:
        self._fn = FeatureIndex(template, clusters=clusters).template_fn  # the model's strings
        self.clusters = clusters
        self._lock = threading.RLock()  # the scorer and request threads both add sentences
        self._vocab: dict[str, int] = {}
        self._strings: list[str] = []
        self._entries: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.lengths: dict[int, int] = {}
        self._sentences: dict[int, PoolSentence] = {}
        self._index: object | None = None  # the FeatureIndex the map follows
        self._model_ids: dict[str, int] = {}
        self._g2m = np.full(0, -1, dtype=np.int64)

    def __contains__(self, sentence_id: int) -> bool:
        return sentence_id in self._entries

    def missing(self, ids: Iterable[int]) -> list[int]:
        return [i for i in ids if i not in self._entries]

    def add(self, sentences: Iterable[PoolSentence]) -> None:
        """Extract and intern the features of sentences not cached yet (in small locked chunks,
        so a request thread never waits long behind the scorer)."""
        items = list(sentences)
        for start in range(0, len(items), 32):
            with self._lock:
                self._add(items[start : start + 32])

    def _add(self, sentences: Iterable[PoolSentence]) -> None:
        vocab = self._vocab
        for s in sentences:
            if s.id in self._entries:
                continue
            gids: list[int] = []
            offsets = [0]
            for tok in self._fn(s.tokens, s.columns):
                for f in tok:
                    g = vocab.get(f)
                    if g is None:
                        g = vocab[f] = len(vocab)
                        self._strings.append(f)
                    gids.append(g)
                offsets.append(len(gids))
            self._sentences[s.id] = s
            self._entries[s.id] = (np.asarray(gids, dtype=np.int64), np.asarray(offsets, np.int64))
            self.lengths[s.id] = len(s.tokens)

    def follows(self, index) -> bool:
        return index is self._index

    def follow(self, index, strings: list[str]) -> None:
        """Start following a new model's index, given a copy of its strings (the heavy part of
        a model swap; needs no model lock). :meth:`sync` then picks up later growth."""
        model_ids = {f: i for i, f in enumerate(strings)}
        with self._lock:
            get = model_ids.get
            n = len(self._strings)
            self._g2m = np.fromiter((get(f, -1) for f in self._strings), np.int64, n)
            self._model_ids = model_ids
            self._index = index

    def sync(self, index) -> None:
        """Follow ``index`` (a model's FeatureIndex): call under the lock that guards the model."""
        with self._lock:
            if index is not self._index:
                self.follow(index, index.strings)
            self._sync(index)

    def _sync(self, index) -> None:
        start = len(self._model_ids)
        if len(index) > start:
            for i, f in enumerate(index.strings[start:], start):
                self._model_ids[f] = i
                g = self._vocab.get(f)
                if g is not None and g < self._g2m.shape[0]:
                    self._g2m[g] = i
        mapped = self._g2m.shape[0]
        if len(self._strings) > mapped:
            get = self._model_ids.get
            tail = np.fromiter((get(f, -1) for f in self._strings[mapped:]), np.int64)
            self._g2m = np.concatenate([self._g2m, tail])

    def sentence(self, sentence_id: int) -> PoolSentence:
        with self._lock:
            return self._sentences[sentence_id]

    def gather(self, ids: Sequence[int]) -> GlobalBatch:
        """The cached sentences ``ids`` as one batch of *global* feature ids."""
        with self._lock:
            parts = [self._entries[i] for i in ids]
        if not parts:
            z = np.zeros(0, np.int64)
            return GlobalBatch(z, z.copy(), z.copy())
        gids = np.concatenate([p[0] for p in parts])
        tok_counts = np.concatenate([np.diff(p[1]) for p in parts])
        lens = np.array([p[1].shape[0] - 1 for p in parts], dtype=np.int64)
        return GlobalBatch(gids, tok_counts, lens)

    def model_ids(self, gids: np.ndarray) -> np.ndarray:
        """Model feature ids of global ids (-1: unknown); call right after :meth:`sync`, under
        the same lock (the map changes as the model grows)."""
        with self._lock:
            return self._g2m[gids]

    def encode(self, ids: Sequence[int]) -> Encoded:
        """The cached sentences ``ids`` in the followed model's feature ids (unknown features
        dropped, as the model's own encoder does). Call after :meth:`sync`."""
        batch = self.gather(ids)
        return batch.localize(self.model_ids(batch.gids), local_ids=False)[0]


@dataclass
class GlobalBatch:
    """A batch in global feature ids: ``gids`` token by token (``tok_counts`` each)."""

    gids: np.ndarray
    tok_counts: np.ndarray
    sent_lens: np.ndarray

    def localize(self, mids: np.ndarray, local_ids: bool = True) -> tuple[Encoded, np.ndarray]:
        """Given the model ids of ``gids`` (-1: unknown), the batch with unknown features
        dropped and the distinct known model ids, ascending. With ``local_ids`` the batch's
        feature ids index that list (a row snapshot, as ``np.unique`` would number it); else they
        are the model's own ids. Linear time: no sort."""
        keep = mids >= 0
        occ = mids[keep]
        present = np.zeros(int(occ.max()) + 1 if occ.size else 0, dtype=bool)
        present[occ] = True
        known = np.flatnonzero(present)
        if local_ids:
            occ = (np.cumsum(present) - 1)[occ]
        starts = np.r_[0, np.cumsum(self.tok_counts)[:-1]].astype(np.int64)
        kept = np.add.reduceat(keep.astype(np.int64), starts) if keep.size else starts * 0
        kept[self.tok_counts == 0] = 0
        enc = Encoded(
            occ.astype(np.int32),
            np.r_[0, np.cumsum(kept)].astype(np.int64),
            np.r_[0, np.cumsum(self.sent_lens)].astype(np.int64),
        )
        return enc, known
