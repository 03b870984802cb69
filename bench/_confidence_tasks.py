"""bench/confidence.py's data and models: the np / esp / ned tasks (train minus its last 10%
as dev, test), the learners trained on them (cached between runs) and python-crfsuite's peer."""

from __future__ import annotations

import time
import zlib
from pathlib import Path

import numpy as np

from cwal.errors import ModelFileError
from cwal.io.conll import read_conll
from cwal.io.schemes import task_view
from cwal.io.sentence import Sentence
from cwal.learners import load, make, recommended

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
TASKS = {  # train, test, feature template, chunk types kept (None: all)
    "np": ("conll2000/train.txt", "conll2000/test.txt", "chunk", {"NP"}),
    "esp": ("conll2002/esp.train", "conll2002/esp.testb", "ner", None),
    "ned": ("conll2002/ned.train", "conll2002/ned.testb", "ner", None),
}
# CW and PA as the paper trains them (class defaults); the other learners with their dev-tuned
# defaults (cwal.learners.defaults). A learner without covariance gets every method but KD-PC.
LEARNERS = ["cw", "pa", "c-spv", "l-spv", "mec", "maxent-l1"]
PAPER_LEARNERS = ("cw", "pa")


def load_task(name: str, quick: bool):
    """``(train, dev, test, template)``: dev is the last 10% of the train file.

    A contiguous block keeps whole documents out of training, as the test files do; sentences
    drawn at random would share articles with training sentences, so the model is surer on them
    than on test, and settings tuned there fit test less well."""
    train_path, test_path, template, keep = TASKS[name]

    def read(rel: str) -> list[Sentence]:
        out = []
        for s in read_conll(DATA / rel):
            tags = task_view(s.tags, keep) if keep else s.tags
            out.append(Sentence(s.tokens, tags, s.columns))
        return out

    full, test = read(train_path), read(test_path)
    cut = len(full) - len(full) // 10
    train, dev = full[:cut], full[cut:]
    if quick:
        train, dev, test = train[:2000], dev[:300], test[:600]
    return train, dev, test, template


def trained(task: str, algo: str, train, template: str, epochs: int, cache: Path):
    """A learner fitted on ``train`` (cached as .npz between runs, keyed by its settings, so a
    changed default or feature set trains anew; an older model format is retrained too)."""
    params = {} if algo in PAPER_LEARNERS else recommended(template, algo)
    key = zlib.crc32(f"{template}|{sorted(params.items())}".encode())
    path = (
        cache / f"{task}-{algo}-{epochs}-{len(train)}-head-{key:08x}.npz"
    )  # head: dev is the tail
    if path.exists():
        try:
            return load(path), 0.0
        except ModelFileError:  # written by an older model format: train again
            path.unlink()
    start = time.perf_counter()
    model = make(algo, template=template, **params).fit(train, epochs=epochs, seed=0)
    seconds = time.perf_counter() - start
    model.save(path)
    return model, seconds


def crf_peer(task: str, train, test, template: str, cache: Path, quick: bool):
    """python-crfsuite on the same sentences and feature strings: predicted labels and the
    marginal probability of each predicted label, plus seconds to tag and compute marginals."""
    import pycrfsuite

    from cwal.features import FeatureIndex

    index = FeatureIndex(template)
    probe = "|".join("/".join(f) for f in index.token_features(train[0]))  # templates change
    path = cache / f"{task}-crf-{len(train)}-head-{zlib.crc32(probe.encode()):08x}.crfsuite"
    if not path.exists():
        trainer = pycrfsuite.Trainer(verbose=False)
        for s in train:
            trainer.append(index.token_features(s), s.tags)
        trainer.set_params({"c1": 0.0, "c2": 1.0, "max_iterations": 50 if quick else 200})
        trainer.train(str(path))
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    start = time.perf_counter()
    labels, conf = [], []
    for s in test:
        tagger.set(index.token_features(s))
        y = tagger.tag()
        labels.extend(y)
        conf.extend(tagger.marginal(t, i) for i, t in enumerate(y))
    return np.array(labels), np.clip(np.array(conf), 0.0, 1.0), time.perf_counter() - start
