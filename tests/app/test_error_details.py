"""An unexpected error never shows its traceback (with server file paths) in the browser."""

from __future__ import annotations

import subprocess
import sys

from tests.app.conftest import REPO


def test_the_app_config_hides_error_details_from_the_browser() -> None:
    # Streamlit's own reading of the repository's .streamlit/config.toml, as `streamlit run` sees it.
    shown = subprocess.run(
        [sys.executable, "-m", "streamlit", "config", "show"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [line.strip() for line in shown.splitlines() if line.startswith("showErrorDetails")]
    assert lines == ['showErrorDetails = "none"']
