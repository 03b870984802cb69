"""Imported once by every loky worker of ``cwal.learners.shards`` (its initializer; nothing else
imports it): one tiny fit here loads the compiled training kernels, so the worker's first shard
does not spend about a second on it."""

from __future__ import annotations

from cwal.io.sentence import Sentence
from cwal.learners import make

make("cw").fit([Sentence(["a", "b"], ["B-NP", "O"], {"pos": ["DT", "VB"]})], epochs=1)
