"""Word clusters learned from unlabeled text, used as features (Turian et al. 2010's recipe with
clustered distributional vectors in place of Brown clusters).

Each lowercased word seen at least ``min_count`` times gets a vector of its left and right
neighbours (positive PMI of word/context counts, contexts = the ``contexts`` most frequent
words at offsets -2, -1, +1, +2), reduced to ``dim`` dimensions by truncated SVD and
length-normalised; k-means (scikit-learn) cuts them into ``sizes[-1]`` clusters and Ward's
agglomeration of the centroids (scipy) merges those into the coarser ``sizes``, so the levels
nest like the bit prefixes of a Brown hierarchy. A word's features are its cluster at every
level; rare and unseen words have none ("?").

Learning takes a few seconds on a 200K-token corpus and is cached on disk per text (a hash of
the lowercased tokens and the settings) under ``CWAL_CACHE_DIR`` (default ``CWAL_HOME/cache``,
else ``~/.cwal/cache``), as an ``.npz`` without pickles.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

UNKNOWN = "?"
SIZES = (16, 64, 256, 1024)
MIN_TOKENS = 20_000  # below this much text, clusters are not learned (too little evidence)
_VERSION = 1


class WordClusters:
    """A map from lowercased words to their cluster at each level of ``sizes``."""

    def __init__(self, words: Sequence[str], ids: np.ndarray, sizes: Sequence[int]) -> None:
        ids = np.asarray(ids, dtype=np.int32).reshape(len(words), len(sizes))
        self.sizes = tuple(int(s) for s in sizes)
        self.words = list(words)
        self.ids = ids
        self._map = {
            w: tuple(str(int(c)) for c in row)
            for w, row in zip(self.words, ids.tolist(), strict=True)
        }
        self._none = (UNKNOWN,) * len(self.sizes)

    def __len__(self) -> int:
        return len(self.words)

    def of(self, word: str) -> tuple[str, ...]:
        """The word's cluster id (as a string) at each level, ``?`` where it has none."""
        return self._map.get(word.lower(), self._none)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The clusters as arrays for a model file: words (JSON bytes), ids and sizes."""
        words = np.frombuffer(json.dumps(self.words).encode("utf-8"), dtype=np.uint8)
        return {"words": words, "ids": self.ids, "sizes": np.asarray(self.sizes, np.int32)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> WordClusters:
        """Inverse of ``to_arrays`` (ValueError when the parts do not fit together)."""
        words = json.loads(bytes(np.asarray(arrays["words"], dtype=np.uint8)).decode("utf-8"))
        sizes = [int(s) for s in np.asarray(arrays["sizes"]).tolist()]
        ids = np.asarray(arrays["ids"])
        if not isinstance(words, list) or ids.shape != (len(words), len(sizes)):
            raise ValueError("word clusters: words, ids and sizes do not match")
        return cls([str(w) for w in words], ids, sizes)


def _cache_dir() -> Path:
    explicit = os.environ.get("CWAL_CACHE_DIR")
    if explicit:
        return Path(explicit)
    home = os.environ.get("CWAL_HOME")
    return (Path(home) if home else Path.home() / ".cwal") / "cache"


def learn(
    texts: Iterable[Sequence[str]],
    sizes: Sequence[int] | None = None,
    *,
    dim: int = 64,
    contexts: int = 2000,
    min_count: int = 2,
    seed: int = 0,
    cache: bool = True,
) -> WordClusters | None:
    """Clusters of the words of ``texts`` (token sequences) at the levels ``sizes`` (default
    ``SIZES``; levels with more than half as many clusters as words are left out), or None when
    the text is too short (under ``MIN_TOKENS`` tokens) or has too few words for any level."""
    sizes = tuple(SIZES if sizes is None else sizes)
    sents = [[w.lower() for w in s] for s in texts]
    n_tokens = sum(map(len, sents))
    if n_tokens < MIN_TOKENS:
        return None
    digest = hashlib.sha256(
        json.dumps([_VERSION, list(sizes), dim, contexts, min_count, seed]).encode()
    )
    for s in sents:
        digest.update("\x1f".join(s).encode("utf-8", "surrogatepass") + b"\x1e")
    path = _cache_dir() / "clusters" / f"{digest.hexdigest()[:32]}.npz"
    if cache and path.exists():
        try:
            with np.load(path, allow_pickle=False) as z:
                return WordClusters.from_arrays({k: z[k] for k in z.files})
        except (OSError, ValueError, KeyError):
            pass  # a damaged cache entry is relearned and rewritten
    found = _learn(sents, tuple(sizes), dim, contexts, min_count, seed)
    if found is not None and cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
            np.savez(tmp, **found.to_arrays())
            os.replace(tmp, path)
        except OSError:
            pass  # an unwritable cache only costs the next run the learning time
    return found


def _learn(
    sents: list[list[str]], sizes: tuple[int, ...], dim: int, contexts: int, min_count: int,
    seed: int,
) -> WordClusters | None:  # fmt: skip
    from scipy import sparse
    from scipy.cluster.hierarchy import fcluster, linkage
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.utils.extmath import randomized_svd
    from threadpoolctl import threadpool_limits

    counts = Counter(w for s in sents for w in s)
    vocab = [w for w, c in counts.most_common() if c >= min_count]
    sizes = tuple(k for k in sizes if 2 * k <= len(vocab))
    if not sizes:
        return None
    finest = max(sizes)
    row_of = {w: i for i, w in enumerate(vocab)}
    ctx_of = {w: i for i, w in enumerate(vocab[:contexts])}
    n_ctx = len(ctx_of) + 1  # the last context: a sentence boundary
    lens = np.fromiter(map(len, sents), np.int64, len(sents))
    flat = [w for s in sents for w in s]
    r = np.fromiter((row_of.get(w, -1) for w in flat), np.int64, len(flat))
    c = np.fromiter((ctx_of.get(w, -2) for w in flat), np.int64, len(flat))
    pos = np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)
    length = np.repeat(lens, lens)
    rows_l, cols_l = [], []
    for k, off in enumerate((-2, -1, 1, 2)):
        j = pos + off
        inside = (j >= 0) & (j < length)
        cj = np.where(inside, c[np.clip(np.arange(len(flat)) + off, 0, len(flat) - 1)], n_ctx - 1)
        ok = (r >= 0) & (cj >= 0)
        rows_l.append(r[ok])
        cols_l.append(k * n_ctx + cj[ok])
    rows, cols = np.concatenate(rows_l), np.concatenate(cols_l)
    m = sparse.csr_matrix(
        (np.ones(len(rows), np.float32), (rows, cols)),
        shape=(len(vocab), 4 * n_ctx),
    )
    m.sum_duplicates()
    total = m.sum()
    row_sum = np.asarray(m.sum(axis=1)).ravel()
    col_sum = np.asarray(m.sum(axis=0)).ravel() ** 0.75  # context smoothing (Levy et al. 2015)
    col_sum *= total / col_sum.sum()
    coo = m.tocoo()
    pmi = np.log(coo.data * total / (row_sum[coo.row] * col_sum[coo.col]))
    keep = pmi > 0
    ppmi = sparse.csr_matrix(
        (pmi[keep].astype(np.float32), (coo.row[keep], coo.col[keep])), shape=m.shape
    )
    u, s, _ = randomized_svd(ppmi, n_components=min(dim, min(ppmi.shape) - 1), random_state=seed)
    vec = u * np.sqrt(s)
    vec /= np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
    km = MiniBatchKMeans(n_clusters=finest, init="random", n_init=3, batch_size=4096,
                         random_state=seed)  # fmt: skip
    with threadpool_limits(1):  # a shared machine: no oversubscribed BLAS/OpenMP threads
        fine = km.fit_predict(vec)
    tree = linkage(km.cluster_centers_, method="ward")
    levels = []
    for k in sizes:
        if k >= finest:
            levels.append(fine)
        else:
            levels.append(fcluster(tree, t=k, criterion="maxclust")[fine] - 1)
    return WordClusters(vocab, np.stack(levels, axis=1), sizes)
