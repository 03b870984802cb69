"""Shared fixtures: where the research corpora live, and a skip when they are absent."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import data_dir


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder, or a skip with a clear reason."""
    path = data_dir()
    if not path.is_dir():
        pytest.skip(f"shared corpora not found at {path} (set CWAL_DATA_DIR)")
    return path
