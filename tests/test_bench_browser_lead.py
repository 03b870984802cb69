"""bench/browser.py's lead-pages part without a browser: the medians per page and visit, the 2 s
target met or missed, the table naming a smaller (--quick) project, and --part / --json wiring."""

from __future__ import annotations

import json
from pathlib import Path

from bench import _browser_lead as lead
from bench import browser


def visits(page: str, state: str, ms: list[float], stale: bool = False) -> list[dict]:
    return [{"page": page, "state": state, "round": i, "ms": m, "ran_ms": m / 2, "charts": 5,
             "stale": stale} for i, m in enumerate(ms)]  # fmt: skip


def test_summary_takes_medians_and_judges_the_median_against_the_target() -> None:
    seen = (
        visits("dashboard", "cold", [2500.0])
        + visits("dashboard", "cold first", [5000.0])
        + visits("dashboard", "warm", [900.0, 4000.0, 1100.0])  # one slow outlier: still met
        + visits("dashboard", "after label", [2100.0, 1900.0, 2300.0], stale=True)
        + visits("review", "warm", [2000.0, 2000.0])  # exactly the target counts as met
    )
    rows = lead.summarize(seen, "10,000 (5,000 lab.)")
    got = {(r["page"], r["state"]): r for r in rows}
    assert list(got) == [("dashboard", "cold first"), ("dashboard", "cold"), ("dashboard", "warm"),
                         ("dashboard", "after label"), ("review", "warm")]  # fmt: skip
    assert got["dashboard", "cold"]["median_s"] == 2.5 and not got["dashboard", "cold"]["met"]
    warm = got["dashboard", "warm"]
    assert (warm["n"], warm["median_s"], warm["min_s"], warm["max_s"]) == (3, 1.1, 0.9, 4.0)
    assert warm["met"] and warm["stale"] == 0 and warm["script_s"] == 0.55
    assert got["dashboard", "cold first"]["median_s"] == 5.0
    after = got["dashboard", "after label"]
    assert after["median_s"] == 2.1 and not after["met"] and after["stale"] == 3
    assert got["review", "warm"]["met"] and got["review", "warm"]["target_s"] == lead.TARGET_S
    assert json.loads(json.dumps(rows)) == rows


def test_table_says_met_or_missed_and_names_a_smaller_project() -> None:
    quick = lead.project_name(lead.QUICK, quick=True)
    full = lead.project_name(lead.FULL, quick=False)
    assert "QUICK" in quick and "QUICK" not in full and full.startswith("10,000 (5,000")
    rows = lead.summarize(visits("error_analysis", "cold", [3000.0])
                          + visits("error_analysis", "warm", [500.0]), quick)  # fmt: skip
    text = lead.table(rows).splitlines()
    assert len(text) == 4 and "target" in text[0]
    assert "MISSED" in text[2] and "3.00" in text[2] and "QUICK" in text[2]
    assert text[3].endswith(" met") and "0.50" in text[3]


def test_part_lead_runs_only_the_lead_pages_and_writes_json(tmp_path: Path, monkeypatch) -> None:
    calls = []

    def fake_run(quick, starts, warm, labels, tmp):
        calls.append((quick, starts, warm, labels))
        rows = lead.summarize(visits("review", "cold", [700.0]), "x")
        return {"rows": rows, "visits": [], "setup_s": 1.0, "sizes": {}}

    monkeypatch.setattr(lead, "run", fake_run)
    monkeypatch.setattr(browser, "run", lambda *a: (_ for _ in ()).throw(AssertionError("editor")))
    out = tmp_path / "lead.json"
    assert browser.main(["--part", "lead", "--quick", "--json", str(out)]) == 0
    assert browser.main(["--part", "lead", "--starts", "3", "--repeats", "0"]) == 0
    assert calls == [(True, 1, 2, 2), (False, 3, 0, 0)]
    payload = json.loads(out.read_text())
    assert list(payload) == ["lead"] and payload["lead"]["rows"][0]["met"] is True
