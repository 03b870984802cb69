"""Shard-parallel training and model combination (crammer-dredze-pereira §7.10; algorithms.md §2).

``fit_shards`` trains P copies of a learner, all from one start model, on P disjoint seeded shards
of a corpus, one worker process each, and ``combine`` merges them into one model. Rules, per
weight, with precisions ``p_c = 1 / s2_c`` of the copies and ``p_0`` of the start:

* ``kl`` (the paper's formula): summed precision ``p = sum_c p_c``, precision-weighted mean
  ``mu = sum_c p_c mu_c / p``. [ours] The literal minimiser of the paper's objective (total KL to
  the copies) would average the precisions; the mean, all that prediction uses, is the same.
* ``average`` (the paper's L2 combination): the plain mean of the means and of the variances.
* ``product`` [ours, the default]: the product of the copies' Gaussians over the start counted
  once, ``p = sum_c p_c - (P - 1) p_0``, ``mu = (sum_c p_c mu_c - (P - 1) p_0 mu_0) / p``: the
  exact merge of posteriors that share a prior. A weight only one shard moved keeps that
  shard's value where ``kl`` and ``average`` shrink it towards the others' 0, which matters for
  the rare features NER lives on: test F1 against one process, CW, 10 epochs, P = 2:
  ``product`` np -0.02, esp -0.33, ned +0.01 points; ``kl`` -0.22, -0.57, -1.60; ``average``
  -0.28, -0.71, -1.66 (bench/shards.py). CW and AROW variances only shrink, so ``p_c >= p_0``.

Learners without a covariance (perceptron, PA, the logistic ones with ``metric="identity"``)
always use ``average``.

Lazy averaging: a model predicts with the averaged mean ``W - U / count``. The rule is applied to
the averaged means (what each copy would predict with) and, with the same weights, to the raw
means (the online state that further ``learn_one`` calls continue from). The combined ``count_`` is
the start's count plus every example the copies saw, and ``U = count * (raw - averaged)``, so
``averaged()`` returns the combined averaged mean, later updates average on top of it as if it
were the mean of all earlier weight vectors, and ``save``/``load`` round-trip it unchanged.

One shot, not iterative parameter mixing (McDonald et al. 2010: combine after every epoch and
restart every shard from the combination), measured in one process (``bench/shards.py --ipm``):
with ``product`` it gives np 0.9471 against 0.9467 once, ned 0.8046 against 0.8075 (``kl``: np
0.9471 against 0.9447, ned 0.7887 against 0.7914), and each round trip (arrays both ways and a
combination) costs more than a shard's epoch.

Feature ids must agree across shards. Feature extraction is the costliest step of a fit, so it
runs in the workers too: each encodes its shard under a private index, the parent merges the
indexes (summing the counts for ``min_count`` pruning, exactly as a single ``fit`` would prune),
and each worker maps its ids into the merged index before training, so all weight rows align.
Word clusters (the ``clusters`` parameter) are learned once in the parent from all the text and
sent to the workers; document features (``documents``) see the sentences of a document that fell
into the same shard (each shard keeps the corpus order).
Workers are joblib's loky processes on one machine (``workers`` of them, kept for later fits; each
loads the compiled kernels once, ``_shard_server``) or the workers of a Dask cluster when
``cluster`` names its scheduler; ``workers=1`` trains the shards one after another in this
process. All three give the same model for the same seed. loky starts clean interpreters (never
``fork``: training may be started from a thread, the live service's consolidation, and numba's
OpenMP layer is not fork-safe) that do not run the parent's ``__main__`` again (Streamlit runs
each page as ``__main__``). The start model reaches the workers as ``to_bytes``; a trained copy
comes back as plain arrays (means, variances, counts: never a pickled model), since compressing
it with ``to_bytes`` costs about as much time as the training saves.
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from functools import partial
from typing import Any

import loky
import numpy as np

from cwal.features import Encoded, FeatureIndex
from cwal.features.clusters import WordClusters
from cwal.io.sentence import Sentence
from cwal.learners.base import Progress, SequenceLearner
from cwal.measures import chunk_f1

RULES = ("product", "kl", "average")


# ----- combination ------------------------------------------------------------------------------
def _state(model: SequenceLearner) -> dict[str, Any]:
    """What combining needs of a model, as plain arrays: averaged means, raw means, variances
    (``W`` rows cut to the index size) and the example counts."""
    F = model.n_features_
    model._avg = None  # the index may have grown since the last average
    avg_w, avg_a = model.averaged()
    return {
        "avg": (avg_w, avg_a),
        "mean": (model.W_[:F], model.A_),
        "var": (model.SW_[:F], model.SA_),
        "count": model.count_,
        "n_updates": model.n_updates_,
        "covariance": model.has_covariance,
    }


def _prior(start: SequenceLearner | None, like: SequenceLearner) -> dict[str, Any]:
    """The state the copies started from: ``start`` with fresh rows (mean 0, ``init_variance``)
    for the features it lacks of ``like``'s index, or wholly fresh without a start (or with one
    that has no labels yet)."""
    F, L, s0 = like.n_features_, len(like.labels_), like.params["init_variance"]
    W, A = np.zeros((F, L)), np.zeros((L + 2, L))
    var = (np.full((F, L), s0), np.full((L + 2, L), s0))
    out = {"avg": (W, A), "mean": (W.copy(), A.copy()), "var": var, "count": 0.0, "n_updates": 0}
    if start is not None and start.labels_:
        if start.labels_ != like.labels_ or start.n_features_ > F:
            raise ValueError("the start model must have the copies' labels and index (a prefix)")
        got = _state(start)
        for key in ("avg", "mean", "var"):
            out[key][0][: start.n_features_] = got[key][0]
            out[key][1][:] = got[key][1]
        out["count"], out["n_updates"] = got["count"], got["n_updates"]
    return out


def combine(
    models: Sequence[SequenceLearner], rule: str = "product", start: SequenceLearner | None = None
) -> SequenceLearner:
    """One model from ``models`` trained over one feature index and label set (module doc).

    ``start`` is the model all the copies were trained from (None: a fresh one): the ``product``
    rule divides it out, and its examples count once, not once per copy. The inputs are left
    unchanged.
    """
    if not models:
        raise ValueError("combine needs at least one model")
    first = models[0]
    for m in models:
        if (m.name, m.labels_, m.n_features_) != (first.name, first.labels_, first.n_features_):
            raise ValueError("combine needs models of one learner over one index and label set")
    out = copy.deepcopy(first)
    _combine_into(out, [_state(m) for m in models], rule, _prior(start, first))
    return out


def _combine_into(
    target: SequenceLearner, states: Sequence[dict[str, Any]], rule: str, prior: dict[str, Any]
) -> None:
    """Write the combination of the copies' ``states`` (started from ``prior``) into ``target``."""
    if rule not in RULES:
        raise ValueError(f"combine rule must be one of {RULES}, not {rule!r}")
    F, L, k = target.n_features_, len(target.labels_), len(states) - 1
    if not all(s["covariance"] for s in states):
        rule = "average"
    count = prior["count"] + sum(s["count"] - prior["count"] for s in states)
    target._grow(F)
    for part, (mean, var, lazy) in enumerate((("W_", "SW_", "UW_"), ("A_", "SA_", "UA_"))):
        rows = F if part == 0 else L + 2
        avg, raw, s2 = ([s[key][part] for s in states] for key in ("avg", "mean", "var"))
        if any(a.shape != (rows, L) for a in (*avg, *raw, *s2)):
            raise ValueError("combine needs copies over one feature index and label set")
        if rule == "average":
            new_avg, new_raw, new_var = np.mean(avg, 0), np.mean(raw, 0), np.mean(s2, 0)
        else:
            prec = [1.0 / v for v in s2]
            total = np.sum(prec, axis=0)
            sum_avg = np.sum([p * a for p, a in zip(prec, avg, strict=True)], axis=0)
            sum_raw = np.sum([p * w for p, w in zip(prec, raw, strict=True)], axis=0)
            if rule == "product":  # divide the start out P - 1 times
                p0 = k / prior["var"][part]
                total = np.maximum(total - p0, np.max(prec, axis=0))  # = total - p0 if p_c >= p_0
                sum_avg -= p0 * prior["avg"][part]
                sum_raw -= p0 * prior["mean"][part]
            new_avg, new_raw, new_var = sum_avg / total, sum_raw / total, 1.0 / total
        if count <= 0:  # nothing learned: the mean is its own average
            new_raw = new_avg
        getattr(target, mean)[:rows] = new_raw
        getattr(target, var)[:rows] = new_var
        getattr(target, lazy)[:rows] = count * (new_raw - new_avg)
    target.count_ = count
    n0 = prior["n_updates"]
    target.n_updates_ = n0 + sum(s["n_updates"] - n0 for s in states)
    target._avg = None


# ----- workers (module level: the pool imports them by name) ------------------------------------
def _encode_part(
    template: str,
    sentences: list[Sentence],
    clusters: WordClusters | None = None,
    documents: bool = False,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Encode one shard under a private, growing index: (strings, counts, ids, tok, sent)."""
    index = FeatureIndex(template, clusters=clusters, documents=documents)
    enc = index.encode(sentences, grow=True)
    counts = np.bincount(enc.feat_ids, minlength=len(index))
    return index.strings, counts, enc.feat_ids, enc.tok_offsets, enc.sent_offsets


def _train_part(
    state: bytes,
    added: list[str],
    frozen: bool,
    encoded: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    gold: np.ndarray,
    epochs: int,
    seed: int,
    part: int,
) -> tuple[dict[str, Any], list[int], list[float]]:
    """Train one copy (``from_bytes(state)`` plus the merged index) on its shard, ``encoded`` as
    ``_encode_part`` returned it plus the map to merged ids; returns the copy's ``_state`` and the
    mistakes and seconds of each epoch. The state goes back as plain arrays, not ``to_bytes``:
    compressing the model costs about as much as the training saves."""
    model = SequenceLearner.from_bytes(state, f"shard {part}")
    if added:
        index = model.features_
        model.features_ = FeatureIndex(
            index.template, [*index.strings, *added], index.clusters, index.documents
        )
    model.features_.frozen = frozen
    model._grow(model.n_features_, exact=True)
    enc = Encoded(*_remap(*encoded))
    rng = np.random.default_rng([seed, part])
    mistakes, seconds = [], []
    for _ in range(epochs):
        t0 = time.perf_counter()
        mistakes.append(model._run(rng.permutation(enc.n_sentences).astype(np.int64), enc, gold))
        seconds.append(time.perf_counter() - t0)
    return _state(model), mistakes, seconds


def _warm() -> None:
    """A loky worker's initializer: load the compiled training kernels once (``_shard_server``)."""
    import cwal.learners._shard_server  # noqa: F401


_POOLS: dict[int, Any] = {}
_POOLS_LOCK = threading.Lock()


def _pool(workers: int) -> Any:
    """The loky executor of ``workers`` processes, made on first use and kept for later fits
    (its idle workers exit after 5 minutes and are started again when needed)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(workers)
        if pool is None or pool._flags.broken or pool._flags.shutdown:
            pool = loky.ProcessPoolExecutor(max_workers=workers, timeout=300, initializer=_warm)
            _POOLS[workers] = pool
        return pool


def _now(fn: Callable[..., Any], *args: Any) -> Future:
    """Run ``fn(*args)`` here and now, as a finished future (the serial engine)."""
    done: Future = Future()
    try:
        done.set_result(fn(*args))
    except Exception as exc:  # noqa: BLE001 - re-raised by .result(), as a pool's would be
        done.set_exception(exc)
    return done


@contextmanager
def _engine(workers: int, cluster: str | None) -> Iterator[Callable[..., Any]]:
    """``submit(fn, *args)`` returning a future: on the Dask cluster at ``cluster``, on a loky
    pool of ``workers`` processes, or (``workers`` <= 1) in this process."""
    if cluster is not None:
        try:
            from dask.distributed import Client
        except ImportError:
            raise RuntimeError(
                "a cluster needs Dask: python3 -m pip install 'dask[distributed]'"
            ) from None
        with Client(cluster) as client:
            yield partial(client.submit, pure=False)
    elif workers <= 1:
        yield _now
    else:
        yield _pool(workers).submit


# ----- the merged feature index -----------------------------------------------------------------
def _merge_index(
    index: FeatureIndex, parts: Sequence[tuple[list[str], np.ndarray]], min_count: int
) -> tuple[FeatureIndex, list[str], list[np.ndarray]]:
    """Merge the shards' private indexes into ``index`` as one ``fit`` over all of them would:
    a frozen index admits nothing, a fresh one keeps the strings seen ``min_count`` times in all,
    a growing one admits every new string. Returns the merged index, the strings it appended and,
    per shard, the map from private to merged ids (-1: dropped)."""
    old = index.strings
    sizes = np.cumsum([len(old), *(len(strings) for strings, _ in parts)])
    seen: dict[str, int] = {}  # first appearance order: old strings keep their ids
    add = seen.setdefault
    every = itertools.chain(old, *(strings for strings, _ in parts))
    codes = np.fromiter((add(s, len(seen)) for s in every), np.int64, int(sizes[-1]))
    maps = [codes[a:b] for a, b in itertools.pairwise(sizes)]
    strings, frozen = list(seen), index.frozen
    if frozen:
        maps = [np.where(m < len(old), m, -1) for m in maps]
        strings = old
    elif not old and min_count > 1:
        total = np.zeros(len(strings), dtype=np.int64)
        for m, (_, counts) in zip(maps, parts, strict=True):
            total += np.bincount(m, weights=counts, minlength=len(strings)).astype(np.int64)
        keep = total >= min_count
        new_id = np.where(keep, np.cumsum(keep) - 1, -1)
        maps = [new_id[m] for m in maps]
        strings = [s for s, k in zip(strings, keep.tolist(), strict=True) if k]
        frozen = True
    merged = FeatureIndex(index.template, strings, index.clusters, index.documents)
    merged.frozen = frozen
    return merged, strings[len(old) :], maps


def _remap(
    ids: np.ndarray, tok: np.ndarray, sent: np.ndarray, m: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A shard's encoded arrays under the merged index (dropped features removed)."""
    new = m[ids]
    keep = new >= 0
    if keep.all():
        return new.astype(np.int32), tok, sent
    kept_before = np.concatenate([[0], np.cumsum(keep)]).astype(np.int64)
    return new[keep].astype(np.int32), kept_before[tok], sent


# ----- training ---------------------------------------------------------------------------------
def fit_shards(
    model: SequenceLearner,
    sentences: Iterable[Sentence],
    epochs: int = 10,
    seed: int = 0,
    shards: int = 2,
    rule: str = "product",
    dev: Sequence[Sentence] | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    cluster: str | None = None,
) -> SequenceLearner:
    """Train ``model`` in place on ``shards`` disjoint seeded shards in parallel, then combine.

    Same seed, same model. ``shards = 1`` (or fewer than two labeled sentences) is a plain
    ``fit``. ``progress(epoch, epochs, stats)`` is called for every epoch after the combination:
    ``mistakes`` summed over the shards, ``seconds`` of the slowest shard and, on the last epoch,
    ``dev_f1`` of the combined model when ``dev`` is given. Like any multiprocessing code, call
    it from an importable module or under ``if __name__ == "__main__":``. ``workers``: loky
    processes (default one per shard; 1 trains the shards in turn in this process); ``cluster``:
    a Dask scheduler address to train them on instead. The model does not depend on either.
    """
    if rule not in RULES:
        raise ValueError(f"combine rule must be one of {RULES}, not {rule!r}")
    if int(shards) < 1:
        raise ValueError(f"shards must be at least 1, not {shards}")
    if type(model).fit is not SequenceLearner.fit:
        raise ValueError(f"{model.name} does not train online epochs: it cannot train on shards")
    data = [s for s in sentences if s.tags is not None]
    P = min(int(shards), len(data))
    if P <= 1:
        return model.fit(data, epochs, seed, dev=dev, progress=progress)
    order = np.random.default_rng(seed).permutation(len(data))
    split = [np.sort(p) for p in np.array_split(order, P)]
    fresh = not model.features_.frozen and not model.n_features_
    model._learn_clusters(data, ())  # a fresh model with ``clusters`` on: from all the text
    index = model.features_
    with _engine(P if workers is None else int(workers), cluster) as submit:
        encoding = [
            submit(_encode_part, index.template,
                   [Sentence(data[i].tokens, None, data[i].columns, data[i].meta) for i in p],
                   index.clusters, index.documents)
            for p in split
        ]  # fmt: skip
        internal = [model.codec_.encode(s.tags) for s in data]  # while the workers encode
        model._add_labels(t for tags in internal for t in tags)
        state = model.to_bytes()  # before the merged index: small for a fresh model
        parts = [f.result() for f in encoding]
        merged, added, maps = _merge_index(
            model.features_, [p[:2] for p in parts], model.params["min_count"]
        )
        jobs = []
        for i, (p, m) in enumerate(zip(parts, maps, strict=True)):
            gold = model._tag_ids([t for j in split[i] for t in internal[j]])
            args = (state, added, merged.frozen, (*p[2:], m), gold, epochs, seed, i)
            jobs.append(submit(_train_part, *args))
        del parts, encoding
        results = [j.result() for j in jobs]
    model.features_ = merged
    model._grow(model.n_features_, exact=fresh)
    _combine_into(model, [r[0] for r in results], rule, _state(model))  # the start, fresh rows
    if progress is not None:
        held = [s for s in dev if s.tags is not None] if dev is not None else []
        for e in range(epochs):
            stats: dict[str, Any] = {
                "mistakes": sum(r[1][e] for r in results),
                "seconds": max(r[2][e] for r in results),
            }
            if dev is not None and e == epochs - 1:
                stats["dev_f1"] = chunk_f1([s.tags for s in held], model.predict(held)).f1
            progress(e + 1, epochs, stats)
    return model
