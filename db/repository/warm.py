"""A fresh process's warm-up of the lead views (``ui.warmup`` runs it once per process, in the
background, from the sign-in page): a lead's first page then finds its views ready or being
computed, and waits for that computation instead of repeating it."""

from __future__ import annotations

from threading import Event

from sqlalchemy import Engine

from db.repository import analysis
from db.repository.checkpoints import list_checkpoints
from db.repository.learning_curve import curve_points
from db.repository.projects import list_projects
from db.repository.views import FOREGROUND

# Projects whose views are computed before a lead asks: the first one is every lead's default;
# each costs seconds of CPU and a live model's memory.
WARM_PROJECTS = 1
WARM_PATIENCE = 5.0  # seconds the curve waits for the pages to be run and drawn


def warm_projects(engine: Engine, limit: int = WARM_PROJECTS) -> list[int]:
    """The first ``limit`` projects (in the sidebar's order: the first is every lead's default)
    that have a consolidated model (a checkpoint): whose lead views take seconds to compute."""
    found: list[int] = []
    for project in list_projects(engine):
        if len(found) >= limit:
            break
        if list_checkpoints(engine, project.id):
            found.append(project.id)
    return found


def warm_up(engine: Engine, project_ids: list[int], stop: Event | None = None) -> None:
    """Compute the current lead views of the projects: the pool view and the logs (all but
    the learning curve of the dashboard, and the prediction log error analysis reads), then the
    model view error analysis and review read (it costs most), then the learning curve.

    Nothing waits for the page runs before the model view: a lead lands on these pages right
    after the sign-in page that started this, and a page asking for a view being computed waits
    for it. The model view's feature extraction pauses only while a page that does not wait for
    it runs (``views.yield_to_pages``); the curve starts once no page runs or is being drawn
    (``Foreground.quiet``; a dashboard opened meanwhile computes it itself, and this then finds
    it cached). The live session's optional idle work waits for the whole warm-up
    (``views.idle_gate``). Once ``stop`` is set, no further view is started."""
    steps = [analysis.pool_view, analysis.log_frames, analysis.model_view]
    for project_id in project_ids:
        for step in steps:
            if stop is not None and stop.is_set():
                return
            step(engine, project_id)
    for project_id in project_ids:
        FOREGROUND.quiet(WARM_PATIENCE)
        if stop is not None and stop.is_set():
            return
        curve_points(engine, project_id)
