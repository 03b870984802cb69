"""What a simulation runs: the protocol's numbers, the learner, the strategies and the seeds.

Defaults follow mejer-crammer-2010 §6 (docs/algorithms.md §4): 50 random labeled sentences to
start; each step scores 1,000 random unlabeled sentences and labels the best 10; an evaluation on
the held-out split every 100 labeled sentences; stop at the budget (labeled sentences, the initial
50 included). ``mode`` says how the learner follows the labels: ``online`` applies one online
update per newly labeled sentence; ``retrain`` (the default) also refits a fresh learner on every
label so far (``epochs`` passes) at each evaluation point. The paper's curves correspond to
retraining ("on each iteration, the overall labeled data at this point is used to build a model";
it rebuilds every 10 sentences, we every ``eval_every``), and so does the live service, whose
consolidation refits the model every ``consolidation_interval`` annotations. ``budget_words``
(optional) stops each run at a number of labeled words instead: what a lead pays for, and the
fair budget for strategies that pick sentences of different lengths (a per-word strategy that
picks short sentences covers fewer words in the same number of sentences).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from cwal.learners import LEARNERS
from cwal.strategies import STRATEGIES, base_name, is_strategy

DEFAULT_STRATEGIES = (
    "kd-pc",
    "kd-fixed",
    "errors-per-word",
    "min-margin",
    "min-conf-margin",
    "max-entropy",
    "random",
)
DEFAULT_SEEDS = (0, 1, 2, 3, 4)
"""Five seeds: the words to reach a target F1 vary by thousands between seeds, and three gave
intervals wider than the differences between strategies."""
FULL_DATA = "full-data"
"""The pseudo-strategy of the reference cells: the learner trained on the whole pool."""
MODES = ("retrain", "online")
# Relative cost of one selection step (longest cells are scheduled first).
COST = {"kd-pc": 4.0, "kd-fixed": 3.0, "max-entropy": 3.0, "mean-entropy": 3.0, FULL_DATA: 5.0,
        "errors-per-word": 3.5, "dense-errors-per-word": 3.5, "least-confident-per-word": 3.5,
        "total-entropy": 3.5}  # fmt: skip


def strategies_for(learner: str) -> tuple[str, ...]:
    """The default strategies a learner supports (KD-PC needs a covariance: CW, AROW)."""
    cls = LEARNERS.get(learner)
    return tuple(s for s in DEFAULT_STRATEGIES if s != "kd-pc" or (cls and cls.has_covariance))


@dataclass(frozen=True)
class SimConfig:
    """The settings of one strategy comparison (JSON-able through ``to_dict`` / ``from_dict``)."""

    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    initial: int = 50
    batch: int = 10
    candidates: int = 1000
    eval_every: int = 100
    budget: int = 2000
    budget_words: int | None = None
    mode: str = "retrain"
    epochs: int = 5
    learner: str = "cw"
    learner_params: dict[str, Any] = field(default_factory=dict)
    template: str | None = None
    strategy_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    full_data: bool = True

    def __post_init__(self) -> None:
        unknown = [s for s in self.strategies if not is_strategy(s)]
        if unknown or not self.strategies:
            raise ValueError(f"unknown strategies {unknown}; choose from {sorted(STRATEGIES)}")
        if len(set(self.strategies)) != len(self.strategies):
            raise ValueError("each strategy may be listed once")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError("give at least one seed, each once")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        for name in ("initial", "batch", "candidates", "eval_every", "epochs"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.budget_words is not None and int(self.budget_words) < 1:
            raise ValueError("budget_words must be at least 1")
        if self.budget < self.initial:
            raise ValueError(f"the budget ({self.budget}) is below the initial {self.initial}")
        if self.learner not in LEARNERS:
            raise ValueError(f"unknown learner {self.learner!r}; choose from {sorted(LEARNERS)}")
        if "kd-pc" in map(base_name, self.strategies) and not LEARNERS[self.learner].has_covariance:
            raise ValueError(f"kd-pc needs a learner with a covariance, not {self.learner!r}")
        if self.template not in (None, "chunk", "ner"):
            raise ValueError(f"template must be chunk or ner, not {self.template!r}")

    def cells(self) -> list[tuple[str, int]]:
        """Every (strategy, seed) to run, reference cells included, most expensive first."""
        names = list(self.strategies) + ([FULL_DATA] if self.full_data else [])
        cells = [(name, seed) for seed in self.seeds for name in names]
        return sorted(cells, key=lambda c: -COST.get(base_name(c[0]), 1.0))

    def params_for(self, strategy: str) -> dict[str, Any]:
        """Extra parameters of one strategy (``candidates`` is set by the config)."""
        return dict(self.strategy_params.get(strategy, {}))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["strategies"], out["seeds"] = list(self.strategies), list(self.seeds)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SimConfig:
        known = {f.name for f in fields(cls)}
        extra = sorted(set(data) - known)
        if extra:
            raise ValueError(f"unknown simulation settings {extra}")
        values = dict(data)
        for key in ("strategies", "seeds"):
            if key in values:
                values[key] = tuple(values[key])
        return cls(**values)
