"""The learner's internal tag encoding: the user's tags as given (``raw``) or re-encoded as BIOES.

BIOES gives a first-order model separate states for single-token, first, inside and last chunk
tokens (a dev-tuned gain for chunking, see bench/accuracy.py). Predictions are converted back to
the scheme the training tags were written in: the first of ``PREFERENCE`` under which every
training sentence seen so far was valid (IOB2 when none was). Tags that are not chunk tags
(``O`` or ``X-TYPE``) pass through unchanged, so any tag set still trains.
"""

from __future__ import annotations

from collections.abc import Sequence

from cwal.io import schemes

ENCODINGS = ("raw", "bioes")
PREFERENCE = ("IOB2", "IOB1", "BIOES", "IOE2", "IOE1", "BILOU")
INTERNAL = "BIOES"


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
        chunks, n, same = schemes.lenient_spans(tags), len(tags), list(tags)
        # valid under s = equal to the canonical encoding of its own chunks (schemes.check)
        self.candidates = [s for s in self.candidates if schemes.from_spans(chunks, n, s) == same]
        return schemes.from_spans(chunks, n, INTERNAL)

    def decode(self, labels: Sequence[str]) -> list[str]:
        """User tags of one predicted sentence."""
        if self.encoding == "raw" or not _chunk_tags(labels):
            return list(labels)
        return schemes.convert(labels, INTERNAL, self.output_scheme)
