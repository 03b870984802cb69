"""The live active-learning service: UI- and database-free orchestration of one project.

``ProjectSession`` (one per project per process; ``registry`` keeps them) serves ``next`` /
``submit`` / ``skip`` / ``undo`` / ``status``. It needs a store that fulfils ``Store`` (a
``typing.Protocol``); ``db.store`` implements it over the repository.

The rooms (docs/design.md has the words): ``session`` (the service; ``registry`` keeps one per
project), ``pending`` (its requests' bookkeeping), ``suggestion`` (what ``next`` returns),
``prefill`` (which predicted spans the editor fills in); the model: ``replay`` (checkpoint + label
log), ``learner`` (the thread that catches up), ``consolidation`` (retrain, checkpoint, swap),
``recorder`` (the prequential record, the calibration map); the ranking: ``queue`` (the newest
ranking, kept fresh by the scorer thread), ``ranking`` (the candidate sample drawn and ranked),
``scoring`` (rankings and predictions off the lock), ``kd`` (row snapshots, KD confidence),
``pool`` (cached features of pool sentences); ``worker`` (background threads), ``config`` (the
knobs), ``protocol`` (what the service needs of a store).
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
