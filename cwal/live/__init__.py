"""The live active-learning service: UI- and database-free orchestration of one project.

``ProjectSession`` (one per project per process; ``registry`` keeps them) serves ``next`` /
``submit`` / ``skip`` / ``undo`` / ``status``. It needs a store that fulfils ``Store`` (a
``typing.Protocol``); ``db.store`` implements it over the repository.
"""

from cwal.live.config import LiveConfig
from cwal.live.protocol import CheckpointMeta, LogRow, PoolSentence, PredictionRow, Store
from cwal.live.registry import close_all, drop_session, get_session, sessions
from cwal.live.session import ProjectSession, Suggestion

__all__ = [
    "CheckpointMeta",
    "LiveConfig",
    "LogRow",
    "PoolSentence",
    "PredictionRow",
    "ProjectSession",
    "Store",
    "Suggestion",
    "close_all",
    "drop_session",
    "get_session",
    "sessions",
]
