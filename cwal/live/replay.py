"""The live model as a function of the stored label log: a base checkpoint plus replay.

The model a process serves is *base + tail*: the newest valid checkpoint (or an empty learner),
then every submission after it applied online in annotation-id order. A checkpoint is *valid*
when no undo retracts a submission it covers after it was written (then it would still reflect
the retracted label). ``version`` counts the model-changing rows (submissions, and undos of
submissions) up to the watermark, so it is the same number in every process and after a restart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from cwal.errors import ModelFileError
from cwal.features.clusters import WordClusters
from cwal.learners import SequenceLearner, make
from cwal.live.protocol import CheckpointMeta, LogRow, Store


@dataclass(frozen=True)
class LearnerSpec:
    """How a project builds a fresh learner (from its settings, and the word clusters learned
    from its pool, which every fresh learner's features include: db.repository.clusters)."""

    name: str = "arow"
    params: dict[str, Any] = field(default_factory=dict)
    template: str = "chunk"
    labels: tuple[str, ...] = ()
    clusters: WordClusters | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_settings(
        cls, settings: dict[str, Any], clusters: WordClusters | None = None
    ) -> LearnerSpec:
        return cls(
            settings.get("learner", "arow"),
            dict(settings.get("learner_params") or {}),
            settings.get("feature_template", "chunk"),
            tuple(settings.get("tagset") or ()),
            clusters,
        )

    def fresh(self) -> SequenceLearner:
        model = make(self.name, labels=list(self.labels), template=self.template, **self.params)
        if self.clusters is not None:
            model.features_.set_clusters(self.clusters)
        return model

    def check(self, model: SequenceLearner, what: str) -> None:
        """ModelFileError when ``model`` (a checkpoint) has other word clusters than this spec
        (written before the project's ``pool_clusters`` setting changed): the log rebuilds it."""
        if not same_clusters(getattr(model.features_, "clusters", None), self.clusters):
            raise ModelFileError(f"{what} has other word clusters than the project")


def same_clusters(a: WordClusters | None, b: WordClusters | None) -> bool:
    """Whether two cluster maps give every word the same features."""
    if a is None or b is None:
        return a is b
    return a is b or (a.sizes == b.sizes and a.words == b.words and (a.ids == b.ids).all())


def valid_base(
    checkpoints: Iterable[CheckpointMeta], retractions: Iterable[tuple[int, int]]
) -> CheckpointMeta | None:
    """The newest checkpoint that no later undo invalidates (None: start from an empty model)."""
    pairs = list(retractions)
    for cp in sorted(checkpoints, key=lambda c: c.id, reverse=True):
        x = cp.last_annotation_id
        if not any(t <= x < u for t, u in pairs):
            return cp
    return None


@dataclass
class LiveModel:
    """A learner plus the log position it reflects. Not thread-safe: the session locks it."""

    model: SequenceLearner
    base: CheckpointMeta | None
    watermark: int
    version: int
    labeled: dict[int, set[int]]  # sentence id -> its live (non-retracted) submission ids
    tail: list[LogRow]  # rows after the base, in id order (replayed on an undo)
    s_pc: float
    s_fixed: float

    @property
    def base_last(self) -> int:
        return self.base.last_annotation_id if self.base is not None else 0

    @property
    def n_labeled(self) -> int:
        return sum(1 for ids in self.labeled.values() if ids)

    def retracted_in_tail(self) -> set[int]:
        return {r.supersedes_id for r in self.tail if r.status == "undone" and r.supersedes_id}

    def submission_ids(self) -> set[int]:
        return {r.id for r in self.tail if r.status == "submitted"}


def counts_as_update(row: LogRow, submissions: set[int]) -> bool:
    """Rows that change the model: a submission, or the undo of one."""
    return row.status == "submitted" or (
        row.status == "undone" and row.supersedes_id in submissions
    )


def learn(model: SequenceLearner, row: LogRow) -> None:
    """One online update from a submitted row."""
    model.learn_one(row.tokens, row.tags or [], **row.columns)


def build(
    store: Store,
    project_id: int,
    spec: LearnerSpec,
    defaults: tuple[float, float],
    *,
    base: CheckpointMeta | None = None,
    state: bytes | SequenceLearner | None = None,
    tail: list[LogRow] | None = None,
    labeled: dict[int, set[int]] | None = None,
) -> LiveModel:
    """The live model from the store: ``base`` (a checkpoint) with its ``state`` (bytes, or the
    model already loaded from them), or an empty learner when ``base`` is None; then every later
    row replayed in id order. ``tail`` saves re-reading those rows; ``labeled`` (the labeled
    sentences as of the end of ``tail``) saves reading the labels the base covers."""
    if base is not None and state is not None:
        if isinstance(state, SequenceLearner):
            model = state
        else:
            model = SequenceLearner.from_bytes(state, f"checkpoint {base.id}")
        spec.check(model, f"checkpoint {base.id}")
        info = base.info
        version = int(info.get("version", 0))
        s_pc = float(info.get("s_pc", defaults[0]))
        s_fixed = float(info.get("s_fixed", defaults[1]))
        x = base.last_annotation_id
        if labeled is None:
            labeled = {}
            for annotation_id, sentence_id in store.current_labels(project_id, x):
                labeled.setdefault(sentence_id, set()).add(annotation_id)
    else:
        base, model, version, x = None, spec.fresh(), 0, 0
        labeled = {} if labeled is None else labeled
        s_pc, s_fixed = defaults
    live = LiveModel(model, base, x, version, labeled, [], s_pc, s_fixed)
    rows = tail if tail is not None else store.log_after(project_id, x)
    replay(live, [r for r in rows if r.id > x])
    return live


def replay(
    live: LiveModel, rows: list[LogRow], before_learn: Callable[[LogRow], None] | None = None
) -> None:
    """Apply rows (all after the watermark, id order) knowing them all in advance: a submission
    that a later row in ``rows`` (or in the tail) retracts is never learned. ``before_learn(row)``
    runs just before each update (the prequential snapshot)."""
    retracted = live.retracted_in_tail() | {
        r.supersedes_id for r in rows if r.status == "undone" and r.supersedes_id
    }
    subs = live.submission_ids()
    for row in rows:
        if row.status == "submitted":
            subs.add(row.id)
            if row.id not in retracted:
                if before_learn is not None:
                    before_learn(row)
                learn(live.model, row)
                live.labeled.setdefault(row.sentence_id, set()).add(row.id)
        elif row.status == "undone" and row.supersedes_id in subs:
            ids = live.labeled.get(row.sentence_id)
            if ids is not None:
                ids.discard(row.supersedes_id)
        if counts_as_update(row, subs):
            live.version += 1
        live.watermark = row.id
        live.tail.append(row)
