"""Users authenticate with salted scrypt hashes; projects keep their settings as one document."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select

from db.models import User
from db.repository import (
    DEFAULT_SETTINGS,
    DuplicateError,
    InvalidValueError,
    NotFoundError,
    add_user,
    authenticate,
    create_project,
    find_project,
    find_user,
    get_project,
    get_user,
    hash_password,
    list_projects,
    list_users,
    set_password,
    set_role,
    update_project_settings,
    verify_password,
)


def test_password_hash_is_salted_scrypt_checked_independently():
    stored = hash_password("s3cret")
    kind, n, r, p, salt, key = stored.split("$")
    assert kind == "scrypt"
    expected = hashlib.scrypt(
        b"s3cret", salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=len(key) // 2
    )
    assert expected.hex() == key
    assert hash_password("s3cret") != stored  # a fresh salt each time
    assert verify_password("s3cret", stored)
    assert not verify_password("s3cret ", stored)
    assert not verify_password("s3cret", "md5$abc")
    assert not verify_password("s3cret", "garbage")


def test_users_authenticate(engine):
    ann = add_user(engine, "ann", "pw-ann")
    lea = add_user(engine, "lea", "pw-lea", role="lead")
    assert authenticate(engine, "ann", "pw-ann").id == ann
    assert authenticate(engine, "ann", "pw-lea") is None
    assert authenticate(engine, "nobody", "pw-ann") is None
    assert authenticate(engine, "ANN", "pw-ann") is None
    assert [(u.name, u.role) for u in list_users(engine)] == [("ann", "annotator"), ("lea", "lead")]
    assert [u.id for u in list_users(engine, role="lead")] == [lea]
    with engine.connect() as conn:
        stored = conn.execute(select(User.password_hash).where(User.id == ann)).scalar_one()
    assert "pw-ann" not in stored and stored.startswith("scrypt$")


def test_password_and_role_changes(engine):
    ann = add_user(engine, "ann", "old")
    set_password(engine, ann, "new")
    assert authenticate(engine, "ann", "old") is None
    assert authenticate(engine, "ann", "new").id == ann
    set_role(engine, ann, "lead")
    assert get_user(engine, ann).role == "lead"
    assert find_user(engine, "ann").id == ann and find_user(engine, "zed") is None
    with pytest.raises(NotFoundError):
        set_password(engine, 999, "x")
    with pytest.raises(InvalidValueError):
        set_role(engine, ann, "admin")


def test_user_input_is_checked(engine):
    add_user(engine, "ann", "pw")
    with pytest.raises(DuplicateError):
        add_user(engine, "ann", "other")
    with pytest.raises(InvalidValueError):
        add_user(engine, "bob", "")
    with pytest.raises(InvalidValueError):
        add_user(engine, "bob", "pw", role="root")
    with pytest.raises(InvalidValueError):
        add_user(engine, "   ", "pw")
    assert [u.name for u in list_users(engine)] == ["ann"]


def test_project_settings_merge_over_defaults(engine):
    pid = create_project(engine, "ner-es", {"feature_template": "ner", "tagset": ["O", "B-PER"]})
    info = get_project(engine, pid)
    assert info.name == "ner-es" and find_project(engine, "ner-es").id == pid
    assert info.settings == {
        **DEFAULT_SETTINGS,
        "feature_template": "ner",
        "tagset": ["O", "B-PER"],
    }
    new = update_project_settings(
        engine, pid, {"strategy": "kd-fixed", "learner_params": {"c": 0.5}, "scheme": "bio"}
    )
    assert new["scheme"] == "IOB2" and new["learner_params"] == {"c": 0.5}
    assert get_project(engine, pid).settings == new
    assert [p.id for p in list_projects(engine)] == [pid]


@pytest.mark.parametrize(
    "bad",
    [
        {"scheme": "XYZ"},
        {"tagset": ["O", "O"]},
        {"tagset": "O B-NP"},
        {"consolidation_interval": 0},
        {"lease_ttl_seconds": -5},
        {"strict_scheme": "yes"},
        {"learner": ""},
        {"learner_params": [1, 2]},
        {"extra": float("nan")},
        {"extra": object()},
    ],
)
def test_bad_settings_are_refused(engine, bad):
    pid = create_project(engine, "p")
    before = get_project(engine, pid).settings
    with pytest.raises(InvalidValueError):
        update_project_settings(engine, pid, bad)
    with pytest.raises(InvalidValueError):
        create_project(engine, "q", bad)
    assert get_project(engine, pid).settings == before
    assert find_project(engine, "q") is None


def test_project_names_are_unique_and_lookups_fail_clearly(engine):
    create_project(engine, "p")
    with pytest.raises(DuplicateError):
        create_project(engine, "p")
    with pytest.raises(NotFoundError):
        get_project(engine, 12345)
    with pytest.raises(NotFoundError):
        update_project_settings(engine, 12345, {"learner": "cw"})
