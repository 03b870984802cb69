"""Corpus input and output: CoNLL columns, JSON Lines and plain text, plus tag schemes."""

from cwal.io import schemes
from cwal.io.conll import read_conll, write_conll
from cwal.io.corpus import detect_format, read_corpus, read_corpus_bytes
from cwal.io.jsonl import read_jsonl, write_jsonl
from cwal.io.sentence import Sentence
from cwal.io.text import read_text, write_text

__all__ = [
    "Sentence",
    "detect_format",
    "read_conll",
    "read_corpus",
    "read_corpus_bytes",
    "read_jsonl",
    "read_text",
    "schemes",
    "write_conll",
    "write_jsonl",
    "write_text",
]
