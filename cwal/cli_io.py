"""``python -m cwal import / export / predict``: a corpus's whole life from the command line.

    python -m cwal import --project news --input articles/ --create --types PER,LOC,ORG
    python -m cwal export --project news --format prodigy --output labels.jsonl
    python -m cwal predict --model model.npz --input new.txt --output new.conllu --format conllu

The database is ``--db URL`` or ``CWAL_DATABASE_URL`` (default: ``CWAL_HOME/cwal.sqlite3``); the
store is imported only when ``import`` or ``export`` runs. Exit status 0 ok, 1 failure (e.g. a
refused file: nothing was imported), 2 bad usage (argparse's, or a missing project or model).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from cwal.errors import CorpusError, CwalError
from cwal.io.corpus import FORMAT_NAMES, FORMATS, WRITE_FORMATS, resolve_format

DB_HELP = "database URL (default: CWAL_DATABASE_URL, else CWAL_HOME/cwal.sqlite3)"


class Failure(CwalError):
    """The command ran but could not do its job (exit status 1)."""

    exit_status = 1


class Bar:
    """A one-line progress bar on stderr, shown only once a job has run for a second."""

    def __init__(self, what: str, total: int | None = None, enabled: bool = True) -> None:
        self.what, self.total, self.enabled = what, total, enabled
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, done: int, fraction: float | None = None) -> None:
        elapsed = time.monotonic() - self.start
        if not self.enabled or elapsed < 1.0:
            return
        if fraction is None and self.total:
            fraction = done / self.total
        bar = ""
        if fraction is not None:
            full = int(30 * min(1.0, fraction))
            bar = f"[{'#' * full}{'.' * (30 - full)}] "
        sys.stderr.write(f"\r{bar}{done:,} {self.what}  {elapsed:6.1f}s   ")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _db(args: argparse.Namespace) -> Any:
    from db.engine import open_database  # only when a store command runs

    return open_database(args.db)


def _project(engine: Any, name: str) -> Any:
    from db import repository as repo

    found = repo.find_project(engine, name)
    if found is None:
        raise CwalError(f"no project named {name!r} (create it with --create, or in the app)")
    return found


# ----- import ----------------------------------------------------------------------------------
def run_import(args: argparse.Namespace) -> int:
    """Import files (any format; a folder or zip of them) into a project, all or nothing."""
    from cwal.io.bundle import expand
    from db import imports
    from db import repository as repo

    sources = expand(args.input)
    engine = _db(args)
    try:
        project = repo.find_project(engine, args.project)
        if project is None and args.create:
            settings = _new_settings(args, sources)
            repo.create_project(engine, args.project, settings)
            print(f"created project {args.project!r}: {', '.join(settings['tagset'][1:6])} ...")
        project = _project(engine, args.project)
        options: dict[str, Any] = {"format": args.format, "split": args.split}
        if args.columns:
            options["columns"] = args.columns
        if args.tags_as == "annotations":
            user = repo.find_user(engine, args.annotator or "")
            if user is None:
                raise CwalError(f"--tags-as annotations needs --annotator NAME of an existing user "
                                f"(not {args.annotator!r})")  # fmt: skip
            options.update(tags_as="annotations", annotator_id=user.id)
        bar = Bar("sentences", enabled=not args.quiet)
        options["progress"] = lambda p: bar(p.sentences, p.fraction)
        try:
            results = imports.add_sources(engine, project.id, sources, **options)
        except CorpusError as exc:
            raise Failure(f"{exc} (nothing was imported)") from None
        finally:
            bar.close()
    finally:
        engine.dispose()
    for r in results:
        print(f"{r.source_name}: {r.n_sentences:,} sentences, {r.n_tokens:,} tokens ({r.format}, "
              f"{r.split}{', ' + str(r.n_annotations) + ' labels' if r.n_annotations else ''})")  # fmt: skip
    return 0


def _new_settings(args: argparse.Namespace, sources: list) -> dict[str, Any]:
    """Settings of a project created by ``--create``: the tag set from ``--types`` or from the
    tags the files hold."""
    from cwal.io import read_corpus_bytes, schemes

    types = [t for t in (args.types or "").split(",") if t]
    if not types:
        for src in sources:
            with src.open() as handle:
                data = handle.read()
            fmt = resolve_format(src, args.format)
            for sent in read_corpus_bytes(data, src.name, fmt):
                for tag in sent.tags or ():
                    typ = (schemes.split_tag(tag) or ("O", ""))[1]
                    if typ and typ not in types:
                        types.append(typ)
    if not types:
        raise CwalError(
            "--create needs --types TYPE,TYPE (the files hold no tags to take them from)"
        )
    prefixes = sorted(schemes.get(args.scheme).alphabet)
    tagset = ["O"] + [f"{p}-{t}" for t in types for p in prefixes]
    return {"tagset": tagset, "scheme": args.scheme, "feature_template": args.features}


# ----- export ----------------------------------------------------------------------------------
def run_export(args: argparse.Namespace) -> int:
    """Write a project's labels (or history, gold tags, model predictions) in any format."""
    from db import exports

    engine = _db(args)
    bar = Bar("sentences", enabled=not args.quiet)
    try:
        project = _project(engine, args.project)
        n = exports.export_annotations(
            engine,
            project.id,
            args.output,
            args.format,
            what=args.what,
            status=None if args.status == "any" else args.status,
            progress=bar,
        )
    except ValueError as exc:
        raise Failure(str(exc)) from None
    finally:
        bar.close()
        engine.dispose()
    print(f"wrote {n:,} sentences ({args.what}) to {args.output} as {args.format}")
    return 0


# ----- predict ---------------------------------------------------------------------------------
def run_predict(args: argparse.Namespace) -> int:
    """Tag raw text or a corpus in any format with a model file or a project's live model."""
    from cwal.io import read_corpus
    from cwal.io.bundle import expand
    from cwal.io.corpus import write_corpus
    from cwal.predict import predict

    sources = expand(args.input)
    model, method, s, k = _model(args)
    fmts = [resolve_format(src, args.input_format) for src in sources]
    sentences = (sent for src, f in zip(sources, fmts, strict=True) for sent in read_corpus(src, f))
    bar = Bar("sentences", enabled=not args.quiet)
    try:
        tagged = predict(model, sentences, method=args.confidence or method, s=s, k=k,
                         confidence=args.confidence != "none", progress=bar)  # fmt: skip
        n = write_corpus(tagged, args.output, args.format, scheme=args.scheme)
    except ValueError as exc:  # a refused input line, or a model without labels
        raise Failure(str(exc)) from None
    finally:
        bar.close()
    print(f"tagged {n:,} sentences into {args.output} ({args.format})")
    return 0


def _model(args: argparse.Namespace) -> tuple[Any, str | None, float | None, int | None]:
    if args.model:
        from cwal.learners import load

        return load(args.model), None, None, None
    from db.store import standalone_model

    engine = _db(args)
    try:
        project = _project(engine, args.project)
        state = standalone_model(engine, project.id)
    finally:
        engine.dispose()
    return state.model, state.method, state.s, state.k


# ----- parsers ---------------------------------------------------------------------------------
def _formats(choices: tuple[str, ...]) -> str:
    return "; ".join(f"{f} ({FORMAT_NAMES.get(f, f)})" for f in choices)


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", required=True, metavar="PATH",
                   help="file to write (brat: a folder or a .zip)")  # fmt: skip
    p.add_argument("--format", choices=WRITE_FORMATS, default="conll",
                   help="output format (default conll); " + _formats(WRITE_FORMATS))  # fmt: skip


def _store_options(p: argparse.ArgumentParser, note: str = "") -> None:
    p.add_argument("--db", metavar="URL", help=DB_HELP + note)
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def add_parser(subparsers: Any) -> None:
    """Register ``import``, ``export`` and ``predict``."""
    fmt = argparse.RawDescriptionHelpFormatter
    i = subparsers.add_parser(
        "import", help="import files into a project (any format, a folder or a zip)",
        formatter_class=fmt,
        description="Import files into a project, all or nothing: a refused file (its line and "
        "problem printed) leaves the project unchanged.\n\nexample:\n  python -m cwal import "
        "--project news --input articles/ --create --types PER,LOC,ORG",
    )  # fmt: skip
    i.add_argument("--project", required=True, metavar="NAME", help="project name")
    i.add_argument("--input", required=True, metavar="PATH", help="a file, a folder or a .zip")
    i.add_argument("--format", choices=FORMATS, help="input format (default: from the file); "
                   + _formats(FORMATS))  # fmt: skip
    i.add_argument("--columns", metavar="ROLES", help="CoNLL column roles, e.g. word,pos,tag")
    i.add_argument("--split", choices=["pool", "eval"], default="pool",
                   help="pool: to annotate (default); eval: gold sentences to score the model")  # fmt: skip
    i.add_argument("--tags-as", choices=["gold", "annotations"], default="gold",
                   help="the files' tags are gold (default) or labels already made by --annotator")  # fmt: skip
    i.add_argument("--annotator", metavar="USER", help="whose labels the files' tags are")
    i.add_argument("--create", action="store_true", help="create the project if it is missing")
    i.add_argument("--types", metavar="T1,T2", help="entity or chunk types of a new project "
                   "(default: those the files' tags use)")  # fmt: skip
    i.add_argument("--scheme", default="IOB2", help="tag scheme of a new project (default IOB2)")
    i.add_argument("--features", choices=["ner", "chunk"], default="ner",
                   help="feature template of a new project (default ner)")  # fmt: skip
    _store_options(i)
    i.set_defaults(func=run_import)

    e = subparsers.add_parser(
        "export", help="write a project's labels, history, gold tags or predictions",
        formatter_class=fmt,
        description="Write a project's sentences in any format, streamed.\n\nexample:\n  "
        "python -m cwal export --project news --format conll --output labels.conll",
    )  # fmt: skip
    e.add_argument("--project", required=True, metavar="NAME", help="project name")
    _output_options(e)
    e.add_argument("--what", choices=["labels", "history", "gold", "predictions"],
                   default="labels", help="labels: each sentence's current label (default); "
                   "history: every submitted version; gold: the imported files' tags; "
                   "predictions: the live model's tags with per-token confidence")  # fmt: skip
    e.add_argument("--status", choices=["submitted", "skipped", "any"], default="submitted",
                   help="with --what labels: the latest answer that counts (default submitted)")  # fmt: skip
    _store_options(e)
    e.set_defaults(func=run_export)

    p = subparsers.add_parser(
        "predict", help="tag text or a corpus with a model, with per-token confidence",
        formatter_class=fmt,
        description="Tag raw text or a corpus in any format and write it in any format, with "
        "each token's confidence.\n\nexamples:\n  python -m cwal predict --model model.npz "
        "--input new.txt --output new.conll\n  python -m cwal predict --project news --input "
        "new.txt --output new.jsonl --format prodigy",
    )  # fmt: skip
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", metavar="FILE", help="a model saved by 'python -m cwal train'")
    src.add_argument("--project", metavar="NAME", help="use this project's live model")
    p.add_argument("--input", required=True, metavar="PATH", help="a file, a folder or a .zip")
    p.add_argument("--input-format", choices=FORMATS, help="default: from the file")
    _output_options(p)
    p.add_argument("--confidence", choices=["kd-pc", "kd-fixed", "delta", "maxent", "none"],
                   help="confidence method (default: kd-pc for cw/arow, else kd-fixed; "
                   "none: tags only)")  # fmt: skip
    p.add_argument("--scheme", help="tag scheme to read tags into spans (default: any)")
    _store_options(p, " (with --project)")
    p.set_defaults(func=run_predict)
