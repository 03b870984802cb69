"""The service layer: every action a page offers, one call each, with its rules and its checks.

Pages lay out and call; the service checks who may act (``guard``), applies the rules (the last
lead stays a lead, passwords are long enough, a sentence belongs to the project) and asks the
repository, which owns every query and transaction. Split by topic: ``accounts`` (sign in,
users), ``projects`` (create, files, settings, export, backup), ``team`` (members, overlap,
adjudication, guidelines, flags, Review fixes) and ``annotation`` (what the annotate screen
reads besides the live service).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Engine

from db.service.accounts import MIN_PASSWORD, Accounts, Throttled, check_password
from db.service.annotation import Annotation
from db.service.guard import Forbidden, lead_only, project_lead_only, project_role_only
from db.service.projects import (
    DEMO_DIR,
    DEMO_NAME,
    DEMO_TYPES,
    Projects,
    entity_types,
    install_demo,
    tagset,
)
from db.service.team import Team


def _no_session(project_id: int) -> None:
    """The default ``restart``: no live session to restart (scripts, tests)."""


class Service(Accounts, Projects, Team, Annotation):
    """The app's actions over one store. ``restart(project_id)`` closes the project's live
    session after a change it does not pick up by itself (new files, new settings)."""

    def __init__(self, engine: Engine, restart: Callable[[int], None] = _no_session) -> None:
        self.engine = engine
        self.restart = restart


def guarded_actions() -> list[str]:
    """The names of every action that checks the acting user's role."""
    return sorted(
        name
        for name in dir(Service)
        if getattr(getattr(Service, name), "lead_only", False)
        or getattr(getattr(Service, name), "project_roles", None)
    )


__all__ = [
    "DEMO_DIR",
    "DEMO_NAME",
    "DEMO_TYPES",
    "MIN_PASSWORD",
    "Forbidden",
    "Service",
    "Throttled",
    "check_password",
    "entity_types",
    "guarded_actions",
    "install_demo",
    "lead_only",
    "project_lead_only",
    "project_role_only",
    "tagset",
]
