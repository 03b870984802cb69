"""Chunk tag schemes as declarative data, and the operations every scheme shares.

A scheme is fully described by which prefix each token of a chunk gets: ``single`` for a one-token
chunk, ``begin`` / ``inside`` / ``end`` for the first, middle and last tokens of a longer chunk, and
the optional ``mark_start`` / ``mark_end`` prefix that IOB1 / IOE1 put only where a chunk touches a
neighbouring chunk of the same type. Decoding (which prefixes always open or close a chunk) is
derived from that table, so adding a scheme means adding one row to ``SCHEMES``.

Tags are ``"O"`` or ``"<prefix>-<type>"`` with a one-letter prefix; the type may contain dashes.
Spans are ``(type, start, end)`` with ``end`` exclusive.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

OUTSIDE = "O"


@dataclass(frozen=True)
class Scheme:
    """One tag scheme: the prefix each chunk position takes (see the module docstring)."""

    name: str
    single: str
    begin: str
    inside: str
    end: str
    mark_start: str | None = None
    mark_end: str | None = None

    @cached_property
    def alphabet(self) -> frozenset[str]:
        """Every prefix the scheme uses."""
        marks = {self.mark_start, self.mark_end} - {None}
        return frozenset({self.single, self.begin, self.inside, self.end, *marks})

    @cached_property
    def starts(self) -> frozenset[str]:
        """Prefixes that always open a new chunk: used first in a chunk and nowhere else."""
        first = {self.single, self.begin, self.mark_start} - {None}
        later = {self.inside, self.end, self.mark_end} - {None}
        return frozenset(first - later)

    @cached_property
    def ends(self) -> frozenset[str]:
        """Prefixes that always close their chunk: used last in a chunk and nowhere else."""
        last = {self.single, self.end, self.mark_end} - {None}
        earlier = {self.begin, self.inside, self.mark_start} - {None}
        return frozenset(last - earlier)


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme("IO", single="I", begin="I", inside="I", end="I"),
        Scheme("IOB1", single="I", begin="I", inside="I", end="I", mark_start="B"),
        Scheme("IOB2", single="B", begin="B", inside="I", end="I"),
        Scheme("IOE1", single="I", begin="I", inside="I", end="I", mark_end="E"),
        Scheme("IOE2", single="E", begin="I", inside="I", end="E"),
        Scheme("BIOES", single="S", begin="B", inside="I", end="E"),
        Scheme("BILOU", single="U", begin="B", inside="I", end="L"),
    )
}
ALIASES = {"BIO": "IOB2", "IOBES": "BIOES", "IOB": "IOB2"}

# Lenient decoding (used by ``repair``): a prefix opens / closes a chunk if it does so in any scheme.
_ANY_STARTS = frozenset().union(*(s.starts for s in SCHEMES.values()))
_ANY_ENDS = frozenset().union(*(s.ends for s in SCHEMES.values()))

Span = tuple[str, int, int]


def get(scheme: str | Scheme) -> Scheme:
    """The scheme of that name (case-insensitive; ``BIO`` = IOB2, ``IOBES`` = BIOES)."""
    if isinstance(scheme, Scheme):
        return scheme
    key = str(scheme).upper()
    key = ALIASES.get(key, key)
    if key not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}; known: {', '.join(SCHEMES)}")
    return SCHEMES[key]


def split_tag(tag: str) -> tuple[str, str] | None:
    """``("B", "NP")`` for ``"B-NP"``, ``("O", "")`` for ``"O"``, None for a malformed tag."""
    if tag == OUTSIDE:
        return OUTSIDE, ""
    if len(tag) >= 3 and tag[1] == "-" and tag[0].isalpha() and tag[0].isupper():
        return tag[0], tag[2:]
    return None


def _parse(tag: str) -> tuple[str, str]:
    parsed = split_tag(tag)
    if parsed is None:
        raise ValueError(f"malformed tag {tag!r}: expected 'O' or a prefix like 'B-' then a type")
    return parsed


def _decode(tags: Sequence[str], starts: frozenset[str], ends: frozenset[str]) -> list[Span]:
    spans: list[Span] = []
    open_type: str | None = None
    open_start = 0
    for i, tag in enumerate(tags):
        prefix, typ = _parse(tag)
        if prefix == OUTSIDE:
            if open_type is not None:
                spans.append((open_type, open_start, i))
                open_type = None
            continue
        if open_type is not None and (typ != open_type or prefix in starts):
            spans.append((open_type, open_start, i))
            open_type = None
        if open_type is None:
            open_type, open_start = typ, i
        if prefix in ends:
            spans.append((open_type, open_start, i + 1))
            open_type = None
    if open_type is not None:
        spans.append((open_type, open_start, len(tags)))
    return spans


def spans(tags: Sequence[str], scheme: str | Scheme) -> list[Span]:
    """The chunks of ``tags`` read under ``scheme``, as ``(type, start, end_exclusive)``.

    Raises ValueError for a malformed tag or a prefix the scheme does not use. An invalid but
    well-formed sequence is read the way conlleval does: a chunk also opens where the type changes.
    """
    sch = get(scheme)
    for tag in tags:
        prefix = _parse(tag)[0]
        if prefix != OUTSIDE and prefix not in sch.alphabet:
            raise ValueError(f"tag {tag!r}: prefix {prefix!r} is not used by {sch.name}")
    return _decode(tags, sch.starts, sch.ends)


def from_spans(chunks: Iterable[Span], length: int, scheme: str | Scheme) -> list[str]:
    """The tags of ``length`` tokens holding ``chunks`` (sorted, non-overlapping) under ``scheme``."""
    sch = get(scheme)
    out = [OUTSIDE] * length
    chunks = list(chunks)
    for k, (typ, start, end) in enumerate(chunks):
        if not 0 <= start < end <= length:
            raise ValueError(f"span {(typ, start, end)} does not fit {length} tokens")
        if k and chunks[k - 1][2] > start:
            raise ValueError(
                f"spans {chunks[k - 1]} and {(typ, start, end)} overlap or are unsorted"
            )
        if end - start == 1:
            out[start] = f"{sch.single}-{typ}"
        else:
            out[start] = f"{sch.begin}-{typ}"
            for p in range(start + 1, end - 1):
                out[p] = f"{sch.inside}-{typ}"
            out[end - 1] = f"{sch.end}-{typ}"
        if sch.mark_start and k and chunks[k - 1][2] == start and chunks[k - 1][0] == typ:
            out[start] = f"{sch.mark_start}-{typ}"
        nxt = chunks[k + 1] if k + 1 < len(chunks) else None
        if sch.mark_end and nxt is not None and nxt[1] == end and nxt[0] == typ:
            out[end - 1] = f"{sch.mark_end}-{typ}"
    return out


def convert(tags: Sequence[str], src: str | Scheme, dst: str | Scheme) -> list[str]:
    """Re-encode ``tags`` from scheme ``src`` to ``dst`` (lossy only into IO, which cannot
    separate two adjacent chunks of one type)."""
    return from_spans(spans(tags, src), len(tags), dst)


def check(tags: Sequence[str], scheme: str | Scheme) -> tuple[int, str] | None:
    """``(index, expected_tag)`` of the first tag that is invalid under ``scheme``, else None.

    A sequence is valid when it equals the canonical encoding of its own chunks (``repair``); so a
    prefix the scheme does not use is invalid, and a malformed tag is invalid (expected: O).
    """
    sch = get(scheme)
    sane = [tag if split_tag(tag) else OUTSIDE for tag in tags]
    for i, (have, want) in enumerate(zip(tags, repair(sane, sch), strict=True)):
        if have != want:
            return i, want
    return None


def first_invalid(tags: Sequence[str], scheme: str | Scheme) -> int | None:
    """Index of the first tag invalid under ``scheme`` (e.g. I- without B- in IOB2), or None."""
    found = check(tags, scheme)
    return None if found is None else found[0]


def is_valid(tags: Sequence[str], scheme: str | Scheme) -> bool:
    """True when ``tags`` is exactly how ``scheme`` encodes its chunks."""
    return check(tags, scheme) is None


def lenient_spans(tags: Sequence[str]) -> list[Span]:
    """The chunks ``repair`` keeps: any scheme's opening and closing prefixes count, a type
    change opens a chunk. Malformed tags raise ValueError."""
    return _decode(tags, _ANY_STARTS, _ANY_ENDS)


def repair(tags: Sequence[str], scheme: str | Scheme) -> list[str]:
    """The nearest valid sequence: chunks read leniently (``lenient_spans``) and re-encoded
    under ``scheme``. E.g. IOB2 ``O I-NP I-NP`` becomes ``O B-NP I-NP``. Malformed tags raise
    ValueError."""
    return from_spans(lenient_spans(tags), len(tags), scheme)


def task_view(tags: Sequence[str], keep: Iterable[str]) -> list[str]:
    """Tags with every chunk whose type is not in ``keep`` turned into O (e.g. NP-only chunking).

    Per-token work suffices in every scheme: dropping a chunk never makes two kept chunks touch.
    """
    kept = set(keep)
    return [tag if _parse(tag)[1] in kept else OUTSIDE for tag in tags]


def tag_types(tags: Iterable[str]) -> list[str]:
    """The sorted chunk types used in ``tags`` (``O`` has none)."""
    return sorted({_parse(tag)[1] for tag in tags} - {""})
