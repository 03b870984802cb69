"""Accounts: signing in and out, the first lead, and the administrators' user management."""

from __future__ import annotations

from sqlalchemy import Engine

from db import repository as repo
from db.service.guard import Forbidden, lead_only

MIN_PASSWORD = 8


def check_password(password: str) -> str:
    """``password`` when it is long enough (InvalidValueError otherwise)."""
    if len(password) < MIN_PASSWORD:
        raise repo.InvalidValueError(f"choose a password of at least {MIN_PASSWORD} characters")
    return password


class Accounts:
    """Sign-in sessions and accounts (part of :class:`db.service.Service`)."""

    engine: Engine

    def needs_setup(self) -> bool:
        """True on a fresh database: no user exists yet, so the first start creates a lead."""
        return not repo.list_users(self.engine)

    def sign_in(self, name: str, password: str) -> tuple[repo.UserInfo, str] | None:
        """The user and a new sign-in session's token when the credentials are right; else None."""
        user = repo.authenticate(self.engine, name, password)
        return None if user is None else (user, repo.create_session(self.engine, user.id))

    def resume(self, token: str | None) -> repo.UserInfo | None:
        """The user of a live sign-in session (None when revoked, expired or unknown)."""
        return repo.session_user(self.engine, token)

    def user(self, user_id: int) -> repo.UserInfo | None:
        """The account with that id, fresh from the store (None once deleted)."""
        try:
            return repo.get_user(self.engine, user_id)
        except repo.NotFoundError:
            return None

    def sign_out(self, token: str | None, user_id: int | None) -> None:
        """End the sign-in session and give the user's leased sentences back to the pool."""
        repo.revoke_session(self.engine, token)
        if user_id is not None:
            repo.release_leases(self.engine, user_id)

    def create_first_lead(self, name: str, password: str) -> tuple[repo.UserInfo, str]:
        """Create the first lead on an empty database, signed in (refused once a user exists)."""
        if not self.needs_setup():
            raise Forbidden("setup is over: a user already exists; sign in instead")
        user_id = repo.add_user(self.engine, name, check_password(password), role="lead")
        return repo.get_user(self.engine, user_id), repo.create_session(self.engine, user_id)

    def project_role(self, user: repo.UserInfo, project_id: int) -> str | None:
        """The user's role on the project, fresh from the store (None for an outsider)."""
        return repo.project_role(self.engine, project_id, user.id)

    def projects_of(self, user_id: int) -> list[repo.ProjectInfo]:
        """The projects a user may open (every one for an administrator)."""
        return repo.projects_of(self.engine, user_id)

    @lead_only
    def list_users(self, actor: repo.UserInfo) -> list[repo.UserInfo]:
        """Every account (names and roles)."""
        return repo.list_users(self.engine)

    @lead_only
    def add_user(self, actor: repo.UserInfo, name: str, password: str, role: str) -> int:
        """Create an annotator or lead account."""
        return repo.add_user(self.engine, name, check_password(password), role)

    @lead_only
    def set_role(self, actor: repo.UserInfo, user_id: int, role: str) -> None:
        """Change a user's role; the last lead cannot be demoted (the store checks it atomically)."""
        repo.set_role(self.engine, user_id, role)

    @lead_only
    def set_password(self, actor: repo.UserInfo, user_id: int, password: str) -> None:
        """Give a user a new password (their sign-in sessions end)."""
        repo.set_password(self.engine, user_id, check_password(password))
