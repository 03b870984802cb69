"""The team of a project: members, overlap, adjudication, guidelines, flags and a lead's fixes."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine

from db import repository as repo
from db.service.guard import project_lead_only, project_role_only


class Team:
    """Team actions (part of :class:`db.service.Service`)."""

    engine: Engine

    @project_lead_only
    def set_member(self, actor: repo.UserInfo, project_id: int, user_id: int, role: str) -> None:
        """Add a user to the project, or change their project role; the project keeps a lead
        (checked atomically by the store)."""
        repo.set_member(self.engine, project_id, user_id, role)

    @project_lead_only
    def remove_member(self, actor: repo.UserInfo, project_id: int, user_id: int) -> bool:
        """Take a user off the project (their labels stay); the project keeps a lead."""
        return repo.remove_member(self.engine, project_id, user_id)

    @project_lead_only
    def list_members(self, actor: repo.UserInfo, project_id: int) -> list[repo.MemberInfo]:
        """The project's members and their roles."""
        return repo.list_members(self.engine, project_id)

    @project_lead_only
    def accounts(self, actor: repo.UserInfo, project_id: int) -> list[tuple[int, str]]:
        """``(id, name)`` of every account, for a project lead choosing whom to add."""
        return [(u.id, u.name) for u in repo.list_users(self.engine)]

    @project_lead_only
    def set_overlap(self, actor: repo.UserInfo, project_id: int, share: float, k: int) -> None:
        """Set the share (0..1) of pool sentences that ``k`` annotators label independently."""
        repo.set_overlap(self.engine, project_id, share, k)

    @project_role_only("lead", "reviewer")
    def adjudicate(
        self,
        actor: repo.UserInfo,
        project_id: int,
        sentence_id: int,
        tags: Sequence[str],
        source_ids: Sequence[int],
        method: str,
    ) -> int:
        """Store the reviewer's decision on an overlap sentence as its gold (the acting user is
        recorded as who decided); the live model learns it when it next reads the log."""
        self._in_project(project_id, sentence_id)
        return repo.adjudicate(self.engine, sentence_id, actor.id, tags, source_ids, method)

    @project_lead_only
    def save_fix(
        self,
        actor: repo.UserInfo,
        project_id: int,
        sentence_id: int,
        tags: Sequence[str],
        seconds: float | None,
    ) -> int:
        """Store a lead's corrected labels from Review (superseding the current annotation)."""
        self._in_project(project_id, sentence_id)
        return repo.submit_annotation(self.engine, sentence_id, actor.id, tags, seconds=seconds)

    @project_lead_only
    def undo_fix(self, actor: repo.UserInfo, project_id: int) -> int | None:
        """Retract the lead's newest label in the project (Review's "Undo last": their last fix,
        or their last answer on Annotate); the sentence's id, None when nothing is left to undo.
        The sentence keeps the label it had before; the live model unlearns it from the log."""
        done = repo.undo_last(self.engine, project_id, actor.id)
        return None if done is None else done.sentence_id

    @project_lead_only
    def save_guidelines(self, actor: repo.UserInfo, project_id: int, text: str) -> int:
        """Store a new version of the project's guidelines (Markdown); its version number."""
        return repo.save_guidelines(self.engine, project_id, actor.id, text)

    @project_lead_only
    def resolve_flag(
        self, actor: repo.UserInfo, project_id: int, flag_id: int, resolution: str
    ) -> bool:
        """Close an open flag of the project with a note."""
        return repo.resolve_flag(self.engine, project_id, flag_id, actor.id, resolution)

    @project_role_only("lead", "reviewer", "annotator")
    def flag_sentence(
        self, actor: repo.UserInfo, project_id: int, sentence_id: int, comment: str
    ) -> int:
        """Any member flags a sentence of the project with a comment for the leads."""
        self._in_project(project_id, sentence_id)
        return repo.add_flag(self.engine, sentence_id, actor.id, comment)

    def _in_project(self, project_id: int, sentence_id: int) -> None:
        if repo.get_sentence(self.engine, sentence_id).project_id != project_id:
            raise repo.NotFoundError(f"sentence {sentence_id} is not in this project")
