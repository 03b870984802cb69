"""Project membership: who works on which project, and as what.

A user's *project role* is ``lead``, ``reviewer`` or ``annotator`` from the memberships table; an
account whose global role is ``lead`` (an administrator, like the first lead) acts as lead on every
project. Everyone else sees and opens only the projects they are a member of.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from db.engine import read_transaction, write_transaction
from db.models import Membership, Project, User, utcnow
from db.repository.base import InvalidValueError, NotFoundError, is_unique_violation
from db.repository.projects import DEFAULT_SETTINGS, ProjectInfo
from db.repository.users import ADMIN_ROLE

PROJECT_ROLES = ("lead", "reviewer", "annotator")


@dataclass(frozen=True)
class MemberInfo:
    user_id: int
    name: str
    role: str
    created_at: datetime


def _check_role(role: str) -> str:
    if role not in PROJECT_ROLES:
        raise InvalidValueError(f"project role must be one of {', '.join(PROJECT_ROLES)}")
    return role


def _keep_a_lead(conn: Connection, project_id: int, user_id: int) -> None:
    """Refuse (InvalidValueError) when ``user_id`` is the project's only lead member. The lead
    rows are locked before they are counted (``FOR UPDATE``; SQLite's write transaction holds the
    database lock), so two leads stepping down at once cannot both pass: the second one waits,
    then no longer sees the first as a lead."""
    leads = (
        select(Membership.user_id)
        .where(Membership.project_id == project_id, Membership.role == "lead")
        .order_by(Membership.user_id)
        .with_for_update()
    )
    if conn.execute(leads).scalars().all() == [user_id]:
        raise InvalidValueError("the project's last lead cannot stop leading it")


def set_member(engine: Engine, project_id: int, user_id: int, role: str) -> None:
    """Make a user a member of a project with ``role`` (or change their role); the project's
    last lead cannot stop leading it (atomic, see :func:`_keep_a_lead`)."""
    _check_role(role)
    with write_transaction(engine) as conn:
        if conn.execute(select(Project.id).where(Project.id == project_id)).first() is None:
            raise NotFoundError(f"no project with id {project_id}")
        if role != "lead":
            _keep_a_lead(conn, project_id, user_id)
        if conn.execute(select(User.id).where(User.id == user_id)).first() is None:
            raise NotFoundError(f"no user with id {user_id}")
        done = conn.execute(
            update(Membership)
            .where(Membership.project_id == project_id, Membership.user_id == user_id)
            .values(role=role)
        ).rowcount
        if not done:
            try:
                with conn.begin_nested():
                    conn.execute(
                        insert(Membership).values(
                            project_id=project_id, user_id=user_id, role=role, created_at=utcnow()
                        )
                    )
            except IntegrityError as exc:  # a concurrent insert won: set the role instead
                if not is_unique_violation(exc):
                    raise
                conn.execute(
                    update(Membership)
                    .where(Membership.project_id == project_id, Membership.user_id == user_id)
                    .values(role=role)
                )


def remove_member(engine: Engine, project_id: int, user_id: int) -> bool:
    """Take a user off a project (their labels stay in the log); False when not a member. The
    project's last lead cannot be taken off it (atomic, see :func:`_keep_a_lead`)."""
    with write_transaction(engine) as conn:
        _keep_a_lead(conn, project_id, user_id)
        return bool(
            conn.execute(
                delete(Membership).where(
                    Membership.project_id == project_id, Membership.user_id == user_id
                )
            ).rowcount
        )


def list_members(engine: Engine, project_id: int) -> list[MemberInfo]:
    """The project's members in the order they joined."""
    query = (
        select(Membership.user_id, User.name, Membership.role, Membership.created_at)
        .join(User, User.id == Membership.user_id)
        .where(Membership.project_id == project_id)
        .order_by(Membership.created_at, Membership.user_id)
    )
    with read_transaction(engine) as conn:
        return [MemberInfo(*row) for row in conn.execute(query)]


def project_role(engine: Engine, project_id: int, user_id: int) -> str | None:
    """The user's role on the project (``lead`` for an administrator), None for an outsider."""
    query = select(User.role, Membership.role.label("member")).outerjoin(
        Membership, (Membership.user_id == User.id) & (Membership.project_id == project_id)
    )
    with read_transaction(engine) as conn:
        row = conn.execute(query.where(User.id == user_id)).one_or_none()
        exists = conn.execute(select(Project.id).where(Project.id == project_id)).first()
    if row is None or exists is None:
        return None
    return "lead" if row.role == ADMIN_ROLE else row.member


def projects_of(engine: Engine, user_id: int) -> list[ProjectInfo]:
    """The projects a user may open, in creation order (every project for an administrator)."""
    query = select(Project.id, Project.name, Project.settings, Project.created_at)
    with read_transaction(engine) as conn:
        role = conn.execute(select(User.role).where(User.id == user_id)).scalar_one_or_none()
        if role is None:
            return []
        if role != ADMIN_ROLE:
            query = query.join(
                Membership,
                (Membership.project_id == Project.id) & (Membership.user_id == user_id),
            )
        rows = conn.execute(query.order_by(Project.id)).all()
    return [
        ProjectInfo(r.id, r.name, {**DEFAULT_SETTINGS, **r.settings}, r.created_at) for r in rows
    ]
