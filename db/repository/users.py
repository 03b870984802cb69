"""Users: annotators and leads, with scrypt password hashes verified in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, insert, select, update
from sqlalchemy.exc import IntegrityError

from db.engine import read_transaction, write_transaction
from db.models import User, utcnow
from db.repository.base import (
    DuplicateError,
    InvalidValueError,
    NotFoundError,
    check_name,
    is_unique_violation,
)

ROLES = ("annotator", "lead")
ADMIN_ROLE = "lead"  # the users.role that manages accounts and leads every project
# scrypt cost: 2**14 x 8 x 1 takes ~16 MB and tens of milliseconds; stored with each hash, so a
# later change of these numbers keeps old hashes verifiable.
SCRYPT_N, SCRYPT_R, SCRYPT_P, SCRYPT_LEN = 1 << 14, 8, 1, 32
_DUMMY_HASH: str | None = None


@dataclass(frozen=True)
class UserInfo:
    id: int
    name: str
    role: str
    created_at: datetime
    disabled: bool = False  # a disabled account cannot sign in (``accounts.set_disabled``)


def _password_bytes(password: str) -> bytes:
    if not isinstance(password, str) or not password:
        raise InvalidValueError("password must be a non-empty string")
    try:
        return password.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValueError("password holds characters that are not valid Unicode") from None


def hash_password(password: str) -> str:
    """A self-describing scrypt hash ``scrypt$n$r$p$salt$key`` with a fresh 16-byte salt."""
    salt = secrets.token_bytes(16)
    key = hashlib.scrypt(
        _password_bytes(password),
        salt=salt,
        n=SCRYPT_N,
        r=SCRYPT_R,
        p=SCRYPT_P,
        dklen=SCRYPT_LEN,
        maxmem=64 << 20,
    )
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${key.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """True when ``password`` matches ``stored``; the key comparison is constant-time."""
    try:
        kind, n, r, p, salt_hex, key_hex = stored.split("$")
        if kind != "scrypt":
            return False
        expected = bytes.fromhex(key_hex)
        key = hashlib.scrypt(
            _password_bytes(password),
            salt=bytes.fromhex(salt_hex),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
            maxmem=64 << 20,
        )
    except (ValueError, InvalidValueError):
        return False
    return hmac.compare_digest(key, expected)


def _info(row) -> UserInfo:
    return UserInfo(row.id, row.name, row.role, row.created_at, row.disabled_at is not None)


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise InvalidValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    return role


def _insert_user(
    engine: Engine,
    name: str,
    password: str,
    role: str,
    guard: Callable[[Connection], None] | None = None,
) -> int:
    """Check the name, hash the password and insert the user in one write transaction, after
    ``guard(conn)`` (which may raise) inside it; its id. A taken name raises DuplicateError."""
    check_name(name, "user name")
    _check_role(role)
    hashed = hash_password(password)
    try:
        with write_transaction(engine) as conn:
            if guard is not None:
                guard(conn)
            return conn.execute(
                insert(User)
                .values(name=name, role=role, password_hash=hashed, created_at=utcnow())
                .returning(User.id)
            ).scalar_one()
    except IntegrityError as exc:
        if is_unique_violation(exc):
            raise DuplicateError(f"user name {name!r} is already taken") from None
        raise


def add_user(engine: Engine, name: str, password: str, role: str = "annotator") -> int:
    """Create a user and return its id; a taken name raises DuplicateError."""
    return _insert_user(engine, name, password, role)


_COLUMNS = (User.id, User.name, User.role, User.created_at, User.disabled_at)


def get_user(engine: Engine, user_id: int) -> UserInfo:
    """The user with that id (NotFoundError otherwise)."""
    with read_transaction(engine) as conn:
        row = conn.execute(select(*_COLUMNS).where(User.id == user_id)).one_or_none()
    if row is None:
        raise NotFoundError(f"no user with id {user_id}")
    return _info(row)


def find_user(engine: Engine, name: str) -> UserInfo | None:
    """The user of that exact name, or None."""
    with read_transaction(engine) as conn:
        row = conn.execute(select(*_COLUMNS).where(User.name == name)).one_or_none()
    return None if row is None else _info(row)


def list_users(engine: Engine, role: str | None = None) -> list[UserInfo]:
    """All users (optionally of one role) in creation order."""
    query = select(*_COLUMNS).order_by(User.id)
    if role is not None:
        query = query.where(User.role == _check_role(role))
    with read_transaction(engine) as conn:
        return [_info(row) for row in conn.execute(query)]


def authenticate(engine: Engine, name: str, password: str) -> UserInfo | None:
    """The user when name and password match and the account is not disabled, else None.

    An unknown name still costs one scrypt computation, so response time does not reveal which
    names exist.
    """
    global _DUMMY_HASH
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(*_COLUMNS, User.password_hash).where(User.name == name)
        ).one_or_none()
    if row is None:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = hash_password("cwal-dummy-password")
        verify_password(password, _DUMMY_HASH)
        return None
    if not verify_password(password, row.password_hash) or row.disabled_at is not None:
        return None
    return _info(row)


def set_role(engine: Engine, user_id: int, role: str) -> None:
    """Make a user an annotator or a lead; the last lead cannot stop being one (someone must
    manage the app). Atomic: the lead rows are locked (``FOR UPDATE``; on SQLite the write
    transaction holds the database lock) before they are counted, so two leads demoting each
    other at once leave one lead."""
    _check_role(role)
    with write_transaction(engine) as conn:
        leads = select(User.id).where(User.role == ADMIN_ROLE).order_by(User.id).with_for_update()
        if role != ADMIN_ROLE and conn.execute(leads).scalars().all() == [user_id]:
            raise InvalidValueError("the last lead cannot stop being a lead")
        done = conn.execute(update(User).where(User.id == user_id).values(role=role)).rowcount
    if done != 1:
        raise NotFoundError(f"no user with id {user_id}")
