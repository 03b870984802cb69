"""A fresh install as a new user meets it (``bench/browser.py --part cold``).

A new ``CWAL_HOME`` with no database, numba's cache pointed at an empty directory (nothing
compiled yet), ``streamlit run app.py``, and Debian's headless Chromium through Playwright: open
the app, create the first lead with the demo project, click Annotate in the sidebar, then label
the first sentences with the keyboard only (Enter accepts what is shown). Timed, in the browser:

* ``server up``: the process start to its health check answering;
* ``setup form``: the page opened to the first-lead form shown (its setup token is
  the one the server printed, read from ``CWAL_HOME``);
* ``signed in``: the "Create lead account" click to the sidebar naming the lead (migrations,
  the demo project's import);
* ``first sentence``: the click on the sidebar's Annotate link to a sentence shown and editable
  (target ``FIRST_TARGET_S``);
* ``submit confirmed``: each Enter to the server's answer in the editor (the label stored: the
  editor's revision changes with "Saved sentence #n."), over the first ``n`` submits (target: the
  slowest within ``SUBMIT_TARGET_S``); ``while preparing``: how many of them were answered while
  Annotate still said the model was being prepared (``ui.prepare``);
* ``app reopened``: the app's address opened again (signed in by the cookie, Annotate is the
  first page) to a sentence shown and editable;
* ``model ready`` (not with ``--quick``): the page opened to the "Preparing the model" notice
  gone, then ``AFTER_READY`` more submits to the live model.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.app import harness

FIRST_TARGET_S, SUBMIT_TARGET_S = 5.0, 1.0
THINK_MS = 400  # on each sentence before Enter: a very fast annotator
AFTER_READY = 5
VIA = "My progress"  # the page the lead leaves for Annotate
NOTICE = "Preparing the model"
LEAD, PASSWORD = "lena", "first lead password"


def _submit(page: Any, sid: int) -> int:
    """Press Enter on the sentence shown after ``THINK_MS``; the next sentence's id."""
    page.wait_for_timeout(THINK_MS)
    page.keyboard.press("Enter")
    return harness.wait_ready(page, sid, timeout=600)


def _confirmed(page: Any, n: int, timeout_s: float = 600.0) -> list[float]:
    """The probe's Enter-to-saved latencies (ms), once ``n`` answers arrived."""
    deadline = time.monotonic() + timeout_s
    while True:
        saved = harness.probe_results(page)[1]
        if len(saved) >= n or time.monotonic() > deadline:
            return saved
        page.wait_for_timeout(100)


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stored(url: str) -> int:
    from db import open_database
    from db import repository as repo

    engine = open_database(url)
    try:
        return sum(len(repo.current_annotations(engine, p.id)) for p in repo.list_projects(engine))
    finally:
        engine.dispose()


def measure(home: Path, cache: Path, n: int, wait_ready: bool) -> dict:
    """One fresh install with numba's cache in ``cache``, timed as described above."""
    url = f"sqlite:///{home / 'cwal.sqlite3'}"
    row: dict = {"n": n}
    t = time.perf_counter()
    with (
        harness.app_server(url, home, env={"NUMBA_CACHE_DIR": str(cache)}, timeout=300) as base,
        harness.chromium() as page,
    ):
        row["server_up_s"] = time.perf_counter() - t
        page.set_default_timeout(600_000)  # a hang guard only
        t = time.perf_counter()
        page.goto(base)
        opened = t
        page.get_by_role("button", name="Create lead account").wait_for()
        row["setup_form_s"] = time.perf_counter() - t
        page.get_by_label("User name").fill(LEAD)
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_label("Password again").fill(PASSWORD)
        page.get_by_label("Setup token", exact=True).fill(harness.setup_token(home))
        page.get_by_label("Setup token", exact=True).fill(harness.setup_token(home))
        t = time.perf_counter()
        page.get_by_role("button", name="Create lead account").click()
        page.get_by_text(f"{LEAD} (lead)", exact=True).wait_for()
        row["signed_in_s"] = time.perf_counter() - t
        harness.wait_ready(page, timeout=600)  # Annotate is the landing page
        page.get_by_role("link", name=VIA, exact=True).click()
        page.get_by_role("heading", name=VIA).wait_for()
        t = time.perf_counter()
        page.get_by_role("link", name="Annotate", exact=True).click()
        sid = harness.wait_ready(page, timeout=600)
        row["first_sentence_s"] = time.perf_counter() - t
        harness.install_probe(page)
        page.wait_for_timeout(200)  # the probe attaches to the editor
        preparing, server = 0, harness.server_pid(base)
        cpu = _cpu_s(server)
        for _ in range(n):
            preparing += page.get_by_text(NOTICE).is_visible()
            sid = _submit(page, sid)
        saved = _confirmed(page, n)
        row["server_cpu_per_submit_ms"] = (_cpu_s(server) - cpu) / n * 1000
        row["preparing_submits"] = preparing
        t = time.perf_counter()
        page.goto(base)  # the app opened again, signed in by the cookie: Annotate first
        sid = harness.wait_ready(page, timeout=600)
        row["reopened_s"] = time.perf_counter() - t
        harness.install_probe(page)  # the reopened page's own probe
        page.wait_for_timeout(200)
        if wait_ready:
            page.get_by_text(NOTICE).wait_for(state="detached", timeout=1_800_000)
            row["model_ready_s"] = time.perf_counter() - opened
            sid = harness.wait_ready(page, timeout=600)
            for _ in range(AFTER_READY):
                sid = _submit(page, sid)
            after = _confirmed(page, AFTER_READY)
            row["after_ready_max_ms"] = max(after) if after else None
        stored = _stored(url)
    if len(saved) < n:
        raise RuntimeError(f"only {len(saved)} of {n} submits were confirmed")
    expected = n + (AFTER_READY if wait_ready else 0)
    if stored != expected:  # every confirmed Enter must be in the store, none twice
        raise RuntimeError(f"{stored} annotations stored for {expected} confirmed submits")
    first = saved[:n]
    row.update(
        submit_p50_ms=sorted(first)[len(first) // 2],
        submit_max_ms=max(first),
        submit_ms=first,
        first_target_met=row["first_sentence_s"] <= FIRST_TARGET_S,
        submit_target_met=max(first) <= SUBMIT_TARGET_S * 1000,
    )
    return row


def run(n: int, wait_ready: bool) -> list[dict]:
    """The fresh install with an empty numba cache; without ``--quick`` (``wait_ready``) then a
    second fresh install over the cache the first one filled: the same steps without the
    compiling, on the same machine load (the baseline to compare with)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="cwal-bench-cold-") as tmp:
        cache = Path(tmp) / "numba-cache"
        cache.mkdir()
        for case in ("empty numba cache", "filled numba cache")[: 2 if wait_ready else 1]:
            home = Path(tmp) / case.split()[0]
            home.mkdir()
            rows.append({"case": case, **measure(home, cache, n, wait_ready)})
    return rows


def table(rows: list[dict]) -> str:
    def yes(r: dict, key: str) -> str:
        return "met" if r[key] else "MISSED"

    def line(label: str, fmt: str, key: str, unit: str) -> str:
        cells = "".join(
            f" {format(r[key], fmt) + ' ' + unit if r.get(key) is not None else '-':>14}"
            for r in rows
        )
        return f"{label:<34}{cells}"

    n = rows[0]["n"]
    lines = [
        f"{'step':<34}" + "".join(f" {r['case'].split()[0] + ' cache':>14}" for r in rows),
        "-" * (34 + 15 * len(rows)),
        line("server up", ".1f", "server_up_s", "s"),
        line("page opened -> setup form", ".1f", "setup_form_s", "s"),
        line("create lead + demo -> signed in", ".1f", "signed_in_s", "s"),
        line("Annotate click -> first sentence", ".2f", "first_sentence_s", "s"),
        line(f"submit confirmed, p50 of {n}", ".0f", "submit_p50_ms", "ms"),
        line(f"submit confirmed, max of {n}", ".0f", "submit_max_ms", "ms"),
        line("  of them while preparing", "d", "preparing_submits", ""),
        line("server CPU per submit (all threads)", ".0f", "server_cpu_per_submit_ms", "ms"),
        line("app reopened -> first sentence", ".2f", "reopened_s", "s"),
        line("page opened -> model ready", ".1f", "model_ready_s", "s"),
        line(f"submit confirmed, max of next {AFTER_READY}", ".0f", "after_ready_max_ms", "ms"),
        "",
        f"targets (empty cache): first sentence <= {FIRST_TARGET_S:.0f} s "
        f"{yes(rows[0], 'first_target_met')}; every submit confirmed <= "
        f"{SUBMIT_TARGET_S * 1000:.0f} ms {yes(rows[0], 'submit_target_met')}",
    ]
    return "\n".join(lines)
