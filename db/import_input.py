"""What an import reads: the upload limit, each input's bytes (a path, bytes or a
``cwal.io.source.Source``) with its content hash and line count, the reader options a project's
settings give, and the store's own check on the readers' sentences. ``db.imports`` stages
what these yield."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cwal.errors import CorpusError
from cwal.io import Sentence
from cwal.io.corpus import UNLABELED
from cwal.io.source import Source

HASH_CHUNK = 1 << 20
DEFAULT_MAX_UPLOAD_MB = 200


def max_upload_bytes() -> int:
    """The upload size limit: ``CWAL_MAX_UPLOAD_MB`` (default 200, as Streamlit's
    ``server.maxUploadSize`` in .streamlit/config.toml) in bytes."""
    raw = os.environ.get("CWAL_MAX_UPLOAD_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MAX_UPLOAD_MB
    except ValueError:
        mb = DEFAULT_MAX_UPLOAD_MB
    return int(mb * 1024 * 1024) if mb > 0 else int(DEFAULT_MAX_UPLOAD_MB * 1024 * 1024)


def check_upload_size(size: int, name: str) -> None:
    """``CorpusError`` naming the file when ``size`` bytes exceed :func:`max_upload_bytes`."""
    limit = max_upload_bytes()
    if size > limit:
        raise CorpusError(
            name,
            None,
            f"the file has {size / 2**20:.1f} MB, over the upload limit of "
            f"{limit / 2**20:.0f} MB (CWAL_MAX_UPLOAD_MB); split the file or raise the limit",
        )


@dataclass(frozen=True)
class ImportInput:
    data: Path | bytes
    name: str
    content_hash: str
    total_lines: int
    companion: Source | None = None  # read with this input (brat's .ann beside its .txt)

    def source(self) -> Source:
        source = Source(self.data, self.name)
        source.companion = self.companion
        return source


def scan(chunks: Iterable[bytes]) -> tuple[str, int]:
    """The content hash and the number of lines (LF, CRLF or CR-only ends) of a file's bytes."""
    digest = hashlib.sha256()
    lines = 0
    last = b""
    for chunk in chunks:
        digest.update(chunk)
        lines += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
        if last == b"\r" and chunk[:1] == b"\n":
            lines -= 1  # a CRLF split between two chunks
        last = chunk[-1:] or last
    return digest.hexdigest(), lines + (1 if last and last not in b"\r\n" else 0)


def input_of_path(path: str | os.PathLike) -> ImportInput:
    path = Path(path)
    with open(path, "rb") as handle:
        digest, lines = scan(iter(lambda: handle.read(HASH_CHUNK), b""))
    return ImportInput(path, str(path), digest, lines)


def input_of_bytes(data: bytes, name: str) -> ImportInput:
    digest, lines = scan([bytes(data)])
    return ImportInput(bytes(data), name, digest, lines)


def reader_options(
    fmt: str, settings: dict[str, Any], encoding: str | None, columns: list[str] | None
) -> tuple[list[str] | None, dict[str, Any]]:
    """The ``columns`` argument and keywords of the reader for ``fmt`` under these settings."""
    if fmt in UNLABELED:
        return None, {"encoding": encoding}
    kw: dict[str, Any] = {
        "scheme": settings.get("scheme"),
        "strict": settings.get("strict_scheme", True),
        "tagset": settings.get("tagset"),
    }
    if encoding is not None:
        kw["encoding"] = encoding
    if fmt != "conll":
        return None, kw
    return (columns if columns is not None else settings.get("columns")), kw


def checked(sentences: Iterator[Sentence], name: str, fmt: str) -> Iterator[Sentence]:
    """The readers' sentences plus the store's own check: a byte-order mark inside the file
    (left by concatenating files) is refused rather than stored inside a token."""
    for sent in sentences:
        for p, token in enumerate(sent.tokens):
            if "\ufeff" in token:
                line = sent.line + p if fmt == "conll" else sent.line
                raise CorpusError(name, line, "byte-order mark (U+FEFF) inside the file")
        yield sent


def input_of_source(source: Source) -> ImportInput:
    if source.path is not None:
        item = input_of_path(source.path)
    else:
        with source.open() as handle:
            item = input_of_bytes(handle.read(), source.name)
    digest = item.content_hash
    if source.companion is not None:  # the pair's hash: a changed .ann is a new import
        with source.companion.open() as handle:
            digest = hashlib.sha256((digest + scan([handle.read()])[0]).encode()).hexdigest()
    return ImportInput(item.data, source.name, digest, item.total_lines, source.companion)
