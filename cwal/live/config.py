"""The live service's knobs, read from a project's settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cwal.confidence import DEFAULT_S
from cwal.strategies import STRATEGIES as ENGINE_STRATEGIES
from cwal.strategies import is_strategy

STRATEGIES = {
    **{name: name for name in ENGINE_STRATEGIES},
    "kd_pc": "kd-pc",
    "kdpc": "kd-pc",
    "least-confidence": "kd-pc",  # the least confident token under KD-PC
    "kd_fixed": "kd-fixed",
}
SEED_STRATEGIES = ("random", "shortest")


@dataclass(frozen=True)
class LiveConfig:
    """How a project session serves and learns.

    ``strategy`` (any of ``cwal.strategies``) ranks a random sample of ``candidates`` unlabeled
    sentences, ties to the shorter one (KD-PC / KD-Fixed: least confident token first, ``k`` draws);
    ``seed_strategy`` (random or shortest) serves while nothing is labeled. A suggestion may have
    been ranked by a model at most ``max_staleness`` updates behind the live one (the ranking
    is redone in the background after every update; ``next`` waits only past that bound: 20
    labels is 2-3 s of work of 8 annotators, about one ranking on a busy machine). Every
    ``consolidation_interval`` updates a background consolidation (a retrain of
    ``consolidation_epochs`` epochs) replaces the model; with ``consolidation_shards`` > 1 it
    trains that many copies on disjoint shards in parallel processes and combines them
    (``cwal.learners.shards``).
    """

    strategy: str = "kd-pc"
    seed_strategy: str = "random"
    candidates: int = 1000
    k: int = 50
    s_pc: float = DEFAULT_S["kd-pc"]
    s_fixed: float = DEFAULT_S["kd-fixed"]
    max_staleness: int = 20
    consolidation_interval: int = 50
    consolidation_epochs: int = 5
    consolidation_shards: int = 1
    lease_ttl: float = 900.0

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES.values() and not is_strategy(self.strategy):
            raise ValueError(f"strategy {self.strategy!r}: choose one of {sorted(STRATEGIES)}")
        if self.seed_strategy not in SEED_STRATEGIES:
            raise ValueError(f"seed strategy must be one of {SEED_STRATEGIES}")
        if self.candidates < 1 or self.k < 1 or self.max_staleness < 0:
            raise ValueError("candidates and k must be >= 1, max_staleness >= 0")
        if self.consolidation_interval < 1 or self.consolidation_epochs < 1:
            raise ValueError("consolidation interval and epochs must be >= 1")
        if self.consolidation_shards < 1:
            raise ValueError("consolidation shards must be >= 1")
        if not (self.s_pc > 0 and self.s_fixed > 0 and self.lease_ttl > 0):
            raise ValueError("s values and the lease ttl must be > 0")

    @classmethod
    def from_settings(cls, settings: dict[str, Any], **overrides: Any) -> LiveConfig:
        """Top-level ``strategy``, ``consolidation_interval``, ``consolidation_epochs``,
        ``consolidation_shards``, ``lease_ttl_seconds``; ``strategy_params`` holds ``candidates``,
        ``k``, ``s``,
        ``s_fixed``, ``seed_strategy`` and ``max_staleness``."""
        p = dict(settings.get("strategy_params") or {})
        name = str(settings.get("strategy", "kd-pc")).lower()
        if name not in STRATEGIES and not is_strategy(name):
            raise ValueError(
                f"strategy {name!r} is not served live; choose one of {sorted(STRATEGIES)}"
            )
        d = cls()
        values: dict[str, Any] = {
            "strategy": STRATEGIES.get(name, name),
            "seed_strategy": p.get("seed_strategy", d.seed_strategy),
            "candidates": int(p.get("candidates", d.candidates)),
            "k": int(p.get("k", d.k)),
            "s_pc": float(p.get("s", d.s_pc)),
            "s_fixed": float(p.get("s_fixed", d.s_fixed)),
            "max_staleness": int(p.get("max_staleness", d.max_staleness)),
            "consolidation_interval": int(
                settings.get("consolidation_interval", d.consolidation_interval)
            ),
            "consolidation_epochs": int(
                settings.get("consolidation_epochs", d.consolidation_epochs)
            ),
            "consolidation_shards": int(
                settings.get("consolidation_shards", d.consolidation_shards)
            ),
            "lease_ttl": float(settings.get("lease_ttl_seconds", d.lease_ttl)),
        }
        values.update(overrides)
        return cls(**values)
