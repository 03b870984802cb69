"""Imported by the forkserver that starts the workers of ``cwal.learners.shards`` (nothing else
imports it): one tiny fit here loads the compiled training kernels into the server, so every
worker forked from it starts with them loaded instead of spending about a second on it."""

from __future__ import annotations

from cwal.io.sentence import Sentence
from cwal.learners import make

make("cw").fit([Sentence(["a", "b"], ["B-NP", "O"], {"pos": ["DT", "VB"]})], epochs=1)
