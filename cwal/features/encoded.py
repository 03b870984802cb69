"""The integer form of encoded sentences (``Encoded``) and the merge of per-token extra features
into it (``with_extra``: the document features)."""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass
from functools import cache

import numpy as np

_TRIM_TOKENS = 50_000  # batches at least this long hand their freed heap back (release_heap)


@dataclass
class Encoded:
    """A sentence (or a batch of sentences) as integer arrays.

    Token p's feature ids are ``feat_ids[tok_offsets[p]:tok_offsets[p + 1]]``; in a batch,
    sentence b spans tokens ``sent_offsets[b]:sent_offsets[b + 1]``.
    """

    feat_ids: np.ndarray
    tok_offsets: np.ndarray
    sent_offsets: np.ndarray

    @property
    def n_tokens(self) -> int:
        return len(self.tok_offsets) - 1

    @property
    def n_sentences(self) -> int:
        return len(self.sent_offsets) - 1

    def sentence(self, b: int) -> Encoded:
        """The b-th sentence of a batch as its own Encoded (offsets rebased to 0)."""
        t0, t1 = int(self.sent_offsets[b]), int(self.sent_offsets[b + 1])
        f0, f1 = int(self.tok_offsets[t0]), int(self.tok_offsets[t1])
        return Encoded(
            self.feat_ids[f0:f1].copy(),
            self.tok_offsets[t0 : t1 + 1] - f0,
            np.array([0, t1 - t0], dtype=np.int64),
        )


def with_extra(
    enc: Encoded, extra: list[list[list[str]]], ids: dict[str, int], grow: bool
) -> Encoded:
    """``enc`` with each token's ``extra`` strings (per sentence, per token) appended after its
    own features: ids by first appearance when ``grow``, else unknown strings dropped."""
    flat = [f for sent in extra for tok in sent for f in tok]
    if not flat:
        return enc
    counts = np.fromiter((len(tok) for sent in extra for tok in sent), np.int64, enc.n_tokens)
    if grow:
        add = ids.setdefault
        got = np.fromiter((add(f, len(ids)) for f in flat), np.int64, len(flat))
    else:
        get = ids.get
        got = np.fromiter((get(f, -1) for f in flat), np.int64, len(flat))
        keep = got >= 0
        tok_of = np.repeat(np.arange(enc.n_tokens), counts)
        got, counts = got[keep], np.bincount(tok_of[keep], minlength=enc.n_tokens)
    base = np.diff(enc.tok_offsets)
    tok_offsets = np.zeros(enc.n_tokens + 1, dtype=np.int64)
    np.cumsum(base + counts, out=tok_offsets[1:])
    feat = np.empty(int(tok_offsets[-1]), dtype=np.int32)
    own = np.ones(len(feat), dtype=bool)
    # the extra features of token p sit at tok_offsets[p] + base[p] + 0..counts[p]-1
    within = np.arange(len(got)) - np.repeat(np.cumsum(counts) - counts, counts)
    at = np.repeat(tok_offsets[:-1] + base, counts) + within
    own[at] = False
    feat[at] = got
    feat[own] = enc.feat_ids
    return Encoded(feat, tok_offsets, enc.sent_offsets)


@cache
def _malloc_trim() -> object | None:
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


def release_heap(n_tokens: int) -> None:
    """After encoding a large batch, hand the C heap's free pages back to the system (glibc's
    ``malloc_trim``; elsewhere nothing). Encoding a corpus frees ~100 MB of temporary strings
    and lists whose pages glibc keeps otherwise, so the weight arrays that come next would be
    peak memory on top of them (chunk: 451 MB -> 312 MB before the weights)."""
    trim = _malloc_trim()
    if trim is not None and n_tokens >= _TRIM_TOKENS:
        trim(0)
