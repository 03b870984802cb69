"""The research tasks by name, read from a data folder: ``np`` and ``chunk`` (CoNLL-2000),
``esp`` and ``ned`` (CoNLL-2002 NER: train on ``*.train``, test on ``*.testb``).

The folder is an explicit argument, else ``CWAL_DATA_DIR``, else ``../shared/data`` beside the
repository. Tuning data is carved from the training file (``carve_dev``), never from the test file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cwal.errors import CorpusError
from cwal.io import read_conll, schemes
from cwal.io.sentence import Sentence

_REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Task:
    """One benchmark task: files relative to the data folder, the feature template, and the
    chunk types kept (None: all)."""

    name: str
    train: str
    test: str
    template: str
    keep: frozenset[str] | None = None


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("np", "conll2000/train.txt", "conll2000/test.txt", "chunk", frozenset({"NP"})),
        Task("chunk", "conll2000/train.txt", "conll2000/test.txt", "chunk"),
        Task("esp", "conll2002/esp.train", "conll2002/esp.testb", "ner"),
        Task("ned", "conll2002/ned.train", "conll2002/ned.testb", "ner"),
    )
}


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The data folder: ``path``, else ``CWAL_DATA_DIR``, else ``../shared/data`` by the repo."""
    if path is not None:
        return Path(path)
    return Path(os.environ.get("CWAL_DATA_DIR", _REPO.parent / "shared" / "data"))


def get_task(name: str) -> Task:
    """The task of that name (``np``, ``chunk``, ``esp``, ``ned``)."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}") from None


def load(task: str, split: str = "train", path: str | os.PathLike | None = None) -> list[Sentence]:
    """The sentences of ``task``'s ``train`` or ``test`` file (NP-only view for ``np``)."""
    t = get_task(task)
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', not {split!r}")
    file = data_dir(path) / (t.train if split == "train" else t.test)
    if not file.exists():
        raise CorpusError(
            str(file), None, "corpus file not found (set CWAL_DATA_DIR to the data folder)"
        )
    sentences = list(read_conll(file))
    if t.keep is not None:
        for s in sentences:
            s.tags = schemes.task_view(s.tags, t.keep)
    return sentences


def carve_dev(
    sentences: Sequence[Sentence], fraction: float = 0.1
) -> tuple[list[Sentence], list[Sentence]]:
    """(train, dev): the last ``fraction`` of a training set held out for tuning."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must lie in (0, 1), not {fraction}")
    cut = len(sentences) - max(1, int(round(len(sentences) * fraction)))
    return list(sentences[:cut]), list(sentences[cut:])
