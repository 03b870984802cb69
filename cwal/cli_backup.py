"""``python -m cwal backup / restore / check``: the store's backups and integrity.

    python -m cwal backup [--out FILE]      # online copy of the SQLite store (the app may run)
    python -m cwal restore BACKUP           # replace the store by a checked backup (app stopped)
    python -m cwal check                    # PRAGMA quick_check of the store

The database is ``--db URL`` or ``CWAL_DATABASE_URL`` (default: ``CWAL_HOME/cwal.sqlite3``).
The store is imported only when one of these runs (the engine does not need it).
"""

from __future__ import annotations

import argparse
from typing import Any


def run_backup(args: argparse.Namespace) -> int:
    from db import backup  # only when a store command runs
    from db.engine import make_engine

    engine = make_engine(args.db)
    try:
        path = backup.backup(engine, args.out)
    finally:
        engine.dispose()
    print(f"backup written to {path}")
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from db import backup

    kept = backup.restore(args.backup, args.db)
    print(
        f"restored from {args.backup}" + (f"; the replaced file is kept as {kept}" if kept else "")
    )
    return 0


def run_check(args: argparse.Namespace) -> int:
    from db import backup

    print(backup.check(args.db))
    return 0


def add_parser(subparsers: Any) -> None:
    """Register ``backup``, ``restore`` and ``check``."""
    db_help = "database URL (default: CWAL_DATABASE_URL, else CWAL_HOME/cwal.sqlite3)"
    b = subparsers.add_parser(
        "backup",
        help="copy the SQLite store while the app runs",
        description="Take an online, checked copy of the SQLite store (SQLite's backup API: "
        "annotators keep working). For PostgreSQL the error names the pg_dump command.",
    )
    b.add_argument("--out", metavar="FILE",
                   help="backup file (default: CWAL_HOME/backups/cwal-DATE-TIME.sqlite3)")  # fmt: skip
    b.add_argument("--db", metavar="URL", help=db_help)
    b.set_defaults(func=run_backup)
    r = subparsers.add_parser(
        "restore",
        help="replace the SQLite store by a backup (stop the app first)",
        description="Check BACKUP, then make it the store. The replaced database file is kept "
        "beside it as NAME.replaced-DATE-TIME. Stop the app first.",
    )
    r.add_argument("backup", metavar="BACKUP", help="a file written by 'python -m cwal backup'")
    r.add_argument("--db", metavar="URL", help=db_help)
    r.set_defaults(func=run_restore)
    c = subparsers.add_parser(
        "check",
        help="check the SQLite store for damage",
        description="Run PRAGMA quick_check on the SQLite store; exit status 2 when damaged.",
    )
    c.add_argument("--db", metavar="URL", help=db_help)
    c.set_defaults(func=run_check)
