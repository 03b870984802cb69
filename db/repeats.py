"""Sentences an import repeats: the same tokens as an earlier sentence of the same file."""

from __future__ import annotations

import hashlib

from cwal.io import Sentence

SHOWN_LINES = 5  # the first lines a report names


class Repeats:
    """Counts the sentences whose tokens came earlier in the file and keeps their first lines
    (a sentence's ``line``: where it starts); 16 bytes per distinct sentence."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()
        self.count = 0
        self.lines: list[int] = []

    def repeated(self, sentence: Sentence) -> bool:
        """True when ``sentence`` has the tokens of an earlier one (and records it)."""
        key = hashlib.blake2b("\x1f".join(sentence.tokens).encode(), digest_size=16).digest()
        if key not in self._seen:
            self._seen.add(key)
            return False
        self.count += 1
        if len(self.lines) < SHOWN_LINES and sentence.line is not None:
            self.lines.append(int(sentence.line))
        return True
