"""What every repository module shares: the store's errors, input checks and small SQL helpers."""

from __future__ import annotations

import json
import math
import random
import time
import unicodedata
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, func, select
from sqlalchemy.exc import IntegrityError, OperationalError

from cwal.errors import CwalError
from cwal.io import schemes
from db.models import NAME_MAX, User, utcnow

# Keys of pg_advisory_xact_lock(namespace, project_id): one lock serializes a project's annotation
# inserts so that annotation ids become visible in id order (catch-up readers never skip one).
ANNOTATION_LOCK_NS = 1


class StoreError(CwalError):
    """Base class of the errors the annotation store raises on purpose."""


class NotFoundError(StoreError, LookupError):
    """A user, project, sentence, checkpoint or run that does not exist."""


class DuplicateError(StoreError, ValueError):
    """A name that is already taken (users, projects)."""


class DuplicateImportError(DuplicateError):
    """The same file content was already imported into this project."""

    def __init__(self, source: str, batch_id: int, original_name: str) -> None:
        self.source = source
        self.batch_id = batch_id
        self.original_name = original_name
        super().__init__(
            f"{source}: this content was already imported into the project "
            f"(import #{batch_id}, from {original_name!r}); refusing a second import"
        )


class DatabaseBusyError(StoreError):
    """A write that still found the database locked after the bounded retries."""


class StoreFailedError(StoreError):
    """The database could not carry out an operation (a disk, connection or server failure);
    the live store (``db.store.SqlStore``) raises it in place of the driver's error, which the
    server's log keeps. Its message says nothing of the SQL."""


class InvalidValueError(StoreError, ValueError):
    """A value the store refuses: bad name, tags of the wrong length, unknown tag, bad setting."""


def check_name(value: object, what: str) -> str:
    """``value`` unchanged when it is a usable name: 1..NAME_MAX characters, no control
    characters (NUL included: PostgreSQL text cannot hold it), not only whitespace."""
    if not isinstance(value, str):
        raise InvalidValueError(f"{what} must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InvalidValueError(f"{what} must not be empty")
    if len(value) > NAME_MAX:
        raise InvalidValueError(f"{what} is {len(value)} characters long; at most {NAME_MAX}")
    for i, ch in enumerate(value):
        if unicodedata.category(ch) in ("Cc", "Cs"):
            raise InvalidValueError(f"{what} holds a control character {ch!r} at position {i}")
    return value


def check_json(value: Any, what: str) -> Any:
    """``value`` when it serializes to strict JSON (no NaN / infinity, only JSON types)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"{what} is not storable as JSON: {exc}") from None
    return value


def check_tags(
    tags: Sequence[str], n_tokens: int, settings: dict[str, Any], what: str = "tags"
) -> list[str]:
    """``tags`` as a list after checking length, tag set and (when strict) the scheme."""
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise InvalidValueError(f"{what} must be a list of strings")
    tags = list(tags)
    if len(tags) != n_tokens:
        raise InvalidValueError(f"{what} has {len(tags)} tags for {n_tokens} tokens")
    tagset = settings.get("tagset")
    if tagset is not None:
        allowed = set(tagset)
        for i, tag in enumerate(tags):
            if tag not in allowed:
                raise InvalidValueError(f"{what}: tag {tag!r} at token {i} is not in the tag set")
    scheme = settings.get("scheme")
    if scheme and settings.get("strict_scheme", True):
        found = schemes.check(tags, scheme)
        if found is not None:
            i, expected = found
            raise InvalidValueError(
                f"{what}: tag {tags[i]!r} at token {i} is invalid under {scheme} "
                f"(expected {expected!r})"
            )
    return tags


def check_seconds(seconds: float | None) -> float | None:
    """Seconds spent: None, or a finite non-negative number."""
    if seconds is None:
        return None
    value = float(seconds)
    if not math.isfinite(value) or value < 0:
        raise InvalidValueError(f"seconds must be a finite number >= 0, got {seconds!r}")
    return value


def check_time(value: datetime | None) -> datetime:
    """``value`` (timezone-aware) or the current time."""
    if value is None:
        return utcnow()
    if value.tzinfo is None:
        raise InvalidValueError("times must be timezone-aware (e.g. datetime.now(UTC))")
    return value


# PostgreSQL SQLSTATEs worth retrying: serialization failure, deadlock, lock not available.
_RETRY_SQLSTATES = frozenset({"40001", "40P01", "55P03"})
BUSY_WAIT_S = 10.0
"""How long an annotator's write keeps retrying a busy database before giving up."""
BUSY_TRY_MS = 2000
"""The lock wait of one try on SQLite (its own busy handler); the next try follows a backoff."""
_MAX_SLEEP_S = 0.05


def is_busy(exc: OperationalError) -> bool:
    """True when a write failed only because another transaction held the database."""
    orig = exc.orig
    if getattr(orig, "sqlstate", None) in _RETRY_SQLSTATES:
        return True
    text = str(orig).lower()
    return "database is locked" in text or "database is busy" in text


T = TypeVar("T")


def retry_busy(write: Callable[[], T], what: str = "write") -> T:
    """``write()`` retried on a busy database with jittered backoff (1 ms doubling to 50 ms)
    for at most ``BUSY_WAIT_S``; then ``DatabaseBusyError``. ``write`` opens its transaction
    with ``busy_ms=BUSY_TRY_MS``, so that on SQLite one try waits at most that long."""
    deadline = time.monotonic() + BUSY_WAIT_S
    delay = 0.001
    while True:
        try:
            return write()
        except OperationalError as exc:
            if not is_busy(exc):
                raise
            if time.monotonic() >= deadline:
                raise DatabaseBusyError(
                    f"the database stayed busy, so the {what} was not saved; try again"
                ) from exc
            time.sleep(delay * (0.5 + random.random()))
            delay = min(2 * delay, _MAX_SLEEP_S)


def is_unique_violation(exc: IntegrityError) -> bool:
    """True when an IntegrityError is a unique / primary-key violation (both backends)."""
    orig = exc.orig
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate == "23505"
    return "UNIQUE constraint failed" in str(orig)


def lock_project_annotations(conn: Connection, project_id: int) -> None:
    """Serialize annotation inserts of one project until commit (PostgreSQL; SQLite's write
    transaction already does), so ids are committed in increasing order."""
    if conn.dialect.name == "postgresql":
        conn.execute(select(func.pg_advisory_xact_lock(ANNOTATION_LOCK_NS, project_id)))


def require_user(conn: Connection, user_id: int) -> None:
    """NotFoundError unless the user exists (checked inside the caller's transaction)."""
    if conn.execute(select(User.id).where(User.id == user_id)).scalar_one_or_none() is None:
        raise NotFoundError(f"no user with id {user_id}")
