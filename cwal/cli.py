"""``python -m cwal``: the command line.

    python -m cwal train --train train.txt --model model.npz [--dev dev.txt]
    python -m cwal evaluate --model model.npz --test test.txt [--json scores.json]

Subcommands live in modules listed in ``COMMAND_MODULES``; each exposes
``add_parser(subparsers)`` that registers its parser(s) with ``set_defaults(func=run)`` where
``run(args) -> int`` is the exit status. Add a subcommand by adding its module to the list.
Errors a user can fix (a malformed corpus, a bad model file, an unreadable path) print one line
and exit with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import inspect
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwal.errors import CorpusError, CwalError
from cwal.io import read_corpus, schemes
from cwal.io.conll import parse_roles
from cwal.io.sentence import Sentence
from cwal.learners.defaults import DEFAULT_EPOCHS

COMMAND_MODULES: tuple[str, ...] = (
    "cwal.cli",
    "cwal.cli_simulate",
    "cwal.cli_backup",
    "cwal.cli_io",
)
OWN_COMMANDS = frozenset({"train", "evaluate"})  # the subcommands add_parser below registers
LEARNER_NAMES = ("arow", "cw", "pa", "perceptron", "kbest-pa", "arow-kc", "cw-kc", "c-spv", "l-spv",
                 "mec", "maxent-l1")  # fmt: skip
CHUNK_TYPES = frozenset(
    {"NP", "VP", "PP", "ADJP", "ADVP", "SBAR", "PRT", "CONJP", "INTJ", "LST", "UCP"}
)


class UsageError(CwalError):
    """A command line that cannot run (e.g. a corpus without tags for training)."""


# ----- shared helpers --------------------------------------------------------------------------
def columns_arg(text: str) -> list[str]:
    """argparse type of ``--columns``: comma-separated CoNLL roles."""
    try:
        roles = parse_roles(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return roles or []


def add_corpus_options(p: argparse.ArgumentParser) -> None:
    """``--format`` and ``--columns``, shared by every subcommand that reads a corpus."""
    p.add_argument("--format", choices=["conll", "jsonl", "text"],
                   help="corpus format (default: from the extension, else sniffed)")  # fmt: skip
    p.add_argument("--columns", type=columns_arg, metavar="ROLES",
                   help="CoNLL column roles, e.g. word,pos,chunk,tag (default: word [pos] tag)")  # fmt: skip


def read_labeled(path: str, fmt: str | None, columns: list[str] | None) -> list[Sentence]:
    """The tagged sentences of a corpus file; a file without any tags is a CorpusError."""
    sentences = list(read_corpus(path, format=fmt, columns=columns))
    labeled = [s for s in sentences if s.tags is not None]
    if not labeled:
        raise CorpusError(path, None, "no tagged sentences (a tag column or 'tags' key is needed)")
    return labeled


def compacted(sentences: list[Sentence]) -> list[Sentence]:
    """Equal copies of ``sentences`` made once the reader's temporaries are gone, every distinct
    string copied once, so that the originals and the memory pages they share with the
    reader's freed line and field strings go back to the system together (CPython returns a
    page of small objects only once all of it is free). Chunk: 37 -> 16 MiB resident for its
    8,936 sentences; peak RSS of ``cwal train`` 4 MiB less."""
    memo: dict[str, str] = {}

    def fresh(values: list[str]) -> list[str]:
        return [memo.get(v) or memo.setdefault(v, "".join((v, ""))) for v in values]

    return [
        Sentence(
            fresh(s.tokens),
            None if s.tags is None else fresh(s.tags),
            {k: None if v is None else fresh(v) for k, v in s.columns.items()},
            dict(s.meta),
            s.line,
        )
        for s in sentences
    ]


def guess_template(sentences: Sequence[Sentence]) -> tuple[str, str]:
    """(template, reason): ``chunk`` when the chunk types look like phrase types (NP, VP, PP ...),
    else ``ner``."""
    types = sorted({t for s in sentences for t in schemes.tag_types(_chunk_tags(s.tags))})
    shown = ", ".join(types[:8]) + (" ..." if len(types) > 8 else "") or "none"
    if types and set(types) <= CHUNK_TYPES and set(types) & {"NP", "VP", "PP"}:
        return "chunk", f"the tag types look like phrase chunks ({shown})"
    return "ner", f"the tag types do not look like phrase chunks ({shown})"


def _chunk_tags(tags: Sequence[str]) -> list[str]:
    return [t for t in tags if schemes.split_tag(t) is not None]


class EpochBar:
    """A one-line progress bar over epochs on stderr (and dev F1 lines on stdout)."""

    def __init__(self, epochs: int, enabled: bool = True) -> None:
        self.epochs, self.enabled, self.start = epochs, enabled, time.monotonic()
        self.last = 0

    def close(self) -> None:
        """End the bar's line when training stopped before its last epoch."""
        if self.enabled and 0 < self.last < self.epochs:
            sys.stderr.write("\n")

    def __call__(self, epoch: int, epochs: int, stats: dict[str, Any]) -> None:
        if "dev_f1" in stats:
            print(f"epoch {epoch:>3}/{epochs}  dev F1 {stats['dev_f1']:.4f}", flush=True)
        self.last = epoch
        if self.enabled:
            done = int(30 * epoch / epochs)
            sys.stderr.write(
                f"\r[{'#' * done}{'.' * (30 - done)}] epoch {epoch}/{epochs} "
                f"{time.monotonic() - self.start:6.1f}s  train errors {stats['mistakes']}   "
            )
            if epoch == epochs:
                sys.stderr.write("\n")
            sys.stderr.flush()


# ----- train and evaluate ----------------------------------------------------------------------
def run_train(args: argparse.Namespace) -> int:
    """Train a model on a tagged corpus and save it."""
    from cwal.features.encoded import hand_back_large_blocks
    from cwal.learners import default_learner, make, recommended

    hand_back_large_blocks()  # a one-shot process: freed arrays go back to the system
    _start_numba_without_scipy()
    gc.disable()  # ... that makes few reference cycles: no collector passes over its millions
    # of objects (ned: 650 passes, 0.36 s CPU on a loaded machine; peak memory the same)
    train = compacted(read_labeled(args.train, args.format, args.columns))
    dev = read_labeled(args.dev, args.format, args.columns) if args.dev else None
    template = args.features
    if template is None:
        template, why = guess_template(train)
        print(f"features: {template} ({why}; override with --features)", file=sys.stderr)
    learner = args.learner or default_learner(template)
    if args.learner is None:
        print(
            f"learner: {learner} (the dev-tuned default for {template} features)", file=sys.stderr
        )
    params = recommended(template, learner)
    if args.no_clusters:
        params.pop("clusters", None)
    if args.no_documents:
        params.pop("documents", None)
    if args.no_lexicon:
        params.pop("lexicon", None)
    model = make(learner, template=template, **params)
    unlabeled = [
        s.tokens for path in args.unlabeled or () for s in read_corpus(path, format=args.format)
    ]
    extra = {"unlabeled": unlabeled} if unlabeled else {}
    start = time.monotonic()
    if args.choose_epochs and dev is None and args.shards == 1:
        args.epochs = choose_epochs(args, learner, template, params, train, extra)
    bar = EpochBar(args.epochs, enabled=not args.quiet)
    if args.shards > 1:
        from cwal.learners.shards import fit_shards  # (loky and psutil only here)

        fit_shards(model, train, args.epochs, args.seed, args.shards, args.combine, dev, bar)
    elif dev is not None and "patience" in inspect.signature(model.fit).parameters:
        model.fit(train, epochs=args.epochs, seed=args.seed, dev=dev, progress=bar,
                  patience=args.patience, **extra)  # fmt: skip
        bar.close()
        print(f"kept epoch {model.best_epoch_} (best dev F1; stopped after epoch {bar.last})")
    else:
        model.fit(train, epochs=args.epochs, seed=args.seed, dev=dev, progress=bar, **extra)
    model.save(args.model)
    epochs = getattr(model, "best_epoch_", args.epochs)
    print(
        f"saved {args.model}: {learner} on {len(train)} sentences, {epochs} epochs, "
        f"{model.n_features_} features, {len(model.labels_)} labels, "
        f"{time.monotonic() - start:.1f}s"
    )
    return 0


def _start_numba_without_scipy() -> None:
    """Load numba's compiler context (the first compiled call) with scipy.linalg out of reach:
    numba imports ``scipy.linalg.cython_blas`` there only to learn whether helpers such as
    ``np.vdot`` may use BLAS (numba.np.arraymath's ``_HAVE_BLAS``; without, a plain loop), and
    no kernel of ``cwal train`` uses BLAS: 15 MiB resident and 0.13 s CPU less (scipy.linalg,
    numpy.f2py, charset_normalizer). Later imports of scipy work as usual (``np.dot`` in a
    kernel compiled afterwards imports it then)."""
    from cwal.features._batch import first_compiled_call

    if "scipy.linalg" in sys.modules:
        return
    sys.modules["scipy.linalg"] = None  # type: ignore[assignment]  # its import raises ImportError
    try:
        first_compiled_call()
    finally:
        if "scipy.linalg" in sys.modules and sys.modules["scipy.linalg"] is None:
            del sys.modules["scipy.linalg"]


def choose_epochs(
    args: argparse.Namespace, learner: str, template: str, params: dict,
    train: list[Sentence], extra: dict,
) -> int:  # fmt: skip
    """The epoch count (at most ``--epochs``) with the best F1 on the last 10% of the training
    data when a model is trained on the rest (stopping after ``--patience`` without a gain)."""
    from cwal.corpora import carve_dev
    from cwal.learners import make

    part, held = carve_dev(train, 0.1)
    probe = make(learner, template=template, **params)
    probe.fit(part, epochs=args.epochs, seed=args.seed, dev=held, patience=args.patience, **extra)
    best = max(1, int(probe.best_epoch_))
    print(f"epochs: {best} (best F1 on the last 10% of the training file, trained on the rest; "
          f"now retraining on all of it)", file=sys.stderr)  # fmt: skip
    return best


def run_evaluate(args: argparse.Namespace) -> int:
    """Score a saved model on a tagged corpus (conlleval chunk P/R/F1 and per-type scores)."""
    from cwal.learners import load
    from cwal.measures import chunk_f1, report_table

    model = load(args.model)
    test = read_labeled(args.test, args.format, args.columns)
    report = chunk_f1([s.tags for s in test], model.predict(test))
    print(
        f"{len(test)} sentences, {report.counts['tokens']} tokens: precision "
        f"{report.precision:.4f}  recall {report.recall:.4f}  F1 {report.f1:.4f}  "
        f"token accuracy {report.token_accuracy:.4f}"
    )
    print(report_table(report).to_string(float_format=lambda x: f"{x:.4f}"))
    if args.json:
        out = {
            "precision": report.precision,
            "recall": report.recall,
            "f1": report.f1,
            "token_accuracy": report.token_accuracy,
            "per_type": report.per_type,
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


def add_parser(subparsers: Any) -> None:
    """Register ``train`` and ``evaluate``."""
    t = subparsers.add_parser("train", help="train a sequence labeler on a tagged corpus")
    t.add_argument("--train", required=True, metavar="FILE", help="tagged training corpus")
    t.add_argument("--model", required=True, metavar="OUT", help="where to save the model")
    add_corpus_options(t)
    t.add_argument("--features", choices=["chunk", "ner"],
                   help="feature template (default: guessed from the tag set)")  # fmt: skip
    t.add_argument("--learner", choices=LEARNER_NAMES,
                   help="default: the dev-tuned one of the template (chunk: arow, ner: cw)")  # fmt: skip
    t.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS)
    t.add_argument("--dev", metavar="FILE",
                   help="tagged corpus scored after every epoch; the model of the best dev "
                        "epoch is kept and training stops after --patience epochs without a "
                        "better one (not with --shards)")  # fmt: skip
    t.add_argument("--patience", type=int, default=3, metavar="N",
                   help="with --dev: stop after N epochs without a better dev F1 (default 3)")  # fmt: skip
    t.add_argument("--choose-epochs", action="store_true",
                   help="without --dev: train on 90%% of the training file, pick the epoch "
                        "count (up to --epochs, stopping after --patience) by F1 on the last "
                        "10%%, then retrain on all of it with that count")  # fmt: skip
    t.add_argument("--unlabeled", nargs="+", metavar="FILE",
                   help="more text (any corpus format, tags ignored) to learn the word "
                        "clusters from, besides the training file's text")  # fmt: skip
    t.add_argument("--no-clusters", action="store_true",
                   help="no word-cluster features (default: learned from the text for the "
                        "chunk and ner templates, whose dev-tuned defaults use them)")  # fmt: skip
    t.add_argument("--no-documents", action="store_true",
                   help="no document features (default for the ner template: how each word "
                        "is written elsewhere in its -DOCSTART- document, else in its block "
                        "of 20 sentences)")  # fmt: skip
    t.add_argument("--no-lexicon", action="store_true",
                   help="no lexicon features (default for the ner template: the spans labeled "
                        "in the training file, matched in the text; cwal/features/lexicon.py)")  # fmt: skip
    t.add_argument("--seed", type=int, default=0, help="seed of the epoch shuffles")
    t.add_argument("--shards", type=int, default=1,
                   help="train this many copies on disjoint shards in parallel processes")  # fmt: skip
    t.add_argument("--combine", choices=["product", "kl", "average"], default="product",
                   help="how shard copies are combined (default: product)")  # fmt: skip
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.set_defaults(func=run_train)
    e = subparsers.add_parser("evaluate", help="score a model on a tagged corpus")
    e.add_argument("--model", required=True, metavar="FILE")
    e.add_argument("--test", required=True, metavar="FILE", help="tagged corpus")
    add_corpus_options(e)
    e.add_argument("--json", metavar="OUT", help="also write the scores as JSON")
    e.set_defaults(func=run_evaluate)


# ----- entry point -----------------------------------------------------------------------------
def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every registered subcommand; only this module's own (``train``,
    ``evaluate``) when ``command`` is one of them, so that training imports no other command's
    dependencies (pandas comes with ``simulate``: ~75 MB of peak memory)."""
    parser = argparse.ArgumentParser(
        prog="python -m cwal",
        description="cwal: confidence-weighted sequence labeling and active learning.",
        epilog="Run 'python -m cwal COMMAND --help' for the options of one command.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = COMMAND_MODULES[:1] if command in OWN_COMMANDS else COMMAND_MODULES
    for name in names:
        importlib.import_module(name).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; user-fixable errors print one line and return 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    if getattr(args, "epochs", 1) < 1:
        print("error: --epochs must be at least 1", file=sys.stderr)
        return 2
    if getattr(args, "patience", 1) < 1:
        print("error: --patience must be at least 1", file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except CwalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_status", 2)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
    return 2
