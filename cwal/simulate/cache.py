"""Encode a simulation's corpus once: a learner's ``encode`` becomes an array gather.

Feature strings depend on the tokens only, so every pool and evaluation sentence is turned into
*global* feature ids once. A learner's own index admits features as it learns; ``CachedModel``
keeps the map global id -> learner id current and answers ``encode(sentences)`` for cached
sentences by gathering and mapping ids (unseen features dropped), exactly as the learner's own
``encode`` would. Strategies receive the ``CachedModel`` in place of the learner.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from cwal.features import Encoded, FeatureIndex
from cwal.io.sentence import Sentence


@numba.njit(cache=True)
def gather_kernel(feat, tok_off, sent_tok, picked, g2m):
    """Sentences ``picked`` of a globally encoded corpus, ids mapped by ``g2m`` (-1 dropped)."""
    n_tok = 0
    n_feat = 0
    for b in range(picked.shape[0]):
        s = picked[b]
        n_tok += sent_tok[s + 1] - sent_tok[s]
        n_feat += tok_off[sent_tok[s + 1]] - tok_off[sent_tok[s]]
    out = np.empty(n_feat, dtype=np.int32)
    out_tok = np.empty(n_tok + 1, dtype=np.int64)
    out_sent = np.empty(picked.shape[0] + 1, dtype=np.int64)
    out_tok[0] = 0
    out_sent[0] = 0
    m = 0
    t = 0
    for b in range(picked.shape[0]):
        s = picked[b]
        for p in range(sent_tok[s], sent_tok[s + 1]):
            for i in range(tok_off[p], tok_off[p + 1]):
                j = g2m[feat[i]]
                if j >= 0:
                    out[m] = j
                    m += 1
            t += 1
            out_tok[t] = m
        out_sent[b + 1] = t
    return out[:m], out_tok, out_sent


class FeatureCache:
    """The global feature ids of a fixed list of sentences (one template)."""

    def __init__(self, sentences: Sequence[Sentence], template: str) -> None:
        index = FeatureIndex(template)
        enc = index.encode(sentences, grow=True)
        self.template = template
        self.feat = enc.feat_ids
        self.tok_off = enc.tok_offsets
        self.sent_tok = enc.sent_offsets
        self.ids = {s: i for i, s in enumerate(index.strings)}
        self.position = {id(s): i for i, s in enumerate(sentences)}
        self.sentences = list(sentences)

    def __len__(self) -> int:
        return len(self.sentences)

    def indices(self, sentences: Sequence[Sentence]) -> np.ndarray | None:
        """Cache positions of ``sentences`` (by identity), or None if one is not cached."""
        out = np.empty(len(sentences), dtype=np.int64)
        for b, s in enumerate(sentences):
            i = self.position.get(id(s))
            if i is None:
                return None
            out[b] = i
        return out

    def gather(self, picked: np.ndarray, g2m: np.ndarray) -> Encoded:
        feat, tok, sent = gather_kernel(self.feat, self.tok_off, self.sent_tok, picked, g2m)
        return Encoded(feat, tok, sent)


class CachedModel:
    """A learner whose ``encode`` reads a :class:`FeatureCache`; everything else is delegated.

    Call :meth:`sync` after the learner has learned (new features) before the next ``encode``.
    """

    def __init__(self, model: Any, cache: FeatureCache) -> None:
        self.model = model
        self.cache = cache
        self._index: FeatureIndex | None = None
        self._known = 0
        self._g2m = np.full(len(cache.ids), -1, dtype=np.int32)
        self.sync()

    def sync(self) -> None:
        """Admit the learner's features added since the last call (rebuild after a re-index)."""
        index = self.model.features_
        if index is not self._index or len(index) < self._known:
            self._g2m.fill(-1)
            self._index, self._known = index, 0
        if len(index) == self._known:
            return
        ids = self.cache.ids
        for j, s in enumerate(index.strings[self._known :], start=self._known):
            g = ids.get(s)
            if g is not None:
                self._g2m[g] = j
        self._known = len(index)

    def encode(self, sentences: Any) -> Encoded:
        sents = list(sentences)
        picked = self.cache.indices(sents)
        if picked is None:
            return self.model.encode(sents)
        self.sync()
        return self.cache.gather(picked, self._g2m)

    def encode_indices(self, picked: np.ndarray) -> Encoded:
        """The cached sentences at positions ``picked`` encoded for the learner."""
        self.sync()
        return self.cache.gather(np.asarray(picked, dtype=np.int64), self._g2m)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)
