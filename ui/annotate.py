"""The annotate page's controller: the sentences on screen, and what the editor's actions do.

It talks only to the live service (``next`` / ``submit`` / ``skip`` / ``undo``) and, for
membership, the counters and the undo pre-fill, to ``db.service``. ``AHEAD`` sentences are leased at a time: the
one on screen and the next ones, which the editor already holds, so that Enter shows the next
sentence at once while the answer is being saved (even when the server is one answer behind). The user id always comes from the signed-in session, never
from the browser's message; a message about a sentence that is not the current one (a double
Enter, a stale tab) is ignored.
"""

from __future__ import annotations

import math
import threading
from collections.abc import MutableMapping
from datetime import datetime
from typing import Any

from cwal.live.prefill import prefill_tags as confident_prefill
from db import repository as repo
from db.models import utcnow
from db.service import entity_types
from ui import editor, state

MAX_SECONDS = 6 * 3600.0
AHEAD = 3  # sentences leased to the annotator at a time: the current one and two more


def _seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return round(value, 3) if math.isfinite(value) and 0 <= value <= MAX_SECONDS else None


class Annotator:
    """One user's annotation session on one project; its state lives in ``store``
    (``st.session_state``), so it survives reruns and is private to the browser session."""

    def __init__(
        self,
        service: Any,
        user: repo.UserInfo,
        project: repo.ProjectInfo,
        store: MutableMapping[str, Any],
    ) -> None:
        self.service = service
        self.user_id = user.id
        self.project_id = project.id
        self.scheme = project.settings.get("scheme") or "IOB2"
        self.settings = project.settings
        self.types = entity_types(project.settings)
        # checked again at every action: a member taken off the project stops at once
        self.member = state.service().is_member(user.id, project.id)
        self.s = store.setdefault(
            f"cw_annotate_{project.id}_{user.id}", {"ahead": [], "rev": 0, "message": ""}
        )
        self.lock = self.s.setdefault("lock", threading.RLock())
        with self.lock:
            self.renamed_since = self._follow_label_changes()

    def _follow_label_changes(self) -> datetime | None:
        """After a lead renamed, merged or deleted types, the sentences held ahead show
        their labels under the new names; returns the time the old names were last shown."""
        revision = self.settings.get("labels_revision", 0)
        shown, since = self.s.get("labels_revision"), self.s.get("labels_at")
        self.s["labels_revision"], self.s["labels_at"] = revision, utcnow()
        if shown is None or shown == revision or since is None:
            return None
        mappings = state.service().label_changes_since(self.project_id, since)
        for view in self.s["ahead"]:
            if view.get("tags"):
                view["tags"] = repo.carry_over(view["tags"], mappings, self.scheme)
        return since

    def _carry_spans(self, spans: Any) -> Any:
        """Spans the editor sent in a type's old name, under its new one (dropped to O if the
        type was deleted), when a lead changed the types since the editor was drawn."""
        if self.renamed_since is None or not isinstance(spans, list):
            return spans
        mappings = state.service().label_changes_since(self.project_id, self.renamed_since)
        out = []
        for span in spans:
            if isinstance(span, list) and len(span) == 3 and span[0] not in self.types:
                name: str | None = span[0]
                for mapping in mappings:
                    name = mapping.get(name, name) if name is not None else None
                if name is None:
                    continue
                span = [name, span[1], span[2]]
            out.append(span)
        return out

    def _view(self, suggestion: Any, prefill: list[str] | None = None) -> dict[str, Any]:
        """``prefill``: the user's own undone labels (shown as theirs); otherwise the model's
        confident spans, marked as pre-filled in the editor."""
        tags = prefill if prefill is not None else confident_prefill(
            suggestion.predicted, suggestion.confidence, self.scheme
        )  # fmt: skip
        for t in entity_types({"tagset": tags or []}):
            if t not in self.types:
                self.types.append(t)
        info = (
            f"Sentence #{suggestion.sentence_id} · model v{suggestion.model_version}"
            f" (scored by v{suggestion.scored_version}) · {suggestion.strategy}"
        )
        return {
            "sid": suggestion.sentence_id,
            "tokens": list(suggestion.tokens),
            "tags": list(tags) if tags else None,
            "prefilled": prefill is None,
            "confidence": suggestion.confidence,
            "least": suggestion.least_confident,
            "info": info,
        }

    def _fill(self) -> list[dict[str, Any]]:
        """The sentences held ahead (the one on screen first), topped up to ``AHEAD`` leased
        ones, keeping the order already shown."""
        with self.lock:
            return self._top_up()

    def _top_up(self) -> list[dict[str, Any]]:
        ahead = self.s["ahead"]
        if not self.member:
            ahead.clear()
            return ahead
        if len(ahead) < AHEAD:
            found = {s.sentence_id: s for s in self.service.next(self.user_id, n=AHEAD)}
            prefill = self.s.pop("prefill", None)
            kept = [v for v in ahead if v["sid"] in found]
            fresh = [
                self._view(s, prefill[1] if prefill and prefill[0] == sid else None)
                for sid, s in found.items()
                if sid not in {v["sid"] for v in kept}
            ]
            if prefill:  # the sentence brought back by undo comes first
                fresh.sort(key=lambda v: v["sid"] != prefill[0])
            self.s["ahead"] = ahead = kept + fresh
        return ahead

    def current(self) -> dict[str, Any] | None:
        """The sentence on screen (None when nothing is left to annotate)."""
        ahead = self._fill()
        return ahead[0] if ahead else None

    def payload(self) -> dict[str, Any]:
        """What the editor shows now, and the sentences it shows after the next Enters."""
        with self.lock:
            return self._payload()

    def _payload(self) -> dict[str, Any]:
        ahead = self._fill()
        views = [
            editor.sentence(
                sid=v["sid"],
                tokens=v["tokens"],
                tags=v["tags"],
                scheme=self.scheme,
                confidence=v["confidence"],
                least=v["least"],
                info=v["info"],
                prefilled=v.get("prefilled", False),
            )
            for v in ahead[:AHEAD]
        ]
        return editor.payload(
            views[0] if views else None,
            views[1:],
            types=self.types,
            settings=self.settings,
            rev=self.s["rev"],
            message=self.s["message"],
            empty="Nothing left to annotate in this project: every sentence is labeled, "
            "skipped by you or being labeled by someone else.",
        )

    def handle(self, action: object) -> None:
        """Carry out one editor action: ``submit``, ``skip`` or ``undo``."""
        if not isinstance(action, dict):
            return
        with self.lock:
            self._handle(action)

    def _handle(self, action: dict[str, Any]) -> None:
        self.s["rev"] += 1
        self.s["message"] = ""
        kind = action.get("kind")
        if not self.member:
            self.s["message"] = "Not saved: you are not a member of this project."
            return
        tags: list[str] | None = None
        try:
            if kind == "undo":
                self._undo()
                return
            ahead = self.s["ahead"]
            cur = ahead[0] if ahead else None
            if cur is None or action.get("sid") != cur["sid"]:  # a stale tab, a second Enter
                sid = action.get("sid")
                if kind in ("submit", "skip") and isinstance(sid, int):
                    self.s["message"] = (
                        f"Not saved: sentence #{sid} was already answered (or given back); "
                        "the sentence to label now is on screen."
                    )
                return
            if kind == "submit":
                spans = self._carry_spans(action.get("spans"))
                tags = editor.spans_to_tags(spans, len(cur["tokens"]), self.scheme, self.types)
                self.service.submit(cur["sid"], tags, self.user_id, _seconds(action.get("seconds")))
                self.s["message"] = f"Saved sentence #{cur['sid']}."
            elif kind == "skip":
                self.service.skip(cur["sid"], self.user_id)
                self.s["message"] = f"Skipped sentence #{cur['sid']}."
            else:
                return
            ahead.pop(0)
        except (ValueError, repo.StoreError) as exc:  # a driver failure: StoreFailedError
            self.s["message"] = f"Not saved: {exc}"
            self._keep(tags)

    def _keep(self, tags: list[str] | None) -> None:
        """After a failed submit, the sentence on screen shows the labels the user gave."""
        ahead = self.s["ahead"]
        if tags is not None and ahead:
            ahead[0]["tags"] = list(tags)

    def _undo(self) -> None:
        sentence_id = self.service.undo(self.user_id)
        if sentence_id is None:
            self.s["message"] = "Nothing to undo."
            return
        self.s["prefill"] = (sentence_id, state.service().undone_tags(self.user_id, sentence_id))
        self.s["ahead"] = []  # the store released the other leases
        self.s["message"] = f"Undid your last answer (sentence #{sentence_id}): fix it and submit."

    def counters(self) -> repo.AnnotatorStats | None:
        """This user's work in the project (today, total, pace), fresh from the store."""
        return state.service().counters(self.user_id, self.project_id)
