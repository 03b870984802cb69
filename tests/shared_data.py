"""Where the shared research corpora live, and a skip with a reason when they are absent.

Import as ``from shared_data import corpus_path`` (a plain module: ``conftest`` is ambiguous once
several test folders have their own).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The shared corpora folder: ``CWAL_DATA_DIR`` or ``../shared/data`` beside the repository."""
    return Path(os.environ.get("CWAL_DATA_DIR", REPO.parent / "shared" / "data"))


def corpus_path(relative: str) -> Path:
    """Path of one shared corpus file; skips the calling test with a reason when it is absent."""
    path = data_dir() / relative
    if not path.exists():
        pytest.skip(
            f"corpus {relative} not found under {data_dir()} (set CWAL_DATA_DIR to the shared data)"
        )
    return path
