"""Accounts: signing in and out, the first lead, and the administrators' user management.

Account safety: the first lead needs the one-time setup token (``db.setup_token``) and only one
can ever be created; sign-in attempts are throttled per account name and per client address from
failures kept in the store; a disabled account cannot sign in; anyone changing their own password
(the current one required) stays signed in only in the browser they changed it from."""

from __future__ import annotations

from sqlalchemy import Engine

from db import repository as repo
from db import setup_token
from db.service.guard import Forbidden, lead_only

MIN_PASSWORD = 8


def check_password(password: str) -> str:
    """``password`` when it is long enough (InvalidValueError otherwise)."""
    if len(password) < MIN_PASSWORD:
        raise repo.InvalidValueError(f"choose a password of at least {MIN_PASSWORD} characters")
    return password


class Throttled(Exception):
    """Too many failed sign-ins for this account or from this address: wait ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        minutes = max(1, round(seconds / 60))
        super().__init__(f"Too many failed sign-ins: try again in {minutes} minute(s).")


class Accounts:
    """Sign-in sessions and accounts (part of :class:`db.service.Service`)."""

    engine: Engine

    def needs_setup(self) -> bool:
        """True on a fresh database: no user exists yet, so the first start creates a lead (the
        setup token is printed on the server console then)."""
        if repo.list_users(self.engine):
            return False
        setup_token.setup_token()
        return True

    def sign_in(
        self, name: str, password: str, address: str = "unknown"
    ) -> tuple[repo.UserInfo, str] | None:
        """The user and a new sign-in session's token when the credentials are right and the
        account is enabled; else None. After ``repo.accounts.ACCOUNT_LIMIT`` failures of one
        account name or ``ADDRESS_LIMIT`` from one client address within 15 minutes, attempts
        raise :class:`Throttled` (the password is not even checked) until older ones expire."""
        wait = repo.sign_in_wait(self.engine, name, address)
        if wait > 0:
            raise Throttled(wait)
        user = repo.authenticate(self.engine, name, password)
        repo.record_sign_in(self.engine, name, address, ok=user is not None)
        return None if user is None else (user, repo.create_session(self.engine, user.id))

    def resume(self, token: str | None) -> repo.UserInfo | None:
        """The user of a live sign-in session (None when revoked, expired or unknown)."""
        return repo.session_user(self.engine, token)

    def user(self, user_id: int) -> repo.UserInfo | None:
        """The account with that id, fresh from the store (None once deleted or disabled)."""
        try:
            user = repo.get_user(self.engine, user_id)
        except repo.NotFoundError:
            return None
        return None if user.disabled else user

    def sign_out(self, token: str | None, user_id: int | None) -> None:
        """End the sign-in session and give the user's leased sentences back to the pool."""
        repo.revoke_session(self.engine, token)
        if user_id is not None:
            repo.release_leases(self.engine, user_id)

    def create_first_lead(self, name: str, password: str, token: str) -> tuple[repo.UserInfo, str]:
        """Create the first lead with the setup token printed on the server console, signed in;
        refused once a user exists (two racing creators get exactly one lead)."""
        if not setup_token.check_setup_token(token):
            raise Forbidden("that is not the setup token printed on the server console")
        try:
            user_id = repo.create_first_lead(self.engine, name, check_password(password))
        except repo.SetupOverError as exc:
            raise Forbidden(str(exc)) from None
        setup_token.forget_setup_token()
        return repo.get_user(self.engine, user_id), repo.create_session(self.engine, user_id)

    def change_own_password(
        self,
        actor: repo.UserInfo,
        current: str,
        new: str,
        keep_token: str | None = None,
        address: str = "unknown",
    ) -> None:
        """Any signed-in user changes their own password, giving the current one; every other
        sign-in session of theirs ends (``keep_token``'s, the browser they changed it from,
        stays). A wrong current password counts as a failed sign-in of the account, so guessing
        it is throttled as signing in is (:class:`Throttled`)."""
        wait = repo.sign_in_wait(self.engine, actor.name, address)
        if wait > 0:
            raise Throttled(wait)
        if repo.authenticate(self.engine, actor.name, current) is None:
            repo.record_sign_in(self.engine, actor.name, address, ok=False)
            raise repo.InvalidValueError("that is not your current password")
        repo.set_password(self.engine, actor.id, check_password(new), keep_token)

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
    def set_password(
        self, actor: repo.UserInfo, user_id: int, password: str, keep_token: str | None = None
    ) -> None:
        """Give a user a new password: their sign-in sessions end, except, when a lead changes
        their own, ``keep_token``'s (the browser they changed it from)."""
        keep = keep_token if user_id == actor.id else None
        repo.set_password(self.engine, user_id, check_password(password), keep)

    @lead_only
    def set_disabled(self, actor: repo.UserInfo, user_id: int, disabled: bool) -> None:
        """Disable an account (no sign-in; its sessions end, its leases are freed) or enable it;
        nobody disables their own account, and the last enabled lead stays."""
        if disabled and user_id == actor.id:
            raise repo.InvalidValueError("you cannot disable your own account")
        repo.set_disabled(self.engine, user_id, disabled)
