"""The learner's internal tag encoding: the user's tags as given (``raw``) or re-encoded as BIOES.

BIOES gives a first-order model separate states for single-token, first, inside and last chunk
tokens (a dev-tuned gain for chunking, see bench/accuracy.py). Predictions are converted back to
the scheme the training tags were written in: the first of ``PREFERENCE`` under which every
training sentence seen so far was valid (IOB2 when none was). Tags that are not chunk tags
(``O`` or ``X-TYPE``) pass through unchanged, so any tag set still trains.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from cwal.io import schemes

ENCODINGS = ("raw", "bioes")
PREFERENCE = ("IOB2", "IOB1", "BIOES", "IOE2", "IOE1", "BILOU")
INTERNAL = "BIOES"


@lru_cache(maxsize=1 << 16)
def _window(prev: str, tag: str, nxt: str) -> tuple[str, frozenset[str]]:
    """The internal label of ``tag`` between ``prev`` and ``nxt`` (``O`` past the ends) and the
    schemes in which ``tag`` is written validly there.

    Both are local: in lenient decoding (``schemes.lenient_spans``) whether a token opens or
    closes its chunk depends on its neighbours only, and so does its tag in any scheme; hence
    a sentence's ``repair`` and ``is_valid`` hold token by token, and each window is worked out
    once (tests/test_learners.py checks the codec against the whole-sentence functions)."""
    window = [prev, tag, nxt]
    chunks = schemes.lenient_spans(window)
    ok = frozenset(s for s in PREFERENCE if schemes.from_spans(chunks, 3, s)[1] == tag)
    return schemes.from_spans(chunks, 3, INTERNAL)[1], ok


def _chunk_tags(tags: Sequence[str]) -> bool:
    return all(schemes.split_tag(t) is not None for t in tags)


class TagCodec:
    """Maps user tags to internal labels (``encode``) and predicted labels back (``decode``)."""

    def __init__(self, encoding: str = "raw", candidates: Sequence[str] = PREFERENCE) -> None:
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {ENCODINGS}, not {encoding!r}")
        self.encoding = encoding
        self.candidates = [s for s in PREFERENCE if s in candidates]

    @property
    def output_scheme(self) -> str:
        """The scheme predictions are written in."""
        return self.candidates[0] if self.candidates else PREFERENCE[0]

    def encode(self, tags: Sequence[str]) -> list[str]:
        """Internal labels of one training sentence (and note which schemes it is valid in)."""
        if self.encoding == "raw" or not _chunk_tags(tags):
            return list(tags)
        padded = [schemes.OUTSIDE, *tags, schemes.OUTSIDE]
        found = [_window(*w) for w in zip(padded, padded[1:], padded[2:], strict=False)]
        valid = set(PREFERENCE).intersection(*(ok for _, ok in found))
        self.candidates = [s for s in self.candidates if s in valid]
        return [label for label, _ in found]

    def decode(self, labels: Sequence[str]) -> list[str]:
        """User tags of one predicted sentence."""
        if self.encoding == "raw" or not _chunk_tags(labels):
            return list(labels)
        return schemes.convert(labels, INTERNAL, self.output_scheme)
