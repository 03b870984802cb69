"""What an annotator's screen needs besides the live service's next / submit / skip / undo."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine

from db import repository as repo


class Annotation:
    """Annotation reads and rules (part of :class:`db.service.Service`)."""

    engine: Engine

    def is_member(self, user_id: int, project_id: int) -> bool:
        """True while the user may annotate the project (a member taken off it stops at once)."""
        return repo.project_role(self.engine, project_id, user_id) is not None

    def undone_tags(self, user_id: int, sentence_id: int) -> list[str] | None:
        """The labels the user's last undone answer on the sentence held (the editor shows them
        again to be fixed); None when the undone answer was someone else's or there is none."""
        history = repo.annotation_history(self.engine, sentence_id)
        undo = next((e for e in reversed(history) if e.status == "undone"), None)
        if undo is None:
            return None
        undone = next((e for e in history if e.id == undo.supersedes_id), None)
        return undone.tags if undone is not None and undone.user_id == user_id else None

    def label_changes_since(self, project_id: int, since: datetime) -> list[dict[str, str | None]]:
        """The project's renames and merges of entity types after ``since`` (the annotate
        screen carries the labels on screen over to the new names)."""
        return repo.mappings_since(self.engine, project_id, since)

    def counters(self, user_id: int, project_id: int) -> repo.AnnotatorStats | None:
        """The user's work in the project (today, total, pace), fresh from the store."""
        for row in repo.annotator_stats(self.engine, project_id):
            if row.user_id == user_id:
                return row
        return None
