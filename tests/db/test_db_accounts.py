"""Account safety in the store, on SQLite and PostgreSQL: exactly one first lead however many
race for it, disabled accounts, password changes that end the other sessions, and sign-in
throttling per account name and per client address."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from db import imports
from db import repository as repo
from db.models import utcnow
from db.repository import accounts
from db.store import SqlStore


def test_racing_first_lead_creators_get_exactly_one_lead(backend):
    from db.engine import upgrade

    engine = backend.engine()
    upgrade(engine)
    engines = [backend.engine() for _ in range(4)]
    barrier = threading.Barrier(len(engines))
    outcome: dict[str, object] = {}

    def create(i: int) -> None:
        barrier.wait()
        try:
            outcome[f"u{i}"] = repo.create_first_lead(engines[i], f"u{i}", "a long password")
        except repo.SetupOverError as exc:
            outcome[f"u{i}"] = exc

    try:
        threads = [threading.Thread(target=create, args=(i,)) for i in range(len(engines))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        users = repo.list_users(engine)
        assert len(users) == 1 and users[0].role == "lead"
        winners = [k for k, v in outcome.items() if isinstance(v, int)]
        assert winners == [users[0].name]
        assert sum(isinstance(v, repo.SetupOverError) for v in outcome.values()) == 3
    finally:
        for e in [engine, *engines]:
            e.dispose()


def test_a_disabled_account_cannot_sign_in_and_loses_its_sessions_and_leases(
    engine, people, project, corpus
):
    imports.import_file(engine, project, corpus(5), tags_as="gold")
    ann = people["ann"]
    token = repo.create_session(engine, ann)
    held = repo.lease_next(engine, project, ann, None)
    assert held is not None and repo.active_leases(engine, project)
    repo.set_disabled(engine, ann, True)
    assert repo.get_user(engine, ann).disabled
    assert repo.authenticate(engine, "ann", "pw-ann") is None
    assert repo.session_user(engine, token) is None
    assert repo.active_leases(engine, project) == []
    repo.set_disabled(engine, ann, False)
    assert repo.authenticate(engine, "ann", "pw-ann").id == ann
    assert repo.session_user(engine, token) is None  # the old session stays ended


def test_the_last_enabled_lead_cannot_be_disabled(engine, people):
    with pytest.raises(repo.InvalidValueError, match="last enabled lead"):
        repo.set_disabled(engine, people["lea"], True)
    second = repo.add_user(engine, "leo", "pw-leo-long", role="lead")
    repo.set_disabled(engine, people["lea"], True)
    with pytest.raises(repo.InvalidValueError):
        repo.set_disabled(engine, second, True)


def test_a_password_change_ends_the_other_sessions_only(engine, people):
    here = repo.create_session(engine, people["lea"])
    elsewhere = repo.create_session(engine, people["lea"])
    other_user = repo.create_session(engine, people["bob"])
    repo.set_password(engine, people["lea"], "a new long password", here)
    assert repo.session_user(engine, here).id == people["lea"]
    assert repo.session_user(engine, elsewhere) is None
    assert repo.session_user(engine, other_user).id == people["bob"]
    assert repo.authenticate(engine, "lea", "a new long password") is not None


def test_sign_in_throttling_per_account_and_per_address(engine, people):
    now = utcnow()
    for i in range(accounts.ACCOUNT_LIMIT - 1):
        repo.record_sign_in(engine, "ann", f"10.0.0.{i}", ok=False, now=now)
    assert repo.sign_in_wait(engine, "ann", "10.9.9.9", now=now) == 0
    repo.record_sign_in(engine, "ann", "10.0.0.99", ok=False, now=now)
    # the account waits from any address, the window's length after its failures
    wait = repo.sign_in_wait(engine, "ann", "10.9.9.9", now=now)
    assert wait == pytest.approx(accounts.WINDOW.total_seconds())
    later = now + accounts.WINDOW + timedelta(seconds=1)
    assert repo.sign_in_wait(engine, "ann", "10.9.9.9", now=later) == 0
    assert repo.sign_in_wait(engine, "bob", "10.0.0.1", now=now) == 0  # another account
    # one address guessing many names
    for i in range(accounts.ADDRESS_LIMIT):
        repo.record_sign_in(engine, f"name{i}", "192.168.1.1", ok=False, now=now)
    assert repo.sign_in_wait(engine, "bob", "192.168.1.1", now=now) > 0
    assert repo.sign_in_wait(engine, "bob", "192.168.1.2", now=now) == 0
    # a success clears the account's failures
    repo.record_sign_in(engine, "ann", "10.0.0.1", ok=True, now=now)
    assert repo.sign_in_wait(engine, "ann", "10.0.0.1", now=now) == 0


def test_a_late_submit_is_kept_as_a_second_version_for_adjudication(
    engine, people, project, corpus
):
    from db.repository import versions

    imports.import_file(engine, project, corpus(3), tags_as="gold")
    sid = repo.sentence_ids(engine, project)[0]
    ann, bob = people["ann"], people["bob"]
    t0 = utcnow()
    assert repo.lease_next(engine, project, ann, [sid], ttl=60, now=t0) == sid
    # ann's lease expires; bob takes the sentence and labels it
    later = t0 + timedelta(seconds=120)
    assert repo.lease_next(engine, project, bob, [sid], ttl=60, now=later) == sid
    store = SqlStore(engine)  # what the live service submits through
    gold = store.submit(sid, bob, ["B-NP", "I-NP", "B-VP"], None)
    late = store.submit(sid, ann, ["B-NP", "B-NP", "B-VP"], None)
    rows = repo.annotation_history(engine, sid)
    assert [(r.status, r.user_id) for r in rows] == [
        ("submitted", bob), ("version", bob), ("version", ann)
    ]  # fmt: skip
    assert rows[-1].id == late
    current = repo.current_annotations(engine, project)
    assert [(a.id, a.tags) for a in current] == [(gold, ["B-NP", "I-NP", "B-VP"])]  # kept
    (found,) = versions.disagreements(engine, project)
    assert found.sentence_id == sid and found.differing_tokens == 1
    assert {v.user_id for v in found.versions} == {ann, bob}
    settled = versions.adjudicate(
        engine,
        sid,
        people["lea"],
        ["B-NP", "B-NP", "B-VP"],
        [v.id for v in found.versions],
        "accept",
    )
    assert repo.current_annotations(engine, project)[0].id == settled
    # a lead's Review fix supersedes as before
    fix = repo.submit_annotation(engine, sid, people["lea"], ["O", "O", "O"])
    assert repo.current_annotations(engine, project)[0].id == fix


def test_anyone_changes_their_own_password_with_the_current_one(engine, people):
    from db.service import Service, Throttled

    service = Service(engine)
    ann = repo.get_user(engine, people["ann"])
    here = repo.create_session(engine, ann.id)
    elsewhere = repo.create_session(engine, ann.id)
    with pytest.raises(repo.InvalidValueError, match="current password"):
        service.change_own_password(ann, "pw-bob", "a new long password", here, "10.0.0.1")
    with pytest.raises(repo.InvalidValueError, match="at least"):
        service.change_own_password(ann, "pw-ann", "short", here, "10.0.0.1")
    assert repo.session_user(engine, elsewhere).id == ann.id  # nothing changed yet
    service.change_own_password(ann, "pw-ann", "a new long password", here, "10.0.0.1")
    assert repo.authenticate(engine, "ann", "a new long password").id == ann.id
    assert repo.authenticate(engine, "ann", "pw-ann") is None
    assert repo.session_user(engine, here).id == ann.id
    assert repo.session_user(engine, elsewhere) is None
    # guessing the current password counts as failed sign-ins of the account: throttled
    for _ in range(accounts.ACCOUNT_LIMIT - 1):  # one failure is recorded above already
        with pytest.raises(repo.InvalidValueError):
            service.change_own_password(ann, "a guess", "another long password", here, "10.0.0.2")
    with pytest.raises(Throttled):
        service.change_own_password(
            ann, "a new long password", "another long one", here, "10.0.0.3"
        )
    assert repo.authenticate(engine, "ann", "a new long password") is not None
