"""The annotation store: schema, migrations, the repository of queries, imports and exports.

Layers: ``pages`` and services call ``db.repository`` (and ``db.imports`` / ``db.exports``); only
``db`` imports SQLAlchemy. ``db.engine.open_database()`` gives the migrated engine every
repository function takes first; code outside db/ holds it as an opaque ``Database`` handle.
"""

from sqlalchemy import Engine as Database

from db.engine import database_url, make_engine, open_database

__all__ = ["Database", "database_url", "make_engine", "open_database"]
