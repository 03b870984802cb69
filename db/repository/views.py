"""The per-process caches behind the lead pages' views, and the keys naming what a view is a
function of.

A view is cached under the project's identity (database URL, id, creation time), its settings,
its newest annotation id and newest checkpoint id: ids only ever grow and sentences never change,
so a cached view is never stale-and-wrong. Views of one project and kind form a family (ranked by
annotation id), from which ``Memo.get_recent`` may serve one up to ``max_lag`` labels old.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from sqlalchemy import Engine

from cwal import reports
from cwal.reports.memo import Foreground, Memo
from db.repository.checkpoints import list_checkpoints
from db.repository.clusters import clusters_enabled, load_clusters
from db.repository.history import last_annotation_id
from db.repository.projects import get_project

# The page runs in progress (the router counts them): background refreshes and prefetches start
# when none is, so they do not slow down the page that served a view a few labels old.
FOREGROUND = Foreground()
# The process's warm-up of the lead views (``ui.warmup``) while it runs: optional work waits.
WARMING = Foreground(settle=0.0)
VIEWS = Memo(16, FOREGROUND)  # log frames, pool views, model views, curves and live models
POINTS = Memo(512)  # one learning-curve point per checkpoint
FEATURES = Memo(16)  # template features of stored sentences, per store and template
KINDS = ("logs", "predictions", "pool", "view", "curve")  # families served late


def idle_gate() -> bool:
    """Whether optional background work (the live session's idle feature extraction) may take
    a short step now: no warm-up runs and no page has been run or drawn for a moment (waits a
    few tens of ms for that)."""
    return WARMING.quiet() and FOREGROUND.quiet()


def yield_to_pages(key: object, patience: float = 2.0) -> Callable[[], None]:
    """A pause to call between the steps of a view's computation: outside a page run, and
    unless a page waits for that view (``key``), it waits while pages run (at most ``patience``
    s over all its calls), so that a page that does not need the view is not slowed by it."""
    if FOREGROUND.running_here():
        return lambda: None
    deadline: list[float] = []

    def pause() -> None:
        while not VIEWS.awaited(key) and not FOREGROUND.wait_idle(0.05):
            if not deadline:
                deadline.append(time.monotonic() + patience)
            elif time.monotonic() > deadline[0]:
                return

    return pause


def clear_cache() -> None:
    """Forget every cached view and feature (tests; a process that changed sentences)."""
    for memo in (VIEWS, POINTS, FEATURES):
        memo.clear()


def project_key(engine: Engine, project_id: int) -> tuple:
    """Names one project of one database as configured: URL, id, creation time and settings
    (so a cached view never outlives the store it was read from, nor a settings change)."""
    project = get_project(engine, project_id)
    settings = json.dumps(project.settings, sort_keys=True, default=str)
    return (str(engine.url), project_id, project.created_at, settings)


def model_key(engine: Engine, project_id: int) -> tuple:
    """What the live model is a function of: the project (``project_key``), its newest
    annotation and its newest checkpoint (a consolidation swaps in a retrained model without a
    new annotation)."""
    checkpoints = list_checkpoints(engine, project_id)
    newest = checkpoints[-1].id if checkpoints else 0
    return (*project_key(engine, project_id), last_annotation_id(engine, project_id), newest)


def feature_cache(engine: Engine, project_id: int, template: str) -> reports.FeatureCache:
    """The process's template features of the project's sentences (they never change)."""
    key = (project_key(engine, project_id)[:3], template)

    def made() -> reports.FeatureCache:
        settings = get_project(engine, project_id).settings
        found = load_clusters(engine, project_id) if clusters_enabled(settings) else None
        return reports.FeatureCache(template, found)  # another model's clusters: it follows

    return FEATURES.get(key, made)


def refreshing(engine: Engine, project_id: int) -> bool:
    """True while a newer view of the project is computed in the background (a page served
    one up to ``max_lag`` annotations old)."""
    project = project_key(engine, project_id)
    return any(VIEWS.refreshing((kind, project)) for kind in KINDS)


def wait_fresh(engine: Engine, project_id: int, timeout: float | None = None) -> None:
    """Block until the project's background work (refreshes, prefetches) has finished (tests,
    benchmarks)."""
    project = project_key(engine, project_id)
    for kind in KINDS:
        VIEWS.wait((kind, project), timeout)
