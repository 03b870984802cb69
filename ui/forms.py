"""Form pieces shared by the project pages: project settings, upload checks, imports with progress."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import streamlit as st

from cwal.errors import CorpusError
from cwal.io import read_corpus, schemes
from cwal.io.bundle import expand_bytes
from cwal.io.corpus import FORMAT_NAMES, UNLABELED, resolve_format
from cwal.io.corpus import FORMATS as READ_FORMATS
from cwal.learners import LEARNERS
from db import imports
from db import repository as repo
from ui import state
from ui.safe import md

FORMATS = {"auto": None, **{FORMAT_NAMES[f]: f for f in READ_FORMATS}}
SCHEMES = ("IOB2", "IOB1", "BIOES", "BILOU", "IOE2", "IOE1", "IO")
TEMPLATES = ("ner", "chunk")


def split_words(text: str) -> list[str]:
    """Words of a comma- or space-separated list, without blanks or repeats, in order."""
    out: list[str] = []
    for word in re.split(r"[,\s]+", text.strip()):
        if word and word not in out:
            out.append(word)
    return out


def strategy_names(current: str | None = None) -> list[str]:
    """The query strategies the live service serves with (``current`` kept when it is one of
    their aliases), the recommended one (KD-PC) first."""
    from cwal.live.config import STRATEGIES

    names = sorted(set(STRATEGIES.values()), key=lambda n: (n != "kd-pc", n))
    if current in STRATEGIES and current not in names:
        names.insert(0, current)
    return names


CLUSTER_CHOICES = {None: "by features (ner: on)", True: "on", False: "off"}


def settings_inputs(
    defaults: dict[str, Any] | None = None, with_scheme: bool = True
) -> dict[str, Any]:
    """Widgets for the learning settings of a project; returns the chosen values. The tag scheme
    is chosen only at creation (stored labels are in it)."""
    d = {**repo.DEFAULT_SETTINGS, **(defaults or {})}
    cols = st.columns(3)
    learners = sorted(LEARNERS)
    strategies = strategy_names(defaults.get("strategy") if defaults else None)
    scheme = d["scheme"] if d["scheme"] in SCHEMES else "IOB2"
    chosen = {
        "learner": cols[0].selectbox("Learner", learners, index=learners.index(d["learner"])),
        "strategy": cols[1].selectbox(
            "Query strategy",
            strategies,
            index=strategies.index(d["strategy"]) if d["strategy"] in strategies else 0,
        ),
        "feature_template": cols[2].selectbox(
            "Features", TEMPLATES, index=TEMPLATES.index(d["feature_template"])
        ),
    }
    if with_scheme:
        chosen["scheme"] = cols[0].selectbox("Tag scheme", SCHEMES, index=SCHEMES.index(scheme))
    clusters = d.get("pool_clusters")
    chosen["pool_clusters"] = cols[1].selectbox(
        "Word clusters of the pool",
        list(CLUSTER_CHOICES),
        index=list(CLUSTER_CHOICES).index(clusters if clusters in CLUSTER_CHOICES else None),
        format_func=CLUSTER_CHOICES.get,
        help="Features learned from the pool's text once, when the first file with enough "
        "text (20,000 tokens) is added before any label; changing this rebuilds the model.",
    )
    return chosen


def check_upload(
    data: bytes,
    name: str,
    fmt: str | None,
    columns: Sequence[str] | None,
    scheme: str,
    tagset: Sequence[str] | None,
) -> tuple[int, list[str]]:
    """Read an upload once before anything is stored: its sentence count and the entity types
    its tags use. Raises ``CorpusError`` (with the line) for a bad file."""
    imports.check_upload_size(len(data), name)
    n, seen = 0, {}
    for source in expand_bytes(data, name):
        part = resolve_format(source, fmt)
        kw: dict[str, Any] = {}
        if part not in UNLABELED:
            kw = {"scheme": scheme, "strict": True, "tagset": tagset}
        roles = list(columns) if columns and part == "conll" else None
        for sentence in read_corpus(source, part, roles, **kw):
            n += 1
            for tag in sentence.tags or ():
                parts = schemes.split_tag(tag)
                if parts and parts[1]:
                    seen.setdefault(parts[1], None)
    return n, list(seen)


def run_import(
    actor: repo.UserInfo,
    project_id: int,
    upload: Any,
    *,
    label: str,
    keep: bool = False,
    **options: Any,
) -> bool:
    """Import one uploaded file with a progress bar; shows the reader's error and returns False
    when the file is refused (nothing is stored then). Repeated sentences are reported (kept
    for the next run too with ``keep``: the page reruns after it)."""
    label = md(label)
    bar = st.progress(0.0, text=f"Importing {label}…")

    def progress(p: Any) -> None:
        bar.progress(p.fraction, text=f"Importing {label}: {p.sentences:,} sentences")

    try:
        result = state.service().import_upload(
            actor, project_id, upload.getvalue(), upload.name, progress=progress, **options
        )
    except CorpusError as exc:
        bar.empty()
        where = f"line {exc.line}" if exc.line is not None else "the file"
        st.error(f"{label} was refused at {where}: {md(exc.problem)}")
        return False
    except repo.StoreError as exc:
        bar.empty()
        st.error(md(exc))
        return False
    bar.progress(1.0, text=f"Imported {result.n_sentences:,} sentences from {label}.")
    if result.repeated:
        flash("warning", repeats_note(result, label), keep)
    return True


REPEATS_HELP = "A sentence with the same tokens as an earlier one in the file is left out."


def repeats_note(result: Any, label: str) -> str:
    """What an import says about the sentences it repeats (count, first lines, kept or not)."""
    lines = ", ".join(str(n) for n in result.repeated_lines)
    where = f" (the first at line{'s' if len(result.repeated_lines) > 1 else ''} {lines})"
    done = (
        "skipped them"
        if result.repeats_skipped
        else "imported them too (tick “Skip repeated sentences” to leave them out)"
    )
    return (
        f"{label}: {result.repeated:,} sentences repeat an earlier one"
        f"{where if lines else ''}; the import {done}."
    )


FLASH = "cw_flash"


def flash(kind: str, text: str, keep: bool = True) -> None:
    """Show ``text`` now or, with ``keep``, on the next run (a page that reruns to update the
    sidebar still says what happened); ``kind``: success, warning, info or error."""
    if keep:
        st.session_state.setdefault(FLASH, []).append((kind, text))
    else:
        getattr(st, kind)(text)


def show_flash() -> None:
    """The messages kept by :func:`flash` before the last rerun, once."""
    for kind, text in st.session_state.pop(FLASH, []):
        getattr(st, kind)(text)
