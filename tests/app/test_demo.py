"""The built-in demo corpus: reproducible from its script, well-formed, the right shape."""

from __future__ import annotations

import importlib.util

from cwal.io import read_jsonl, schemes
from tests.app.conftest import REPO


def _generator():
    spec = importlib.util.spec_from_file_location("make_demo", REPO / "demo" / "make_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_files_are_the_generators_output() -> None:
    assert _generator().main(["--check"]) == 0


def test_the_demo_splits() -> None:
    pool = list(read_jsonl(REPO / "demo" / "ner_pool.jsonl"))
    gold = list(read_jsonl(REPO / "demo" / "ner_eval.jsonl", scheme="IOB2"))
    assert (len(pool), len(gold)) == (320, 100)
    assert all(s.tags is None for s in pool)
    assert all(schemes.is_valid(s.tags, "IOB2") for s in gold)
    types = {t for s in gold for t in schemes.tag_types(s.tags)}
    assert types == {"PER", "ORG", "LOC", "MISC"}
    assert not {tuple(s.tokens) for s in pool} & {tuple(s.tokens) for s in gold}
