"""Account safety: the one first lead, disabled accounts, password changes that end the other
sessions, and sign-in throttling kept in the store (per account name and per client address, so
that it holds across browser sessions, app processes and restarts)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, delete, func, insert, select, update

from db.engine import read_transaction, write_transaction
from db.models import Lease, SignInFailure, SignInSession, User, utcnow
from db.repository.base import (
    InvalidValueError,
    NotFoundError,
    StoreError,
)
from db.repository.sessions import _digest
from db.repository.users import ADMIN_ROLE, _insert_user, hash_password

SETUP_LOCK_NS = 2  # pg_advisory_xact_lock(SETUP_LOCK_NS, 0): one first-lead creation at a time
WINDOW = timedelta(minutes=15)
"""Failed sign-ins older than this are forgotten."""
ACCOUNT_LIMIT = 5
"""Failed sign-ins of one account name within ``WINDOW`` after which it must wait."""
ADDRESS_LIMIT = 20
"""Failed sign-ins from one client address within ``WINDOW`` after which it must wait."""


class SetupOverError(StoreError):
    """The first lead exists already (a second creator lost the race)."""


def create_first_lead(engine: Engine, name: str, password: str) -> int:
    """Create the first account, a lead, only while the store has no user at all: two racing
    creators (threads, processes) get exactly one lead; the other gets SetupOverError."""

    def no_user_yet(conn: Connection) -> None:  # SQLite: BEGIN IMMEDIATE serializes
        if conn.dialect.name == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(SETUP_LOCK_NS, 0)))
        if conn.execute(select(User.id).limit(1)).first() is not None:
            raise SetupOverError("setup is over: a user already exists; sign in instead")

    return _insert_user(engine, name, password, ADMIN_ROLE, no_user_yet)


def set_disabled(engine: Engine, user_id: int, disabled: bool) -> None:
    """Disable an account (it cannot sign in; its sign-in sessions end and its leased sentences
    go back to the pool, in one transaction) or enable it again. The last enabled lead account
    cannot be disabled."""
    now = utcnow()
    with write_transaction(engine) as conn:
        row = conn.execute(select(User.role).where(User.id == user_id)).one_or_none()
        if row is None:
            raise NotFoundError(f"no user with id {user_id}")
        if disabled and row.role == "lead":
            others = conn.execute(
                select(func.count())
                .select_from(User)
                .where(User.role == "lead", User.disabled_at.is_(None), User.id != user_id)
            ).scalar_one()
            if not others:
                raise InvalidValueError("the last enabled lead cannot be disabled")
        conn.execute(
            update(User).where(User.id == user_id).values(disabled_at=now if disabled else None)
        )
        if disabled:
            conn.execute(delete(SignInSession).where(SignInSession.user_id == user_id))
            conn.execute(delete(Lease).where(Lease.user_id == user_id))


def set_password(
    engine: Engine, user_id: int, password: str, keep_token: str | None = None
) -> None:
    """Replace a user's password (a new salt is drawn) and end every sign-in session of theirs,
    except ``keep_token``'s when given (the browser a user changed their own password from)."""
    hashed = hash_password(password)
    with write_transaction(engine) as conn:
        done = conn.execute(
            update(User).where(User.id == user_id).values(password_hash=hashed)
        ).rowcount
        query = delete(SignInSession).where(SignInSession.user_id == user_id)
        if keep_token:
            query = query.where(SignInSession.token_hash != _digest(keep_token))
        conn.execute(query)
    if done != 1:
        raise NotFoundError(f"no user with id {user_id}")


def _wait(times: list[datetime], limit: int, now: datetime) -> float:
    """Seconds until fewer than ``limit`` of ``times`` (ascending, within the window) remain."""
    if len(times) < limit:
        return 0.0
    return max(0.0, (times[len(times) - limit] + WINDOW - now).total_seconds())


def sign_in_wait(engine: Engine, name: str, address: str, now: datetime | None = None) -> float:
    """Seconds this name and client address must wait before the next sign-in attempt is
    checked (0 when it may go ahead)."""
    now = now or utcnow()
    since = now - WINDOW
    with read_transaction(engine) as conn:
        by_name = conn.execute(
            select(SignInFailure.at)
            .where(SignInFailure.name == name[:200], SignInFailure.at > since)
            .order_by(SignInFailure.at)
        ).scalars()
        by_name = list(by_name)
        by_address = list(
            conn.execute(
                select(SignInFailure.at)
                .where(SignInFailure.address == address[:64], SignInFailure.at > since)
                .order_by(SignInFailure.at)
            ).scalars()
        )
    return max(_wait(by_name, ACCOUNT_LIMIT, now), _wait(by_address, ADDRESS_LIMIT, now))


def record_sign_in(
    engine: Engine, name: str, address: str, ok: bool, now: datetime | None = None
) -> None:
    """Remember a failed attempt; a successful one clears the account name's failures."""
    now = now or utcnow()
    with write_transaction(engine) as conn:
        conn.execute(delete(SignInFailure).where(SignInFailure.at <= now - WINDOW))
        if ok:
            conn.execute(delete(SignInFailure).where(SignInFailure.name == name[:200]))
        else:
            conn.execute(
                insert(SignInFailure).values(name=name[:200], address=address[:64], at=now)
            )
