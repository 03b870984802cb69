"""An annotator changes their own password on My progress: the current one is required, the new
one must be long enough and typed twice alike, and afterwards only this browser stays signed in."""

from __future__ import annotations

from sqlalchemy import func, select

from db import repository as repo
from db.models import SignInFailure
from tests.app.conftest import PASSWORD, app
from ui import auth


def _change(at, current: str, new: str, again: str | None = None):
    fields = {t.label: t for t in at.text_input}
    fields["Current password"].set_value(current)
    fields["New password"].set_value(new)
    fields["New password again"].set_value(new if again is None else again)
    next(b for b in at.button if b.label == "Change password").click()
    return at.run()


def _failures(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(SignInFailure)).scalar_one()


def test_an_annotator_changes_their_own_password(store, users, demo):
    ann = users.annotator
    here = repo.create_session(store.engine, ann.id)
    elsewhere = repo.create_session(store.engine, ann.id)
    lead_session = repo.create_session(store.engine, users.lead.id)
    at = app("pages/progress.py", ann)
    at.session_state[auth.TOKEN_KEY] = here
    at.run()
    assert not at.exception

    _change(at, "not my password", "a brand new password")
    assert [e.value for e in at.error] == ["that is not your current password"]
    assert not at.exception and _failures(store.engine) == 1  # a wrong guess counts
    _change(at, PASSWORD, "a brand new password", "a brand new passwort")
    assert [e.value for e in at.error] == ["the two new passwords differ"]
    _change(at, "not my password", "a brand new password", "a brand new passwort")
    assert [e.value for e in at.error] == ["the two new passwords differ"]
    assert not at.exception and _failures(store.engine) == 1  # a typo is no guess
    _change(at, PASSWORD, "short")
    assert "at least" in at.error[0].value
    assert repo.authenticate(store.engine, "arno", PASSWORD) is not None  # unchanged so far
    assert repo.session_user(store.engine, elsewhere) is not None

    _change(at, PASSWORD, "a brand new password")
    assert not at.error and "Password changed" in at.success[0].value
    assert repo.authenticate(store.engine, "arno", "a brand new password").id == ann.id
    assert repo.authenticate(store.engine, "arno", PASSWORD) is None
    assert repo.session_user(store.engine, here).id == ann.id  # this browser stays signed in
    assert repo.session_user(store.engine, elsewhere) is None  # the others are signed out
    assert repo.session_user(store.engine, lead_session).id == users.lead.id
    at.run()
    assert not at.exception and at.title[0].value == "My progress"
