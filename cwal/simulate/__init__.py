"""Compare query strategies on a gold corpus: the gold tags play the annotator.

``run_experiment(config, data_ref, sink_ref, workers)`` runs every (strategy, seed) cell of a
``SimConfig`` in spawned worker processes, resumably, into a ``ResultSink``; ``summarize`` turns
the curves into the comparison table, ``word_costs`` gives each strategy's words to a target F1
relative to Random's with a bootstrap interval over seeds, and ``recommend`` names the pick.
"""

from cwal.simulate.config import (
    DEFAULT_SEEDS,
    DEFAULT_STRATEGIES,
    FULL_DATA,
    MODES,
    SimConfig,
    strategies_for,
)
from cwal.simulate.data import load_files, load_task
from cwal.simulate.engine import SimData, evaluate, run_cell, run_reference
from cwal.simulate.intervals import format_costs, word_costs
from cwal.simulate.parallel import Ref, load_data, run_experiment
from cwal.simulate.sinks import JsonDirSink, MemorySink, Point, ResultSink, Saved
from cwal.simulate.summary import (
    band,
    per_seed,
    progress,
    recommend,
    summarize,
    words_to_reach,
)

__all__ = [
    "DEFAULT_SEEDS",
    "DEFAULT_STRATEGIES",
    "FULL_DATA",
    "MODES",
    "JsonDirSink",
    "MemorySink",
    "Point",
    "Ref",
    "ResultSink",
    "Saved",
    "SimConfig",
    "SimData",
    "band",
    "evaluate",
    "load_data",
    "load_files",
    "load_task",
    "per_seed",
    "progress",
    "recommend",
    "run_cell",
    "run_experiment",
    "run_reference",
    "strategies_for",
    "summarize",
    "format_costs",
    "word_costs",
    "words_to_reach",
]
