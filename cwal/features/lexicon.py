"""A lexicon of the labeled spans of the training data, used as features (a gazetteer learned
from the training labels; the non-local features of Ratinov & Roth 2009 and Krishnan & Manning
2006 rest on the same evidence: a string labeled as an entity once is usually one again).

``learn`` collects every labeled span of the training sentences (its tokens as written, up to
``MAX_LEN`` of them) with its type. A token covered by a lexicon entry of type ``T`` gets the
feature ``lx-T=P``, ``P`` its place in the longest such entry (``B`` first, ``I`` inside, ``E``
last, ``S`` a one-token entry).

On its own training data the lexicon would always match (every labeled span is in it) and the
learner would trust it blindly. So the training sentences are cut into ``FOLDS`` contiguous
parts, and a token of part ``f`` sees only entries labeled at least once outside part ``f`` (a
jackknife, as for stacking): the feature fires in training about as often, and as reliably, as
on new text, where the whole lexicon is used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from cwal.io import schemes
from cwal.io.sentence import Sentence

MAX_LEN = 6  # longest entry kept, in tokens
FOLDS = 10
_PLACES = ["B", "I", "E", "S"]

Slot = tuple[str, np.ndarray, list[str]]


def _places(length: int) -> list[int]:
    """The place codes of the tokens of an entry of ``length`` tokens (into ``_PLACES``)."""
    return [3] if length == 1 else [0, *([1] * (length - 2)), 2]


def _mark(codes: list[int], best: list[int], start: int, length: int, places: list[int]) -> None:
    """Give the tokens from ``start`` their place in an entry of ``length`` where no longer
    entry of the same type covers them."""
    for j, place in enumerate(places, start):
        if best[j] < length:
            best[j], codes[j] = length, place


class Lexicon:
    """Labeled token sequences -> the types they were labeled with (and, while the training
    data is encoded, in which folds)."""

    def __init__(self, entries: dict[tuple[str, ...], dict[str, int]], types: Sequence[str]):
        self.types = list(types)
        self.entries = entries  # entry -> {type: bit mask of the folds it was labeled in}
        self.firsts: dict[str, int] = {}  # first token -> the longest entry starting with it
        for e in entries:
            self.firsts[e[0]] = max(self.firsts.get(e[0], 0), len(e))
        self._folds: dict[int, int] = {}  # id(sentence) -> fold, for the training data only

    def __len__(self) -> int:
        return len(self.entries)

    @classmethod
    def learn(cls, sentences: Sequence[Sentence], folds: int = FOLDS) -> Lexicon | None:
        """The lexicon of the labeled spans of ``sentences`` (None when they have none); until
        ``slots`` has seen them once, tokens of ``sentences`` see only other folds' entries."""
        entries: dict[tuple[str, ...], dict[str, int]] = {}
        types: dict[str, None] = {}
        labeled = [s for s in sentences if s.tags is not None]
        fold_of: dict[int, int] = {}
        for i, s in enumerate(labeled):
            fold = i * folds // max(len(labeled), 1)
            fold_of[id(s)] = fold
            for typ, a, b in schemes.lenient_spans(s.tags):
                if b - a > MAX_LEN:
                    continue
                types.setdefault(typ)
                by_type = entries.setdefault(tuple(s.tokens[a:b]), {})
                by_type[typ] = by_type.get(typ, 0) | (1 << fold)
        if not entries:
            return None
        out = cls(entries, sorted(types))
        out._folds = fold_of
        return out

    def slots(self, sentences: Sequence[Sentence]) -> list[Slot]:
        """One slot per type: per token the code of its place (``_PLACES``) in the longest
        entry of that type covering it, else -1. Sentences ``learn`` saw get the jackknife view
        (the first time only: afterwards the whole lexicon is used for every sentence)."""
        folds, self._folds = self._folds, {}
        type_id = {t: j for j, t in enumerate(self.types)}
        n = sum(len(s.tokens) for s in sentences)
        codes = [[-1] * n for _ in self.types]
        best = [[0] * n for _ in self.types]  # length of the entry giving the code
        at = 0
        entries, firsts = self.entries, self.firsts
        for s in sentences:
            toks = s.tokens
            fold = folds.get(id(s))
            other = ~(1 << fold) if fold is not None else -1
            for i, w in enumerate(toks):
                longest = firsts.get(w)
                if longest is None:
                    continue
                for length in range(1, min(longest, len(toks) - i) + 1):
                    found = entries.get(tuple(toks[i : i + length]))
                    if found is None:
                        continue
                    places = _places(length)
                    for typ, mask in found.items():
                        if mask & other:
                            t = type_id[typ]
                            _mark(codes[t], best[t], at + i, length, places)
            at += len(toks)
        arrays = [np.asarray(c, dtype=np.int64) for c in codes]
        return [(f"lx-{t}", arrays[j], _PLACES) for j, t in enumerate(self.types)]

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The lexicon for a model file (JSON bytes: entries with their types; no folds)."""
        rows = [[list(e), sorted(by_type)] for e, by_type in self.entries.items()]
        data = json.dumps({"types": self.types, "entries": rows}).encode("utf-8")
        return {"json": np.frombuffer(data, dtype=np.uint8)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Lexicon:
        """Inverse of ``to_arrays`` (ValueError when it does not parse)."""
        try:
            data = json.loads(bytes(np.asarray(arrays["json"], dtype=np.uint8)).decode("utf-8"))
            entries = {
                tuple(str(w) for w in e): {str(t): 1 for t in types} for e, types in data["entries"]
            }
            return cls(entries, [str(t) for t in data["types"]])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"lexicon: {exc}") from None
