"""Sign-in sessions (``db.repository.sessions``): the token is never stored, only its SHA-256;
a session ends on sign-out, on expiry and on a password change."""

from __future__ import annotations

import hashlib

from sqlalchemy import select, update

from db import repository as repo
from db.models import SignInSession, utcnow


def stored_hashes(engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(SignInSession.token_hash)).scalars())


def test_a_session_signs_its_user_in_until_revoked(engine) -> None:
    lena = repo.add_user(engine, "lena", "correct horse", role="lead")
    token = repo.create_session(engine, lena)
    assert len(token) >= 40 and token not in str(stored_hashes(engine))
    assert stored_hashes(engine) == {hashlib.sha256(token.encode()).hexdigest()}
    assert repo.session_user(engine, token).name == "lena"
    for wrong in (None, "", token[:-1], token + "x", "x" * 500):
        assert repo.session_user(engine, wrong) is None
    other = repo.create_session(engine, lena)  # a second browser
    repo.revoke_session(engine, token)  # sign-out ends this one only
    assert repo.session_user(engine, token) is None
    assert repo.session_user(engine, other).name == "lena"
    repo.revoke_session(engine, token)  # twice: nothing happens


def test_sessions_end_on_expiry_and_on_a_password_change(engine) -> None:
    lena = repo.add_user(engine, "lena", "correct horse", role="lead")
    arno = repo.add_user(engine, "arno", "correct horse")
    old, mine, his = (repo.create_session(engine, u) for u in (lena, lena, arno))
    with engine.begin() as conn:  # the first one's expiry passes
        digest = hashlib.sha256(old.encode()).hexdigest()
        conn.execute(
            update(SignInSession)
            .where(SignInSession.token_hash == digest)
            .values(expires_at=utcnow())
        )
    assert repo.session_user(engine, old) is None
    assert repo.session_user(engine, mine).name == "lena"
    repo.create_session(engine, arno)  # creating one drops the expired ones
    assert hashlib.sha256(old.encode()).hexdigest() not in stored_hashes(engine)
    repo.set_password(engine, lena, "battery staple")
    assert repo.session_user(engine, mine) is None
    assert repo.session_user(engine, his).name == "arno"
