"""The one in-memory shape of a labeled or unlabeled sentence."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Sentence:
    """A tokenized sentence.

    ``tags`` is None for unlabeled text. ``columns`` holds other per-token columns by role
    (``pos``, ``chunk``, ...), each as long as ``tokens``. ``meta`` keeps extra JSONL keys.
    ``line`` is the 1-based line of the file where the sentence starts (0 when not from a file).
    """

    tokens: list[str]
    tags: list[str] | None = None
    columns: dict[str, list[str]] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    line: int = 0

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def pos(self) -> list[str] | None:
        return self.columns.get("pos")
