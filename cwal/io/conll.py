"""CoNLL column files: one token per line, whitespace-separated columns, blank lines between
sentences, ``-DOCSTART-`` lines dropped (they also end a sentence; from the first one on, each
sentence's ``meta["document"]`` numbers its document from 0, for document-level features)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TextIO

from cwal.io import schemes
from cwal.io.sentence import Sentence
from cwal.io.source import (
    MAX_LINE,
    PathLike,
    Source,
    as_source,
    clean_text,
    is_blank_token,
    iter_lines,
    open_text,
    split_fields,
    token_problem,
    writable_field,
)

DOCSTART = "-DOCSTART-"
SKIP = "_"  # a role that drops its column


def default_roles(n_columns: int) -> list[str]:
    """Roles of an ``n``-column file: word; word tag; word pos tag; word pos col2 .. tag."""
    if n_columns == 1:
        return ["word"]
    if n_columns == 2:
        return ["word", "tag"]
    return ["word", "pos", *(f"col{i}" for i in range(2, n_columns - 1)), "tag"]


def parse_roles(columns: str | Sequence[str] | None) -> list[str] | None:
    """Roles from a list or a comma-separated string; checks there is one word and no repeat."""
    if columns is None:
        return None
    roles = [r.strip() for r in columns.split(",")] if isinstance(columns, str) else list(columns)
    if any(not r for r in roles):
        raise ValueError(f"columns {columns!r}: empty role name")
    if roles.count("word") != 1:
        raise ValueError(f"columns {columns!r}: exactly one column must be 'word'")
    named = [r for r in roles if r != SKIP]
    if len(set(named)) != len(named):
        raise ValueError(f"columns {columns!r}: a role is repeated")
    return roles


class TagRules:
    """Optional checks on tags: a scheme (strict: invalid raises; lenient: repaired) and a tag set."""

    def __init__(
        self,
        scheme: str | schemes.Scheme | None = None,
        strict: bool = True,
        tagset: Collection[str] | None = None,
    ) -> None:
        self.scheme = schemes.get(scheme) if scheme is not None else None
        self.strict = strict
        self.tagset = frozenset(tagset) if tagset is not None else None

    def apply(
        self, source: Source, tags: list[str], where: Callable[[int], tuple[int, str]]
    ) -> list[str]:
        """The checked (maybe repaired) tags; ``where(i)`` gives the line and a position note."""
        if self.tagset is not None:
            for i, tag in enumerate(tags):
                if tag not in self.tagset:
                    line, note = where(i)
                    allowed = ", ".join(sorted(self.tagset)[:12])
                    raise source.error(line, f"tag {tag!r}{note} is not in the tag set ({allowed})")
        if self.scheme is None:
            return tags
        for i, tag in enumerate(tags):
            if schemes.split_tag(tag) is None:
                line, note = where(i)
                raise source.error(
                    line,
                    f"malformed tag {tag!r}{note}: expected 'O' or a prefix like 'B-' and a type",
                )
        if not self.strict:
            return schemes.repair(tags, self.scheme)
        found = schemes.check(tags, self.scheme)
        if found is not None:
            i, expected = found
            line, note = where(i)
            raise source.error(
                line,
                f"tag {tags[i]!r}{note} is invalid under {self.scheme.name} "
                f"(expected {expected!r} here)",
            )
        return tags


def tagged_reader(body: Callable[..., Iterator[Sentence]]) -> Callable[..., Iterator[Sentence]]:
    """The public reader of a tagged format from ``body(source, rules, scheme, encoding,
    max_line)``: ``reader(path, *, encoding="utf-8", scheme=None, strict=True, tagset=None,
    max_line=MAX_LINE)``, where ``scheme`` / ``strict`` / ``tagset`` check tags as in
    ``read_conll`` and ``path`` is a path or a ``Source``."""

    @functools.wraps(body)
    def reader(
        path: PathLike | Source,
        *,
        encoding: str = "utf-8",
        scheme: str | None = None,
        strict: bool = True,
        tagset: Collection[str] | None = None,
        max_line: int = MAX_LINE,
    ) -> Iterator[Sentence]:
        return body(as_source(path), TagRules(scheme, strict, tagset), scheme, encoding, max_line)

    del reader.__wrapped__  # the signature shown is the reader's, not the body's
    return reader


def read_conll(
    path: PathLike | Source,
    columns: str | Sequence[str] | None = None,
    encoding: str | None = None,
    *,
    scheme: str | schemes.Scheme | None = None,
    strict: bool = True,
    tagset: Collection[str] | None = None,
    max_line: int = MAX_LINE,
) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL column file.

    ``columns`` names each column's role (``"word,pos,chunk,tag"``; ``_`` drops a column); by
    default see ``default_roles``. ``word`` and ``tag`` fill ``tokens`` / ``tags``, other roles go
    to ``Sentence.columns``; without a ``tag`` column ``tags`` is None. ``encoding=None`` means
    UTF-8, or latin-1 when the file is not valid UTF-8. With ``scheme`` the tags are checked
    (``strict=True``: invalid raises; ``strict=False``: repaired); with ``tagset`` an unknown tag
    raises. Every malformed line raises ``CorpusError`` with its line number.
    """
    roles = parse_roles(columns)
    rules = TagRules(scheme, strict, tagset)
    return _read(as_source(path), roles, encoding, rules, max_line)


def _read(
    source: Source, roles: list[str] | None, encoding: str | None, rules: TagRules, max_line: int
) -> Iterator[Sentence]:
    text = clean_text(source, encoding, max_line)
    whole = _read_whole(source, roles, rules, text) if text is not None else None
    if whole is not None:
        yield from whole
    else:
        yield from _read_lines(source, roles, encoding, rules, max_line)


def _is_docstart(line: str) -> bool:
    return line.startswith(DOCSTART) and (len(line) == len(DOCSTART) or line[len(DOCSTART)] == " ")


def _read_whole(
    source: Source, roles: list[str] | None, rules: TagRules, text: str
) -> list[Sentence] | None:
    """``_read_lines``' sentences of a clean text (from ``clean_text``) with single spaces
    between fields, every row as many as the first, no tab and no field any check refuses,
    split and checked a file at a time; None for any other text (``_read_lines`` then reads it
    line by line and names the line at fault). Tag checks run per sentence as there."""
    if "\t" in text or "  " in text or " \n" in text or "\n " in text:
        return None
    if text.startswith(" ") or text.endswith(" "):
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    spans = []  # (first row, end, document) of each sentence, rows as indices into lines
    document: int | None = None
    prev = -1
    for b in [i for i, line in enumerate(lines) if not line or _is_docstart(line)] + [len(lines)]:
        if b > prev + 1:
            spans.append((prev + 1, b, document))
        if b < len(lines) and lines[b]:
            document = 0 if document is None else document + 1
        prev = b
    if not spans:
        return None
    rows = [line for a, b, _ in spans for line in lines[a:b]]
    del lines
    n_cols = rows[0].count(" ") + 1
    if roles is None:
        roles = default_roles(n_cols)
    if len(roles) != n_cols or {row.count(" ") for row in rows} != {n_cols - 1}:
        return None
    flat = " ".join(rows).split(" ")
    del rows
    known = {v: v for v in set(flat)}  # every distinct value kept once, checked once
    if any(is_blank_token(v) or token_problem(v) is not None for v in known):
        return None
    flat = list(map(known.__getitem__, flat))
    cols = [flat[k::n_cols] for k in range(n_cols)]
    del flat
    out = []
    at = 0
    for a, b, doc in spans:
        by_role = {r: cols[k][at : at + b - a] for k, r in enumerate(roles) if r != SKIP}
        at += b - a
        tokens = by_role.pop("word")
        tags = by_role.pop("tag", None)
        if tags is not None:
            tags = rules.apply(source, tags, lambda i, line=a + 1: (line + i, ""))
        meta = {} if doc is None else {"document": doc}
        out.append(Sentence(tokens, tags, by_role, meta, a + 1))
    return out


def _read_lines(
    source: Source, roles: list[str] | None, encoding: str | None, rules: TagRules, max_line: int
) -> Iterator[Sentence]:
    n_cols = 0
    first_row = 0
    rows: list[list[str]] = []
    start = 0
    lineno = 0
    seen = False
    document: int | None = None  # the number of the -DOCSTART- document, from the first one
    known: dict[str, str] = {}  # every distinct value that passed the checks, kept once (speed and
    # memory: CoNLL-2000's 636K fields hold 20K distinct strings)

    def flush() -> Sentence:
        cols = list(zip(*rows, strict=True))
        by_role = {r: list(c) for r, c in zip(roles, cols, strict=True) if r != SKIP}
        tokens = by_role.pop("word")
        tags = by_role.pop("tag", None)
        if tags is not None:
            tags = rules.apply(source, tags, lambda i: (start + i, ""))
        meta = {} if document is None else {"document": document}
        return Sentence(tokens, tags, by_role, meta, start)

    for lineno, text in iter_lines(source, encoding, max_line):
        fields = split_fields(text)
        if not fields or fields[0] == DOCSTART:
            if rows:
                yield flush()
                seen, rows = True, []
            if fields:
                document = 0 if document is None else document + 1
            continue
        if text[0] == "\t":
            raise source.error(lineno, "empty token (the line starts with a tab)")
        if not n_cols:
            n_cols, first_row = len(fields), lineno
            if roles is None:
                roles = default_roles(n_cols)
            elif len(roles) != n_cols:
                raise source.error(
                    lineno,
                    f"columns= names {len(roles)} roles ({','.join(roles)}) "
                    f"but the file has {n_cols} columns",
                )
        elif len(fields) != n_cols:
            _column_count_error(source, lineno, text, fields, n_cols, first_row, roles)
        for k, field in enumerate(fields):
            same = known.get(field)
            if same is not None:  # a value already checked (in any column): its one copy
                fields[k] = same
                continue
            if is_blank_token(field):
                what = "empty token" if roles[k] == "word" else f"empty value in column {k + 1}"
                raise source.error(lineno, f"{what} ({field!r})")
            problem = token_problem(field)
            if problem is not None:
                what = "" if roles[k] == "word" else f" (column {k + 1})"
                raise source.error(lineno, problem + what)
            known[field] = field
        if not rows:
            start = lineno
        rows.append(fields)
    if rows:
        yield flush()
        seen = True
    if not seen:
        if lineno == 0:
            raise source.error(1, "empty file: no sentences")
        raise source.error(lineno, "no sentences (only blank and -DOCSTART- lines)")


def _column_count_error(
    source: Source,
    lineno: int,
    text: str,
    fields: list[str],
    n_cols: int,
    first_row: int,
    roles: list[str],
) -> None:
    """Raise the most precise error for a row whose column count differs from the first row's."""
    if "\t" in text:
        tab_fields = text.rstrip(" ").split("\t")
        if len(tab_fields) == n_cols:
            k = next((k for k, f in enumerate(tab_fields) if not f.strip()), None)
            if k is not None:
                what = "empty token" if roles[k] == "word" else f"empty value in column {k + 1}"
                raise source.error(lineno, f"{what} (an empty tab-separated field)")
    raise source.error(
        lineno, f"expected {n_cols} columns (as on line {first_row}), found {len(fields)}"
    )


def write_conll(
    sentences: Iterable[Sentence],
    dest: PathLike | TextIO,
    columns: str | Sequence[str] | None = None,
    sep: str = " ",
) -> int:
    """Write sentences as CoNLL columns (UTF-8, a blank line after each sentence); returns the
    number written. ``columns`` lists the roles to write (default: word, the first sentence's
    ``columns`` in order, then tag when it has tags). Streams: one sentence at a time."""
    count = 0
    roles: list[str] | None = parse_roles(columns)
    with open_text(dest) as out:
        for sent in sentences:
            if roles is None:
                extra = list(sent.columns)
                roles = ["word", *extra, *(["tag"] if sent.tags is not None else [])]
            cols = [_column(sent, role, count) for role in roles if role != SKIP]
            lines = [sep.join(row) for row in zip(*cols, strict=True)]
            out.write("\n".join(lines) + "\n\n")
            count += 1
    return count


def _column(sent: Sentence, role: str, index: int) -> list[str]:
    where = f"sentence {index}" + (f" (line {sent.line})" if sent.line else "")
    if role == "word":
        values = sent.tokens
    elif role == "tag":
        values = sent.tags
    else:
        values = sent.columns.get(role)
    if values is None:
        raise ValueError(f"{where} has no {role!r} column to write")
    if len(values) != len(sent.tokens):
        raise ValueError(
            f"{where}: column {role!r} has {len(values)} values for {len(sent)} tokens"
        )
    for p, value in enumerate(values):
        if not writable_field(value):
            raise ValueError(f"{where}: {role} {value!r} at token {p} cannot be a CoNLL field")
    if role == "word" and DOCSTART in values:
        raise ValueError(f"{where}: a token {DOCSTART!r} would be read back as a document break")
    return list(values)
