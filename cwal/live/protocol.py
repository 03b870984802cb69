"""What the live service needs of a store, stated as a ``typing.Protocol`` that ``db/`` fulfils.

The engine never imports a database library: ``db/store.py`` implements :class:`Store` over the
repository. Records cross the boundary as small frozen dataclasses.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cwal.features.clusters import WordClusters


@dataclass(frozen=True)
class LogRow:
    """One row of the append-only label log (``status``: submitted, skipped or undone).

    ``tokens`` and ``columns`` are the sentence's, so a learner can replay the row; an undone
    row's ``supersedes_id`` is the row it retracts.
    """

    id: int
    sentence_id: int
    user_id: int
    status: str
    tags: list[str] | None
    supersedes_id: int | None
    tokens: list[str] = field(default_factory=list)
    columns: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class PoolSentence:
    id: int
    tokens: list[str]
    columns: dict[str, list[str]]


@dataclass(frozen=True)
class CheckpointMeta:
    """A stored checkpoint without its bytes: it reflects the label log up to ``last_annotation_id``."""

    id: int
    last_annotation_id: int
    info: dict[str, Any]


@dataclass(frozen=True)
class PredictionRow:
    """What a model predicted for a sentence (tags, per-token confidence) and with which version."""

    sentence_id: int
    model_version: int
    tags: list[str]
    confidences: list[float]
    strategy: str
    score: float | None = None
    user_id: int | None = None
    keys: list[float] | None = None  # each token's Delta margin: the prequential record


class Store(Protocol):
    """The store operations a :class:`~cwal.live.ProjectSession` calls (all commit on return)."""

    def settings(self, project_id: int) -> dict[str, Any]:
        """The project's settings (learner, strategy, consolidation interval, lease ttl, ...)."""
        ...

    def clusters(self, project_id: int, settings: dict[str, Any]) -> WordClusters | None:
        """The word clusters of the project's pool when its ``settings`` use them (every fresh
        learner's features include them); None otherwise."""
        ...

    def log_after(self, project_id: int, after_id: int) -> list[LogRow]:
        """Every label-log row with id > ``after_id``, in id order (ids become visible in order)."""
        ...

    def current_annotations(self, project_id: int, upto_id: int) -> list[LogRow]:
        """Each sentence's newest submitted row with id <= ``upto_id`` that no undo row with
        id <= ``upto_id`` retracts, in id order (the training set as of ``upto_id``)."""
        ...

    def current_labels(self, project_id: int, upto_id: int) -> list[tuple[int, int]]:
        """``(annotation id, sentence id)`` of the rows ``current_annotations`` would return."""
        ...

    def retractions(self, project_id: int) -> list[tuple[int, int]]:
        """``(retracted submission id, undo row id)`` of every undone submission."""
        ...

    def pool_ids(self, project_id: int) -> list[int]:
        """Ids of the project's pool sentences (labeled or not), ascending."""
        ...

    def pool_sentences(self, ids: Sequence[int]) -> list[PoolSentence]:
        """Sentences by id, in the order given."""
        ...

    def checkpoints(self, project_id: int) -> list[CheckpointMeta]:
        """The project's checkpoints, oldest first."""
        ...

    def checkpoint_state(self, checkpoint_id: int) -> bytes:
        """A checkpoint's serialized model (the learner's ``to_bytes``)."""
        ...

    def save_checkpoint(
        self, project_id: int, state: bytes, last_annotation_id: int, info: dict[str, Any]
    ) -> int: ...

    def submit(
        self, sentence_id: int, annotator_id: int, tags: Sequence[str], seconds: float | None
    ) -> int:
        """Store a submission (and release the annotator's lease); its id once committed."""
        ...

    def skip(self, sentence_id: int, annotator_id: int) -> int:
        """Record a skip and release the lease; the skip's id."""
        ...

    def undo(self, project_id: int, annotator_id: int, lease_ttl: float) -> tuple[int, int] | None:
        """Retract the annotator's newest submission or skip and lease its sentence back:
        ``(undo row id, sentence id)``, or None when there is nothing to undo."""
        ...

    def lease(
        self,
        project_id: int,
        annotator_id: int,
        ranked_ids: Iterable[int] | None,
        ttl: float,
        n: int,
    ) -> list[int]:
        """Lease up to ``n`` sentences to the annotator atomically: the live leases they already
        hold first (renewed), then the first of ``ranked_ids`` (None: any, lowest id first) that
        are unlabeled, not skipped by them and not leased to anyone else. Empty when none is."""
        ...

    def log_predictions(self, project_id: int, rows: Sequence[PredictionRow]) -> None: ...

    def calibration_keys(self, project_id: int) -> list[tuple[list[float], list[bool], list[str]]]:
        """The prequential record, oldest first: per logged prediction with keys of a sentence
        that has a current label, its tokens' keys (Delta), whether each predicted tag equals
        that label, and the predicted tags."""
        ...
