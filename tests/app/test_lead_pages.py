"""The lead pages (dashboard, error analysis, review) under AppTest on an empty project, one with
a few labels and one with thousands, and in a real browser: charts drawn, a review fix stored."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from seqeval.metrics import accuracy_score, f1_score
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from cwal import reports
from cwal.learners import make
from db import imports, open_database
from db import repository as repo
from db.repository import analysis
from db.service import DEMO_TYPES, tagset
from demo import make_demo
from tests.app import harness
from tests.app.conftest import PASSWORD, app, editor_data

PAGES = ["pages/dashboard.py", "pages/error_analysis.py", "pages/review.py"]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
BIG_NAME = "Invented news, thousands labeled"


def invented(n: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """``n`` invented demo-style sentences with their gold IOB2 tags."""
    rng = random.Random(seed)
    namer = make_demo.Namer(rng)
    return [make_demo.fill(rng.choice(make_demo.TEMPLATES), namer, rng) for _ in range(n)]


def demo_gold() -> dict[tuple[str, ...], list[str]]:
    """The gold tags of the demo pool, regenerated as ``make_demo.generate`` draws them."""
    rng = random.Random(make_demo.SEED)
    namer = make_demo.Namer(rng)
    found: dict[tuple[str, ...], list[str]] = {}
    while len(found) < make_demo.N_POOL:
        tokens, tags = make_demo.fill(rng.choice(make_demo.TEMPLATES), namer, rng)
        found.setdefault(tuple(tokens), tags)
    return found


def served(sentences, seed: int) -> list[tuple[int, list[str], list[float]]]:
    """A made-up but plausible model's served predictions: the gold tags with some flipped to
    O, confidences lower where flipped; ``(sentence id, tags, confidences)`` in order."""
    rng = np.random.default_rng(seed)
    out = []
    for sid, tags in sentences:
        wrong = rng.random(len(tags)) < 0.1
        pred = ["O" if w else t for t, w in zip(tags, wrong, strict=True)]
        conf = np.where(wrong, rng.uniform(0.2, 0.7, len(tags)), rng.uniform(0.8, 1.0, len(tags)))
        out.append((sid, pred, conf.tolist()))
    return out


def log_served(engine, sentences, seed: int) -> None:
    """Prediction-log rows as the live service writes them at submit (:func:`served`)."""
    records = [
        repo.PredictionRecord(sid, 1, p, c, "kd-pc") for sid, p, c in served(sentences, seed)
    ]
    repo.log_predictions(engine, records)


def label_few(engine, project: int, user: int) -> dict[int, list[str]]:
    """Eight gold labels of the demo pool, served predictions logged for them."""
    gold = demo_gold()
    labeled = {}
    for s in repo.get_sentences(engine, repo.sentence_ids(engine, project, "pool")[:8]):
        labeled[s.id] = gold[tuple(s.tokens)]
        repo.submit_annotation(engine, s.id, user, labeled[s.id], seconds=4.0)
    log_served(engine, labeled.items(), 1)
    return labeled


def build_big(
    engine, lead: int, n_labeled: int = 2000, n_unlabeled: int = 400, n_eval: int = 200
) -> SimpleNamespace:
    """A project with ``n_labeled`` labeled pool sentences (one planted error), ``n_unlabeled``
    more, ``n_eval`` gold for evaluation, a consolidated checkpoint and a served-prediction log."""
    types = list(DEMO_TYPES)
    settings = {"scheme": "IOB2", "tagset": tagset(types, "IOB2"), "feature_template": "ner"}
    project = repo.create_project(engine, BIG_NAME, settings)
    data = invented(n_labeled + n_unlabeled + n_eval, seed=7)
    planted = next(
        i
        for i, (_, t) in enumerate(data)
        if t.count("B-LOC") == 1 and set(t) <= {"O", "B-LOC", "I-LOC"} and len(t) > 6
    )
    tags = [list(t) for _, t in data]
    tags[planted] = ["O"] * len(tags[planted])  # the annotator missed a location

    def jsonl(rows) -> bytes:
        return "".join(json.dumps(r) + "\n" for r in rows).encode()

    labeled = [{"tokens": data[i][0], "tags": tags[i]} for i in range(n_labeled)]
    imports.import_bytes(engine, project, jsonl(labeled), "labeled.jsonl", split="pool",
                         tags_as="annotations", annotator_id=lead)  # fmt: skip
    rest = [{"tokens": tok} for tok, _ in data[n_labeled : n_labeled + n_unlabeled]]
    imports.import_bytes(engine, project, jsonl(rest), "pool.jsonl", split="pool")
    gold = [{"tokens": t, "tags": g} for t, g in data[n_labeled + n_unlabeled :]]
    imports.import_bytes(engine, project, jsonl(gold), "eval.jsonl", split="eval")
    current = repo.current_annotations(engine, project)
    model = make("arow", labels=settings["tagset"], template="ner")
    model.fit([e.to_sentence() for e in current], epochs=1, seed=0)
    last = repo.last_annotation_id(engine, project)
    info = {"version": len(current), "s_pc": 1e-4, "s_fixed": 1e-4, "n_train": len(current)}
    repo.save_checkpoint(engine, project, model.to_bytes(), last, info)
    log_served(engine, [(e.sentence_id, e.tags) for e in current], 2)
    planted_id = next(e.sentence_id for e in current if e.tokens == data[planted][0])
    return SimpleNamespace(project=project, planted=planted_id, planted_gold=data[planted][1])


@pytest.fixture(scope="module")
def big_db(tmp_path_factory) -> SimpleNamespace:
    """The thousands-of-labels store, built once for the module (tests only read it)."""
    tmp = tmp_path_factory.mktemp("big")
    url = f"sqlite:///{tmp / 'big.sqlite3'}"
    engine = open_database(url)
    lead = repo.add_user(engine, "lena", PASSWORD, role="lead")
    repo.add_user(engine, "arno", PASSWORD, role="annotator")
    big = build_big(engine, lead)
    engine.dispose()
    return SimpleNamespace(url=url, tmp=tmp, lead=lead, **vars(big))


@pytest.fixture
def big(big_db, monkeypatch) -> SimpleNamespace:
    from ui import state

    monkeypatch.setenv("CWAL_DATABASE_URL", big_db.url)
    monkeypatch.setenv("CWAL_HOME", str(big_db.tmp))
    yield big_db
    state._engine.clear()
    analysis.clear_cache()


def run_lead(page: str, user_id: int, **session) -> object:
    at = app(page)
    at.session_state["cw_user_id"] = user_id
    for key, value in session.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def charts_of(at) -> int:
    return len(at.get("vega_lite_chart"))


def chart_data(at, index: int) -> pd.DataFrame:
    """The rows a drawn chart plots (its inlined datasets, concatenated)."""
    proto = at.get("vega_lite_chart")[index].proto
    frames = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in proto.datasets]
    if proto.data.data:
        frames.append(convert_arrow_bytes_to_pandas_df(proto.data.data))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(autouse=True)
def _fresh_views():
    yield
    analysis.clear_cache()


@pytest.mark.parametrize("page", PAGES)
def test_empty_project(store, users, demo, page) -> None:
    at = run_lead(page, users.lead.id)
    if page.endswith("dashboard.py"):
        assert {m.label: m.value for m in at.metric}["Labeled sentences"] == "0 / 320"
        assert "No labels yet" in at.info[0].value
    elif page.endswith("error_analysis.py"):
        assert "No served prediction" in at.info[0].value
        assert at.dataframe[0].value.empty  # no model, no least-sure tokens
    else:
        assert at.dataframe[0].value.empty and not at.get("bidi_component")


def test_a_few_labels(store, users, demo) -> None:
    labeled = label_few(store.engine, demo, users.lead.id)
    dash = run_lead(PAGES[0], users.lead.id)
    metrics = {m.label: m.value for m in dash.metric}
    assert metrics["Labeled sentences"] == "8 / 320" and metrics["Model version"] == "8"
    estimate = next(m for m in dash.metric if m.label == "Expected pool accuracy")
    low, high = (float(x.rstrip("%")) for x in estimate.delta.split(",")[0].split(" – "))
    assert low <= float(estimate.value.rstrip("%")) <= high
    assert estimate.delta.endswith("rests on 0 labels")  # served logs carry no keys: the prior
    assert charts_of(dash) == 5  # learning curve, measured vs expected, 2 throughput, labels
    # the learning curve from the first label: prequential token accuracy and span F1 over the
    # labels so far (fewer than the window), by labels, against seqeval on the served predictions
    learning = chart_data(dash, 0)
    preds = served(labeled.items(), 1)
    gold = list(labeled.values())
    for measure, oracle in (("prequential_f1", f1_score), ("prequential", accuracy_score)):
        rows = learning[learning["measure"] == reports.MEASURES[measure]]
        assert rows["sentences"].tolist() == list(range(1, 9))
        want = [oracle(gold[:k], [p for _, p, _ in preds[:k]]) for k in range(1, 9)]
        assert rows["value"].tolist() == pytest.approx(want)
    held_out = learning[learning["measure"] == reports.MEASURES["eval_f1"]]
    assert held_out["sentences"].tolist() == [8]  # the current model on the evaluation split
    assert any("Stopping signal: needs two" in c.value for c in dash.caption)  # no checkpoint yet
    pace = dash.dataframe[0].value
    assert pace["annotator"].tolist() == ["lena"] and pace["sentences"].tolist() == [8]
    errors = run_lead(PAGES[1], users.lead.id)
    summary = errors.dataframe[0].value
    assert summary["method"].tolist() == ["kd-pc"] and summary["tokens"].iloc[0] > 50
    assert charts_of(errors) == 4  # reliability, two entropy histograms, confusion
    least = errors.dataframe[1].value
    # ranked by the default rank (draw-margin): the mean signed margin over the draws ascending
    assert len(least) == 50 and least["margin"].is_monotonic_increasing
    review = run_lead(PAGES[2], users.lead.id)
    assert list(review.dataframe[0].value.columns)[:3] == ["rank", "sentence_id", "position"]


def test_dashboard_reads_the_pool_and_prefetches_the_labeled_view(
    store, users, demo, monkeypatch
) -> None:
    label_few(store.engine, demo, users.lead.id)
    gate, real = threading.Event(), analysis._view

    def held(*args):  # the labeled part: the dashboard must not wait for it
        if not gate.wait(20):
            raise AssertionError("the dashboard waited for the labeled sentences")
        return real(*args)

    monkeypatch.setattr(analysis, "_view", held)
    dash = run_lead(PAGES[0], users.lead.id)
    metrics = {m.label: m.value for m in dash.metric}
    assert metrics["Expected pool accuracy"].endswith("%") and charts_of(dash) == 5
    gate.set()
    analysis.wait_fresh(store.engine, demo, 60)

    def never(*args):
        raise AssertionError("the model view was computed twice")

    monkeypatch.setattr(analysis, "_view", never)  # error analysis opens on the prefetched view
    errors = run_lead(PAGES[1], users.lead.id)
    assert charts_of(errors) == 4 and len(errors.dataframe[1].value) == 50


def test_thousands_of_labels(big) -> None:
    started = time.perf_counter()
    dash = run_lead(PAGES[0], big.lead)
    metrics = {m.label: m.value for m in dash.metric}
    assert metrics["Labeled sentences"] == "2,000 / 2,400"
    assert metrics["F1 on the evaluation split"] != "–" and charts_of(dash) == 4
    # imported labels have no time: a sentence says so instead of an empty pace chart
    assert any("no label has a time yet" in c.value for c in dash.caption)
    errors = run_lead(PAGES[1], big.lead)
    assert errors.dataframe[0].value["tokens"].iloc[0] > 20_000
    review = run_lead(PAGES[2], big.lead)
    ranking = review.dataframe[0].value
    top = ranking.head(5)
    assert big.planted in set(top["sentence_id"]), top  # the planted miss is found first
    row = top[top["sentence_id"] == big.planted].iloc[0]
    assert row["given"] == "O" and row["predicted"] == "B-LOC" and row["p_given"] < 0.5
    assert time.perf_counter() - started < 120


def test_review_opens_a_sentence_in_the_editor(big) -> None:
    at = run_lead(PAGES[2], big.lead, cw_review_open=big.planted)
    data = editor_data(at)
    stored = repo.get_sentence(open_database(big.url), big.planted)
    assert data["sid"] == big.planted and data["tokens"] == stored.tokens
    assert data["spans"] == []  # the annotator's (wrong) all-O labels, ready to fix
    assert data["confidence"][data["least"]] == min(data["confidence"])
    assert at.subheader[-1].value == f"Sentence #{big.planted}"


def test_filters_narrow_the_ranking(big) -> None:
    at = run_lead(PAGES[2], big.lead)
    at.selectbox[1].select("B-LOC").run()
    ranking = at.dataframe[0].value
    assert (
        len(ranking) and ((ranking["given"] == "B-LOC") | (ranking["predicted"] == "B-LOC")).all()
    )
    at.selectbox[0].select("lena").run()
    assert set(at.dataframe[0].value["annotator"]) == {"lena"}


CHART = '[data-testid="stVegaLiteChart"]'


@pytest.mark.browser
@pytest.mark.skipif(not Path(harness.CHROMIUM).exists(), reason="Debian chromium not installed")
def test_lead_pages_in_the_browser(tmp_path: Path) -> None:
    from cwal import reports

    url = f"sqlite:///{tmp_path / 'cwal.sqlite3'}"
    ids = harness.seed(url, [("lena", PASSWORD, "lead")])
    engine = open_database(url)
    big = build_big(engine, ids["lena"], n_labeled=400, n_unlabeled=100, n_eval=60)
    view = analysis.model_view(engine, big.project)
    ranking = reports.review_ranking(view.labeled, annotators=view.annotators, n=200)
    row = int(ranking.index[ranking["sentence_id"] == big.planted][0])  # what the page shows
    before = repo.last_annotation_id(engine, big.project)
    ARTIFACTS.mkdir(exist_ok=True)
    with (
        harness.app_server(url, tmp_path, script="app.py") as base,
        harness.chromium((1400, 1000)) as page,
    ):
        harness.sign_in(page, base, "lena", PASSWORD)
        for title, n_charts in (("Dashboard", 4), ("Error analysis", 4), ("Review", 0)):
            page.get_by_role("link", name=title).click()
            page.get_by_role("heading", name=title).wait_for(timeout=120_000)
            page.get_by_test_id("stDataFrame").first.wait_for(timeout=120_000)
            drawn = page.locator(f"{CHART} canvas, {CHART} svg.marks")
            if n_charts:
                drawn.nth(n_charts - 1).wait_for(timeout=120_000)
            assert page.locator(CHART).count() == n_charts
            assert drawn.count() >= n_charts
            assert page.get_by_test_id("stException").count() == 0
            assert page.get_by_test_id("stAlertContentError").count() == 0
            slug = title.lower().replace(" ", "_")
            page.screenshot(path=str(ARTIFACTS / f"lead_{slug}.png"), full_page=True)

        grid = page.get_by_test_id("stDataFrame").first.bounding_box()
        page.mouse.click(grid["x"] + 18, grid["y"] + 35 * (row + 1) + 17)  # the row's marker
        sid = harness.wait_ready(page)
        assert sid == big.planted and set(harness.shown_tags(page)) == {"O"}
        spans = reports_spans(big.planted_gold)
        for start, end in spans:
            harness.token(page, start).click()
            if end - 1 > start:
                harness.token(page, end - 1).click(modifiers=["Shift"])
            page.keyboard.press("3")  # LOC
        page.wait_for_timeout(300)
        page.keyboard.press("Enter")
        page.get_by_text(f"Saved sentence #{sid}.").wait_for(timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "lead_review_fixed.png"), full_page=True)
        history = repo.annotation_history(engine, big.planted)
        fix = history[-1]
        assert fix.id > before and fix.status == "submitted" and fix.user_id == ids["lena"]
        assert fix.tags == big.planted_gold and fix.supersedes_id == history[0].id
        assert analysis.current_label(engine, big.planted) == big.planted_gold

        # Undo last (U): the fix is retracted, the sentence has the annotator's labels again
        page.wait_for_timeout(300)
        page.keyboard.press("u")
        page.get_by_text(f"Undid your last label (sentence #{sid})").wait_for(timeout=60_000)
        harness.wait_ready(page)
        assert set(harness.shown_tags(page)) == {"O"}
    undo = repo.annotation_history(engine, big.planted)[-1]
    assert undo.status == "undone" and undo.supersedes_id == fix.id
    assert analysis.current_label(engine, big.planted) == ["O"] * len(big.planted_gold)
    engine.dispose()


def reports_spans(tags: list[str]) -> list[tuple[int, int]]:
    """``(start, end_exclusive)`` of the LOC chunks of IOB2 tags."""
    from cwal.io import schemes

    return [(s, e) for t, s, e in schemes.spans(tags, "IOB2") if t == "LOC"]


def test_every_table_on_the_lead_pages_has_human_column_names(big) -> None:
    for page in PAGES:
        at = run_lead(page, big.lead)
        assert at.dataframe, page
        for frame in at.dataframe:
            config = json.loads(frame.proto.columns or "{}")
            for column in frame.value.columns:
                label = (config.get(str(column)) or {}).get("label") or str(column)
                assert "_" not in label and label[:1] == label[:1].upper(), (page, column, label)
