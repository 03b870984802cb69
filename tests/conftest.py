"""Shared fixtures: where the research corpora live, and a skip when they are absent; every test
starts and ends with pytest's own ``__main__``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from shared_data import data_dir

_MAIN = sys.modules.get("__main__")  # pytest's own, as the run started


@pytest.fixture(autouse=True)
def _own_main() -> Iterator[None]:
    """AppTest runs a page as ``__main__`` and leaves it there; a process a later test spawns
    (a Dask LocalCluster's workers, through multiprocessing's spawn) would run that page again.
    The app itself never spawns from a page's ``__main__`` (its simulations start a fresh process)."""
    if _MAIN is not None:
        sys.modules["__main__"] = _MAIN
    yield
    if _MAIN is not None:
        sys.modules["__main__"] = _MAIN


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder, or a skip with a clear reason."""
    path = data_dir()
    if not path.is_dir():
        pytest.skip(f"shared corpora not found at {path} (set CWAL_DATA_DIR)")
    return path


@pytest.fixture
def float64_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Learners made in the test keep every state array in float64: for the tests that check an
    update rule against the same arithmetic done by hand in float64 (the default float32
    covariance and lazy-average sums are compared with float64 ones in tests/test_learners.py)."""
    import numpy as np

    from cwal.learners.base import SequenceLearner

    wide = dict.fromkeys(SequenceLearner.DTYPES, np.float64)
    monkeypatch.setattr(SequenceLearner, "DTYPES", wide)
