"""Byte sources and the checked line stream every reader is built on.

A ``Source`` is something that can be opened (and re-opened) as a binary stream: a path, bytes, or
a seekable binary file object, plus the name used in errors. ``iter_lines`` turns it into numbered
text lines: the encoding is decided per file (UTF-8 when the whole file decodes, else latin-1; an
explicitly given encoding is strict), a UTF-8 BOM is dropped, LF, CRLF and CR-only line ends all
end a line, and a NUL byte, an over-long line or undecodable bytes raise ``CorpusError`` naming
the line. ``token_problem`` is the one rule for what a token may hold (see its docstring).
"""

from __future__ import annotations

import codecs
import io
import os
import re
import unicodedata
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import BinaryIO, TextIO

from cwal.errors import CorpusError

MAX_LINE = 1 << 20  # bytes; a longer single line is not a corpus line
_SCAN_CHUNK = 1 << 20
_BOM = codecs.BOM_UTF8
_SEPARATORS = re.compile(r"[ \t]+")
_UNWRITABLE = re.compile(r"[ \t\r\n]")
_READ_CHUNK = 1 << 16
_LINE_ENDS = (b"\n", b"\r")

PathLike = str | os.PathLike


class Source:
    """A re-openable binary input and the name that errors report.

    ``data`` is a path, ``bytes`` / ``bytearray``, or a binary file object (read from its current
    position; a non-seekable one is read into memory once).
    """

    companion: Source | None = None  # a second file read with this one (brat's .ann)

    def __init__(self, data: PathLike | bytes | bytearray | BinaryIO, name: str | None = None):
        if isinstance(data, str | os.PathLike):
            self.name = name or os.fspath(data)
            self._path: str | None = os.fspath(data)
            self._bytes: bytes | None = None
            self._file: BinaryIO | None = None
            return
        self._path = None
        self._file = None
        if isinstance(data, bytes | bytearray | memoryview):
            self._bytes = bytes(data) if not isinstance(data, bytes) else data
        elif hasattr(data, "read"):
            if getattr(data, "seekable", lambda: False)():
                self._file, self._bytes = data, None
                self._start = data.tell()
            else:
                self._bytes = data.read()
        else:
            raise TypeError(f"cannot read a corpus from {type(data).__name__}")
        self.name = name or getattr(data, "name", None) or "<bytes>"

    @property
    def path(self) -> str | None:
        """The file path, when the source is a file on disk."""
        return self._path

    @contextmanager
    def open(self) -> Iterator[BinaryIO]:
        """A binary stream positioned at the start of the data."""
        if self._path is not None:
            with open(self._path, "rb") as handle:
                yield handle
        elif self._file is not None:
            self._file.seek(self._start)
            yield self._file
        else:
            yield io.BytesIO(self._bytes)

    def error(self, line: int | None, problem: str) -> CorpusError:
        """A CorpusError about this source."""
        return CorpusError(self.name, line, problem)


def as_source(data: PathLike | Source, name: str | None = None) -> Source:
    """``data`` itself when already a Source, else a Source over that path."""
    return data if isinstance(data, Source) else Source(data, name)


def _is_utf8(source: Source) -> bool:
    """True when the whole source decodes as UTF-8 (scanned in chunks, nothing kept)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with source.open() as handle:
        try:
            while chunk := handle.read(_SCAN_CHUNK):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True


def _check_start(source: Source, head: bytes) -> None:
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise source.error(1, "UTF-16 text is not supported; save the file as UTF-8")
    if head.startswith(b"\x1f\x8b"):
        raise source.error(1, "binary content (gzip-compressed); decompress the file first")


def decide_encoding(source: Source, encoding: str | None) -> str:
    """The codec name to decode ``source`` with: ``encoding`` if given (strict), else UTF-8 when
    the file starts with a UTF-8 BOM or decodes as UTF-8 throughout, else latin-1."""
    with source.open() as handle:
        head = handle.read(4)
    _check_start(source, head)
    if encoding is not None:
        name = codecs.lookup(encoding).name
        return "utf-8" if name == "utf-8-sig" else name
    if head.startswith(_BOM) or _is_utf8(source):
        return "utf-8"
    return "latin-1"


def raw_lines(handle: BinaryIO, max_line: int = MAX_LINE) -> Iterator[bytes]:
    """The lines of a binary stream without their ends: LF, CRLF and a lone CR each end a line
    (old Mac files). A line longer than ``max_line`` bytes is yielded cut at ``max_line + 1``
    bytes, for the caller to refuse."""
    rest = b""
    while chunk := handle.read(_READ_CHUNK):
        data = rest + chunk if rest else chunk
        lines = data.splitlines(keepends=True)
        last = lines[-1]
        # an unfinished last line, or a CR that a LF in the next chunk may complete, waits
        rest = last if not last.endswith(_LINE_ENDS) or last.endswith(b"\r") else b""
        if rest:
            lines.pop()
            if len(rest) > max_line + 1:
                yield rest[: max_line + 1]
                return
        for line in lines:
            yield line.rstrip(b"\r\n")
    if rest:
        yield rest.rstrip(b"\r\n")


def iter_lines(
    source: Source, encoding: str | None = None, max_line: int = MAX_LINE
) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for each line of ``source``, 1-based, without the line end."""
    codec = decide_encoding(source, encoding)
    with source.open() as handle:
        for lineno, raw in enumerate(raw_lines(handle, max_line), 1):
            if len(raw) > max_line:
                raise source.error(lineno, f"line too long (more than {max_line} bytes)")
            if lineno == 1 and codec == "utf-8" and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            if b"\x00" in raw:
                raise source.error(lineno, "binary content (NUL byte); not a text corpus")
            try:
                text = raw.decode(codec)
            except UnicodeDecodeError as exc:
                bad = raw[exc.start : exc.end]
                raise source.error(
                    lineno, f"invalid {codec} bytes {bad!r} at byte {exc.start + 1} of the line"
                ) from None
            yield lineno, text


WHOLE_LIMIT = 1 << 28  # bytes; a larger file is streamed line by line (``iter_lines``)
_WHOLE_CODECS = frozenset({"utf-8", "iso8859-1", "ascii"})  # line ends are their own bytes


def clean_text(source: Source, encoding: str | None = None, max_line: int = MAX_LINE) -> str | None:
    """The whole text of ``source`` with every line end as ``"\\n"``, when ``iter_lines`` would
    give its lines without an error (the same encoding decision, BOM dropped): ``"\\n".join`` of
    them, plus a final ``"\\n"`` where the file has one. None when the file is larger than
    ``WHOLE_LIMIT``, holds a NUL byte, a line that may be over-long or bytes its codec refuses,
    or its codec is not UTF-8, latin-1 or ASCII: the caller then streams ``iter_lines``, which
    names the offending line. One read and one decode instead of one per line."""
    with source.open() as handle:
        data = handle.read(WHOLE_LIMIT + 1)
    _check_start(source, data[:4])
    if len(data) > WHOLE_LIMIT or b"\x00" in data:
        return None
    if encoding is not None:
        codec = codecs.lookup(encoding).name
        codec = "utf-8" if codec == "utf-8-sig" else codec
    else:
        codec = "utf-8" if data.startswith(_BOM) else None
    if codec is not None and codec not in _WHOLE_CODECS:
        return None
    try:
        text = data.decode(codec or "utf-8")
        codec = codec or "utf-8"
    except UnicodeDecodeError:
        if codec is not None:
            return None
        text, codec = data.decode("latin-1"), "latin-1"
    if codec == "utf-8" and text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if len(data) > max_line and max(map(len, text.split("\n"))) * 4 > max_line:
        return None  # a line may be longer than max_line bytes: iter_lines decides
    return text


def split_fields(text: str) -> list[str]:
    """The space- or tab-separated fields of a line (runs of separators count once)."""
    if "\t" not in text and "  " not in text:
        return text.strip(" ").split(" ") if text.strip(" ") else []
    return [f for f in _SEPARATORS.split(text) if f]


def is_blank_token(token: str) -> bool:
    """True for a token with no visible character (only whitespace or format characters)."""
    if token.isprintable():
        return not token.strip()
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in token)


def token_problem(token: str) -> str | None:
    """Why ``token`` cannot be a token, or None when it can.

    The rule, the same for every format: a token has a visible character and holds no whitespace
    (Unicode White_Space: space, tab, line ends, no-break space ...), no control character
    (category Cc) and no lone surrogate (category Cs), so that every export format can write it
    and read it back unchanged. Such input is refused with its line, never silently changed.
    """
    if is_blank_token(token):
        return f"empty token {token!r}"
    if token.isprintable():  # printable: no whitespace but the plain space, no Cc, no Cs
        return None if " " not in token else f"token {token!r} holds whitespace (U+0020)"
    for ch in token:
        kind = unicodedata.category(ch)
        if ch.isspace() or kind in ("Cc", "Cs", "Zl", "Zp"):
            what = "whitespace" if ch.isspace() or kind[0] == "Z" else "a control character"
            what = "a lone surrogate" if kind == "Cs" else what
            return f"token {token!r} holds {what} (U+{ord(ch):04X})"
    return None


def check_tokens(source: Source, line: int, values: list[str], what: str = "token") -> None:
    """Raise ``CorpusError`` at ``line`` for the first value ``token_problem`` refuses."""
    for p, value in enumerate(values):
        problem = token_problem(value)
        if problem is not None:
            if what != "token":
                problem = problem.replace("token", what, 1)
            raise source.error(line, f"{problem} at position {p}")


def writable_field(value: object) -> bool:
    """True when ``value`` can be written as one field and read back unchanged."""
    return isinstance(value, str) and not is_blank_token(value) and not _UNWRITABLE.search(value)


def open_text(dest: PathLike | TextIO) -> AbstractContextManager[TextIO]:
    """A context manager giving a text stream: a new UTF-8 file for a path (LF line ends), or the
    caller's own text file object, which is left open."""
    if hasattr(dest, "write"):
        return nullcontext(dest)
    return open(dest, "w", encoding="utf-8", newline="\n")
