"""The Compare strategies page in a real headless Chromium: a finished two-seed comparison shows
its learning curves with seed bands, the comparison table and the words-relative-to-Random table
with bootstrap intervals, without an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwal.io import write_conll
from cwal.simulate import Ref, SimConfig
from db import open_database
from db import simulations as sims
from db.service import install_demo
from tests.app import harness
from tests.app.conftest import PASSWORD
from tests.test_simulate import sentences

CHART = '[data-testid="stVegaLiteChart"]'
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


@pytest.mark.browser
@pytest.mark.skipif(not Path(harness.CHROMIUM).exists(), reason="Debian chromium not installed")
def test_compare_strategies_in_the_browser(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cwal.sqlite3'}"
    harness.seed(url, [("lena", PASSWORD, "lead")])
    engine = open_database(url)
    project = install_demo(engine)
    pool, held = tmp_path / "pool.conll", tmp_path / "eval.conll"
    write_conll(sentences(150, 11), pool, ["word", "pos", "tag"])
    write_conll(sentences(40, 12), held, ["word", "pos", "tag"])
    data = Ref("cwal.simulate.data:load_files", {"pool": str(pool), "eval": str(held)})
    config = SimConfig(strategies=("errors-per-word", "random"), seeds=(0, 1), initial=20,
                       batch=5, candidates=40, eval_every=30, budget=80, learner="arow")  # fmt: skip
    key = sims.create_experiment(engine, "per-word vs random", config, data, project_id=project)
    sims.run(url, key, workers=1)
    ARTIFACTS.mkdir(exist_ok=True)
    with (
        harness.app_server(url, tmp_path, script="app.py") as base,
        harness.chromium((1400, 1000)) as page,
    ):
        harness.sign_in(page, base, "lena", PASSWORD)
        page.get_by_role("link", name="Compare strategies").click()
        page.get_by_role("heading", name="Compare strategies").wait_for(timeout=120_000)
        page.locator(f"{CHART} canvas, {CHART} svg.marks").first.wait_for(timeout=120_000)
        page.get_by_test_id("stDataFrame").nth(1).wait_for(timeout=120_000)
        assert page.locator(CHART).count() == 1
        assert page.get_by_text("bands: seed range").count() == 1
        assert page.get_by_text("Pick ").count() >= 1
        assert page.get_by_test_id("stException").count() == 0
        assert page.get_by_test_id("stAlertContentError").count() == 0
        page.screenshot(path=str(ARTIFACTS / "compare_strategies.png"), full_page=True)
    engine.dispose()
