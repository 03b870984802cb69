"""The integer form of encoded sentences (``Encoded``) and the merge of per-token extra features
into it (``with_slots``: the document features)."""

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


def with_slots(
    enc: Encoded, slots: list[tuple[str, np.ndarray, list[str]]], ids: dict[str, int], grow: bool
) -> Encoded:
    """``enc`` with more features appended to each token after its own: per slot ``(prefix,
    code per token or -1 for none, string of each code)`` the feature ``prefix=string``, in slot
    order. New strings get ids by first appearance (token-major) when ``grow``; otherwise strings
    the index lacks are left out."""
    n = enc.n_tokens
    if not slots or not n:
        return enc
    codes = np.stack([c for _, c, _ in slots], axis=1)  # (tokens, slots)
    present = codes >= 0
    # every distinct (slot, code) in order of its first flat position, mapped to an id once
    width = max(len(strings) for _, _, strings in slots) + 1
    key = np.where(present, np.arange(len(slots)) * width + codes, -1).ravel()
    flat_key = key[key >= 0]
    uniq, first = np.unique(flat_key, return_index=True)
    order = np.argsort(first, kind="stable")
    gid = np.empty(len(uniq), np.int64)
    names = [f"{slots[u // width][0]}={slots[u // width][2][u % width]}" for u in uniq.tolist()]
    if grow:
        add = ids.setdefault
        for j in order.tolist():
            gid[j] = add(names[j], len(ids))
    else:
        get = ids.get
        gid[:] = [get(name, -1) for name in names]
    got = gid[np.searchsorted(uniq, flat_key)]
    tok_of = np.repeat(np.arange(n), present.sum(axis=1))
    keep = got >= 0
    got, tok_of = got[keep], tok_of[keep]
    counts = np.bincount(tok_of, minlength=n)
    base = np.diff(enc.tok_offsets)
    tok_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(base + counts, out=tok_offsets[1:])
    feat = np.empty(int(tok_offsets[-1]), dtype=np.int32)
    own = np.ones(len(feat), dtype=bool)
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


_M_MMAP_THRESHOLD = -3  # glibc mallopt parameter
_MMAP_FROM = 1 << 17  # glibc's initial threshold (128 KiB)


def hand_back_large_blocks() -> bool:
    """Keep glibc's mmap threshold fixed at 128 KiB for the rest of the process (a one-shot
    command such as ``cwal train``; elsewhere nothing): every larger block, numpy's arrays
    included, is mapped on its own and unmapped when freed. glibc otherwise raises the
    threshold after the first such free, so that the encoder's many temporary arrays land on
    the heap, whose freed pages it keeps (chunk training: 474 -> 423 MB resident before the
    model is saved). Returns whether the setting took."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = getattr(ctypes.CDLL(name), "mallopt", None) if name else None
    except OSError:
        return False
    return bool(mallopt is not None and mallopt(_M_MMAP_THRESHOLD, _MMAP_FROM))


def release_heap(n_tokens: int) -> None:
    """After encoding a large batch, hand the C heap's free pages back to the system (glibc's
    ``malloc_trim``; elsewhere nothing). Encoding a corpus frees ~100 MB of temporary strings
    and lists whose pages glibc keeps otherwise, so the weight arrays that come next would be
    peak memory on top of them (chunk: 451 MB -> 312 MB before the weights)."""
    trim = _malloc_trim()
    if trim is not None and n_tokens >= _TRIM_TOKENS:
        trim(0)
