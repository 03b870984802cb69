"""Sign-in sessions: a random token per signed-in browser, stored only as its SHA-256, expiring,
revoked on sign-out (one session) and on a password change (all of the user's but the changing
browser's: ``accounts.set_password``)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import Engine, delete, insert, select

from db.engine import read_transaction, write_transaction
from db.models import SignInSession, User, utcnow
from db.repository.base import InvalidValueError, NotFoundError
from db.repository.users import UserInfo

SESSION_DAYS = 14.0  # a signed-in browser stays signed in this long without signing in again


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_session(engine: Engine, user_id: int, days: float = SESSION_DAYS) -> str:
    """A new session for the user; its token (returned once, never stored)."""
    if not days > 0:
        raise InvalidValueError(f"a session must last a positive time, not {days} days")
    token = secrets.token_urlsafe(32)
    now = utcnow()
    with write_transaction(engine) as conn:
        if conn.execute(select(User.id).where(User.id == user_id)).first() is None:
            raise NotFoundError(f"no user with id {user_id}")
        conn.execute(
            delete(SignInSession).where(SignInSession.expires_at <= now)
        )  # expired ones are of no use to anyone
        conn.execute(
            insert(SignInSession).values(
                token_hash=_digest(token),
                user_id=user_id,
                created_at=now,
                expires_at=now + timedelta(days=days),
            )
        )
    return token


def session_user(engine: Engine, token: str | None) -> UserInfo | None:
    """The user a live session token belongs to; None for an unknown, revoked or expired one."""
    if not token or not isinstance(token, str) or len(token) > 200:
        return None
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(User.id, User.name, User.role, User.created_at)
            .join(SignInSession, SignInSession.user_id == User.id)
            .where(
                SignInSession.token_hash == _digest(token),
                SignInSession.expires_at > utcnow(),
                User.disabled_at.is_(None),
            )
        ).one_or_none()
    return None if row is None else UserInfo(row.id, row.name, row.role, row.created_at)


def revoke_session(engine: Engine, token: str | None) -> None:
    """End one session (sign-out); nothing happens for an unknown token."""
    if not token:
        return
    with write_transaction(engine) as conn:
        conn.execute(delete(SignInSession).where(SignInSession.token_hash == _digest(token)))
