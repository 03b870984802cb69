"""The token editor: a Streamlit v2 custom component (inline HTML/CSS/JS, no iframe, no build).

Python sends one JSON payload (see :func:`payload`): the current sentence and the ones after it,
which the editor shows the moment Enter is pressed; the browser answers with one trigger per action,
``action`` = ``{"kind": "submit" | "skip" | "undo", "sid", "spans", "seconds"}``, and sends the
next action only once the server has handled the previous one (``rev`` has moved on).
Spans are ``[type, start, end_exclusive]``: the scheme (IOB2, BIOES, ...) stays on the Python side.
Every token, tag type and message reaches the page through ``textContent``, never as HTML.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from cwal.io import schemes
from db.repository import label_config

_HERE = Path(__file__).resolve().parent
NAME = "cwal_token_editor"
RESERVED_KEYS = label_config.RESERVED_KEYS  # skip, undo, guidelines, flag
PALETTE = label_config.PALETTE


def _asset(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8")


_component = st.components.v2.component(
    NAME, html=_asset("editor.html"), css=_asset("editor.css"), js=_asset("editor.js")
)


def label_keys(
    types: Sequence[str], settings: Mapping[str, Any] | None = None
) -> list[dict[str, str]]:
    """One key and colour per entity type, as the project's label configuration sets them
    (``db.repository.label_config``: by default 1-9 first, then letters other than the
    editor's own keys), in the order the lead set; types it does not know follow."""
    wanted = set(types)
    return [
        {"type": t.type, "key": t.key, "color": t.color}
        for t in label_config.label_types(settings or {}, extra=types)
        if t.type in wanted
    ]


def tags_to_spans(tags: Sequence[str] | None, scheme: str) -> list[list[Any]]:
    """The chunks of ``tags`` (repaired when the sequence is invalid) as JSON-ready spans."""
    if not tags:
        return []
    try:
        found = schemes.spans(tags, scheme)
    except ValueError:
        found = schemes.spans(schemes.repair(tags, scheme), scheme)
    return [[t, s, e] for t, s, e in found]


def spans_to_tags(spans: object, n_tokens: int, scheme: str, types: Sequence[str]) -> list[str]:
    """Tags under ``scheme`` for spans sent by the browser, after checking every field.

    Raises ValueError for anything malformed: a non-list, an unknown type, a span outside the
    sentence, overlapping or unsorted spans.
    """
    if not isinstance(spans, list):
        raise ValueError("spans must be a list")
    allowed = set(types)
    clean: list[tuple[str, int, int]] = []
    for span in spans:
        if not (isinstance(span, list) and len(span) == 3):
            raise ValueError(f"malformed span {span!r}")
        typ, start, end = span
        if typ not in allowed:
            raise ValueError(f"unknown entity type {typ!r}")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise ValueError(f"span bounds must be integers: {span!r}")
        clean.append((typ, start, end))
    clean.sort(key=lambda s: s[1])
    return schemes.from_spans(clean, n_tokens, scheme)


def _confidences(values: Sequence[float] | None) -> list[float | None] | None:
    if values is None:
        return None
    out: list[float | None] = []
    for v in values:
        f = float(v)
        out.append(round(f, 4) if math.isfinite(f) else None)
    return out


def sentence(
    *,
    sid: int,
    tokens: Sequence[str],
    tags: Sequence[str] | None,
    scheme: str,
    confidence: Sequence[float] | None = None,
    least: int | None = None,
    info: str = "",
    prefilled: bool = False,
) -> dict[str, Any]:
    """One sentence as the editor takes it: tokens, spans, per-token confidence. ``prefilled``:
    the spans are the model's (the editor marks them until the annotator changes them)."""
    spans = tags_to_spans(tags, scheme)
    return {
        "sid": int(sid),
        "tokens": [str(t) for t in tokens],
        "spans": spans,
        "pre": spans if prefilled else [],
        "confidence": _confidences(confidence),
        "least": None if least is None else int(least),
        "info": info,
    }


def payload(
    current: dict[str, Any] | None,
    upcoming: Sequence[dict[str, Any]] = (),
    *,
    types: Sequence[str],
    rev: int,
    message: str = "",
    empty: str = "",
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON the editor renders: the current :func:`sentence` (its fields at the top level;
    ``sid`` None and the ``empty`` notice when there is none), the ``upcoming`` ones it shows as
    soon as Enter is pressed, in order, the label keys (``settings``: the project's), the outcome of the last action and ``rev``, which counts
    the actions the server has handled."""
    shown = current or {
        "sid": None, "tokens": [], "spans": [], "pre": [], "confidence": None, "least": None
    }  # fmt: skip
    return {
        **{"info": ""},
        **shown,
        "upcoming": list(upcoming),
        "rev": rev,
        "labels": label_keys(types, settings),
        "message": message,
        "empty": empty,
    }


def token_editor(data: dict[str, Any], *, key: str, on_action: Callable[[], None]) -> Any:
    """Mount the editor; ``on_action`` runs (before the next run) when the browser sends one."""
    return _component(data=data, key=key, on_action_change=on_action, height="content")
