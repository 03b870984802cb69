"""Alembic environment: runs migrations on the connection the app hands over, or on the URL.

``db.engine.upgrade`` passes a live connection in ``config.attributes["connection"]``; the alembic
command line (``alembic -c db/alembic.ini ...``) falls back to ``CWAL_DATABASE_URL``.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text

from db.engine import make_engine, write_transaction
from db.models import Base, JSONText, UTCDateTime

# Serializes concurrent upgrades on PostgreSQL (two app processes starting at once).
_MIGRATION_LOCK_KEY = 0x6377616C


def _render_item(type_: str, obj: object, autogen_context: object) -> str | bool:
    """Render the models' column types as plain SQLAlchemy types, so migrations never import
    ``db.models`` (a later change to the models must not alter an old migration)."""
    if type_ == "type" and isinstance(obj, JSONText):
        return "sa.Text()"
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=_render_item,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY}
            )
        context.run_migrations()


def _run_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(context.config.get_main_option("sqlalchemy.url") or None)
    try:
        with write_transaction(engine) as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("cwal migrations run online only: db.engine.upgrade(engine)")
_run_online()
