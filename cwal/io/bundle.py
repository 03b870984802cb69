"""Inputs that hold several documents: a folder or a zip archive, expanded to one Source each.

Files are taken in name order; hidden files and folders (``.DS_Store``, ``__MACOSX``) are
skipped. A zip member is read into memory when its turn comes; ``MAX_MEMBER`` bounds one member
and ``MAX_TOTAL`` the archive, so a zip bomb is refused before it is inflated.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

from cwal.errors import CorpusError
from cwal.io.source import PathLike, Source

MAX_MEMBER = 1 << 30
MAX_TOTAL = 4 << 30


def _hidden(name: str) -> bool:
    return any(part.startswith((".", "__MACOSX")) for part in Path(name).parts)


def expand(path: PathLike) -> list[Source]:
    """One Source per document of ``path``: the file itself, every file under a folder, or every
    member of a ``.zip`` (named ``archive.zip/member``)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
        found = brat_pairs([Source(p) for p in files if not _hidden(str(p.relative_to(path)))])
        if not found:
            raise CorpusError(str(path), None, "the folder holds no files")
        return found
    if path.suffix.lower() == ".zip" and zipfile.is_zipfile(path):
        return _members(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
    return [Source(path)]


def expand_bytes(data: bytes, name: str) -> list[Source]:
    """``expand`` for an upload: the members of a ``.zip``, else the bytes themselves."""
    if name.lower().endswith(".zip") and zipfile.is_zipfile(io.BytesIO(data)):
        return _members(io.BytesIO(data), name)
    return [Source(data, name)]


def _members(path: Path | io.BytesIO, name: str | None = None) -> list[Source]:
    path_name = name or str(path)
    with zipfile.ZipFile(path) as archive:
        infos = [i for i in archive.infolist() if not i.is_dir() and not _hidden(i.filename)]
        total = sum(i.file_size for i in infos)
        big = next((i for i in infos if i.file_size > MAX_MEMBER), None)
        if big is not None or total > MAX_TOTAL:
            what = big.filename if big is not None else "its members together"
            raise CorpusError(path_name, None, f"{what}: too large once unpacked")
        if not infos:
            raise CorpusError(path_name, None, "the archive holds no files")
        infos.sort(key=lambda i: i.filename)
        sources = [Source(archive.read(i), f"{path_name}/{i.filename}") for i in infos]
    by_name = {s.name: s for s in sources}
    for src in sources:
        if src.name.endswith(".txt"):
            src.companion = by_name.get(src.name[: -len(".txt")] + ".ann")
    return brat_pairs(sources)


def brat_pairs(sources: list[Source]) -> list[Source]:
    """``sources`` with each brat ``.ann`` file dropped when its ``.txt`` is there too (the pair
    is read from the ``.txt``'s name)."""
    names = {s.name for s in sources}
    return [
        s
        for s in sources
        if not (s.name.endswith(".ann") and s.name[: -len(".ann")] + ".txt" in names)
    ]
