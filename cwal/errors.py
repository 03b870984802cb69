"""The typed errors of cwal: one type per kind of problem, each with a message a user can act on."""

from __future__ import annotations


class CwalError(Exception):
    """Base class of every error cwal raises on purpose."""


class CorpusError(CwalError, ValueError):
    """Malformed input: names the file, the 1-based line and the problem."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class MissingExtraError(CwalError):
    """A format or feature needs an optional package that is not installed."""


class ModelFileError(CwalError, ValueError):
    """A model file that is missing a part, has the wrong version, or is not a cwal model."""


class EmptyPoolError(CwalError):
    """A query strategy was asked to select from an empty pool."""


class ExhaustedPoolError(CwalError):
    """The pool holds fewer unlabeled sentences than were asked for and none is left."""
