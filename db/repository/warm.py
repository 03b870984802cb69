"""A fresh process's warm-up of the lead views (``ui.warmup`` runs it once per process, in the
background, from the sign-in page): a lead's first page then finds its views ready or being
computed, and waits for that computation instead of repeating it."""

from __future__ import annotations

from sqlalchemy import Engine

from db.repository import analysis
from db.repository.checkpoints import list_checkpoints
from db.repository.learning_curve import curve_points
from db.repository.projects import list_projects
from db.repository.views import FOREGROUND

# Projects whose views are computed before a lead asks: the first one is every lead's default;
# each costs seconds of CPU and a live model's memory.
WARM_PROJECTS = 1
WARM_PATIENCE = 10.0  # seconds the model view waits for the page runs to end


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


def warm_up(engine: Engine, project_ids: list[int]) -> None:
    """Compute the current lead views of the projects: the pool view, logs and learning curve
    the dashboard shows, then, once no page is being drawn, the model view error analysis and
    review read."""
    for project_id in project_ids:
        analysis.pool_view(engine, project_id)
        analysis.log_frames(engine, project_id)
        curve_points(engine, project_id)
    for project_id in project_ids:
        # the costliest view, and no dashboard's: let a page being drawn finish first (a lead
        # page that needs it meanwhile computes it, and this finds it cached)
        FOREGROUND.wait_idle(WARM_PATIENCE)
        analysis.model_view(engine, project_id)
