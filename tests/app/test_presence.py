"""Leases follow the browser (``ui.presence``): a user's leases go back to the pool once their
last browser session has been seen disconnected on two sweeps, not while another tab of theirs
is open, and not on a single missed sweep (a refresh reconnecting)."""

from __future__ import annotations

from pathlib import Path

import pytest

from db import open_database
from db import repository as repo
from db.service import install_demo
from ui import presence


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(presence, "_SESSIONS", {})
    monkeypatch.setattr(presence, "_GONE", set())
    engine = open_database(f"sqlite:///{tmp_path / 'cwal.sqlite3'}")
    project = install_demo(engine)
    a = repo.add_user(engine, "arno", "password one", role="annotator")
    b = repo.add_user(engine, "bea", "password two", role="annotator")
    yield engine, project, a, b
    engine.dispose()


def held(engine, project: int, user: int) -> set[int]:
    return {x.sentence_id for x in repo.active_leases(engine, project) if x.user_id == user}


def registered(monkeypatch: pytest.MonkeyPatch, session: str, user: int) -> None:
    monkeypatch.setattr(presence, "_session_id", lambda: session)
    presence.register(user)


def test_leases_are_released_after_the_last_session_ends(world, monkeypatch) -> None:
    engine, project, a, b = world
    leased_a = set(repo.lease_many(engine, project, a, 3))
    leased_b = set(repo.lease_many(engine, project, b, 3))
    registered(monkeypatch, "tab-a1", a)
    registered(monkeypatch, "tab-a2", a)  # a second tab of arno's
    registered(monkeypatch, "tab-b", b)
    connected = {"tab-a1", "tab-a2", "tab-b"}
    on = connected.__contains__

    assert presence.sweep(engine, on) == []
    connected.discard("tab-a1")  # one of arno's tabs closed: the other still holds his work
    assert presence.sweep(engine, on) == []
    assert presence.sweep(engine, on) == []
    assert held(engine, project, a) == leased_a
    connected.discard("tab-a2")  # his last tab
    assert presence.sweep(engine, on) == []  # seen once: it may be a refresh reconnecting
    assert held(engine, project, a) == leased_a
    assert presence.sweep(engine, on) == [a]
    assert held(engine, project, a) == set()
    assert held(engine, project, b) == leased_b  # bea's tab is open
    again = set(repo.lease_many(engine, project, b, 6))
    assert leased_a <= again  # the released sentences went back to the pool


def test_a_session_back_within_a_sweep_keeps_its_leases(world, monkeypatch) -> None:
    engine, project, a, _ = world
    leased = set(repo.lease_many(engine, project, a, 3))
    registered(monkeypatch, "tab", a)
    connected = {"tab"}
    connected.discard("tab")
    assert presence.sweep(engine, connected.__contains__) == []
    connected.add("tab")  # reconnected (or ran again and registered)
    assert presence.sweep(engine, connected.__contains__) == []
    connected.discard("tab")
    assert presence.sweep(engine, connected.__contains__) == []
    assert held(engine, project, a) == leased
    presence.register(None)  # signed out in that tab: nothing of arno's to keep
    assert presence._SESSIONS == {}
