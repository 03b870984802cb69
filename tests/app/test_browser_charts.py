"""Readable charts: every lead page's charts at 1280x800 and 1920x1080 in real Chromium, reached
by the sidebar, on a project with enough labels to draw them all. For every text of every chart
(titles, axis titles and labels, legends, cell counts) the test checks that it is drawn whole:
inside the chart's visible box, not faded out by Vega's label-overlap removal and not cut short
with an ellipsis. Screenshots land in tests/app/artifacts/charts-<page>-<width>.png."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from cwal.io import write_conll
from cwal.simulate import Ref, SimConfig
from db import open_database
from db import repository as repo
from db import simulations as sims
from tests.app import harness
from tests.app.conftest import PASSWORD
from tests.app.test_lead_pages import build_big
from tests.test_simulate import sentences

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
VIEWPORTS = ((1280, 800), (1920, 1080))
PAGES = {  # sidebar link: charts the page draws on this project
    "Dashboard": 5,
    "Error analysis": 4,
    "Compare strategies": 1,
    "Agreement": 1,
    "My progress": 1,
}

DRAWN = """
([title, n]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.dataset.testScriptState !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  const main = document.querySelector('[data-testid="stMain"]');
  const h1 = main && main.querySelector('h1');
  if (!h1 || !h1.textContent.includes(title)) return false;
  if (main.querySelector('[data-stale="true"]')) return false;
  const bad = main.querySelector('[data-testid="stException"], [data-testid="stAlertContentError"]');
  if (bad) return { error: bad.textContent.slice(0, 500) };
  const charts = [...main.querySelectorAll('[data-testid="stVegaLiteChart"]')];
  if (charts.length < n) return false;
  if (!charts.every((c) => c.querySelector('svg.marks text'))) return false;
  return { charts: charts.length };
}
"""

# Every text of every chart's SVG: drawn whole inside the visible part of the chart?
CLIPPED = """
() => {
  const bad = [];
  const main = document.querySelector('[data-testid="stMain"]');
  main.querySelectorAll('[data-testid="stVegaLiteChart"]').forEach((chart, k) => {
    const svg = chart.querySelector('svg.marks');
    if (!svg) { bad.push({ chart: k, text: '', why: 'drawn on a canvas, not SVG' }); return; }
    const a = chart.getBoundingClientRect(), b = svg.getBoundingClientRect();
    const box = { left: Math.max(a.left, b.left), right: Math.min(a.right, b.right),
                  top: Math.max(a.top, b.top), bottom: Math.min(a.bottom, b.bottom) };
    for (const t of svg.querySelectorAll('text')) {
      const text = t.textContent;
      if (!text.trim()) continue;
      const style = getComputedStyle(t);
      const op = parseFloat(t.getAttribute('opacity') ?? style.opacity ?? '1');
      const fill = parseFloat(t.getAttribute('fill-opacity') ?? '1');
      if (op === 0 || fill === 0 || style.visibility === 'hidden') {
        bad.push({ chart: k, text, why: 'hidden (label overlap)' });
        continue;
      }
      if (text.endsWith('…')) bad.push({ chart: k, text, why: 'ellipsis' });
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 ||
          r.bottom > box.bottom + 1)
        bad.push({ chart: k, text, why: 'outside the chart',
                   at: [r.left, r.right, r.top, r.bottom].map(Math.round),
                   box: [box.left, box.right, box.top, box.bottom].map(Math.round) });
    }
  });
  return bad;
}
"""


@pytest.fixture(scope="module")
def lead_store(tmp_path_factory) -> SimpleNamespace:
    """A project with 300 labels, a model, served predictions, two annotators' overlap versions,
    timed labels and a finished strategy comparison."""
    tmp = tmp_path_factory.mktemp("charts")
    url = f"sqlite:///{tmp / 'cwal.sqlite3'}"
    ids = harness.seed(url, [("lena", PASSWORD, "lead"), ("arno", PASSWORD, "annotator"),
                             ("bob", PASSWORD, "annotator")])  # fmt: skip
    engine = open_database(url)
    big = build_big(engine, ids["lena"], 300, 150, 100)
    for name in ("arno", "bob"):
        repo.set_member(engine, big.project, ids[name], "annotator")
    unlabeled = repo.list_sentences(engine, big.project, split="pool")[-40:]
    for i, s in enumerate(unlabeled[:10]):  # timed labels for the pace chart
        name = ("arno", "bob")[i % 2]
        repo.submit_annotation(engine, s.id, ids[name], ["O"] * len(s.tokens), seconds=2.0 + i)
    repo.set_overlap(engine, big.project, 1.0, 2)
    unlabeled = unlabeled[10:]
    for i, s in enumerate(unlabeled):
        n = len(s.tokens)
        first = ["B-PER", "I-PER"] + ["O"] * (n - 2)
        second = first if i % 3 else ["B-ORG"] + ["O"] * (n - 1)
        repo.submit_annotation(engine, s.id, ids["arno"], first, seconds=3.0 + i % 5)
        repo.submit_annotation(engine, s.id, ids["bob"], second, seconds=4.0 + i % 7)
    pool, held = tmp / "pool.conll", tmp / "eval.conll"
    write_conll(sentences(120, 11), pool, ["word", "pos", "tag"])
    write_conll(sentences(40, 12), held, ["word", "pos", "tag"])
    data = Ref("cwal.simulate.data:load_files", {"pool": str(pool), "eval": str(held)})
    config = SimConfig(strategies=("errors-per-word+diverse", "random"), seeds=(0, 1), initial=20,
                       batch=5, candidates=40, eval_every=20, budget=60, learner="arow")  # fmt: skip
    key = sims.create_experiment(engine, "readable", config, data, project_id=big.project)
    sims.run(url, key, workers=1)
    engine.dispose()
    return SimpleNamespace(url=url, tmp=tmp)


@pytest.mark.browser
@pytest.mark.skipif(not Path(harness.CHROMIUM).exists(), reason="Debian chromium not installed")
@pytest.mark.parametrize("viewport", VIEWPORTS, ids=lambda v: f"{v[0]}x{v[1]}")
def test_every_chart_text_is_whole(lead_store, viewport) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    problems = {}
    with (
        harness.app_server(lead_store.url, lead_store.tmp) as base,
        harness.chromium(viewport) as page,
    ):
        harness.sign_in(page, base, "lena", PASSWORD)
        page.get_by_role("link", name="Dashboard", exact=True).wait_for(timeout=120_000)
        for title, n in PAGES.items():
            page.get_by_role("link", name=title, exact=True).click()
            got = page.wait_for_function(DRAWN, arg=[title, n], polling=200, timeout=240_000)
            assert "error" not in got.json_value(), got.json_value()
            page.wait_for_timeout(1000)  # vega-embed's last layout pass
            slug = title.lower().replace(" ", "-")
            page.screenshot(path=str(ARTIFACTS / f"charts-{slug}-{viewport[0]}.png"),
                            full_page=True)  # fmt: skip
            bad = page.evaluate(CLIPPED)
            if bad:
                problems[title] = bad
    assert not problems, problems
