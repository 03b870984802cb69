"""The last lead stays a lead, even when two leads step down at the same moment.

Each test runs two threads (two connections) that each demote or remove a different one of two
leads. Both threads are held just before their write until the other one arrives (or 1 s has
passed): a check that reads the leads without locking them lets both through, which leaves no
lead; the store's check must let exactly one through. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import pytest
from sqlalchemy import event

from db import repository as repo

WRITES = ("UPDATE users ", "UPDATE memberships ", "DELETE FROM memberships ")


def _race(engine, first: Callable[[], object], second: Callable[[], object]) -> list[str]:
    """Run both calls at once, each held at its write until both are there; their outcomes."""
    barrier = threading.Barrier(2)

    def hold(conn, cursor, statement, *args) -> None:
        if statement.lstrip().startswith(WRITES):
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=1.0)

    outcomes: list[str] = []

    def run(call: Callable[[], object]) -> None:
        try:
            call()
            outcomes.append("done")
        except repo.InvalidValueError:
            outcomes.append("refused")

    event.listen(engine, "before_cursor_execute", hold)
    try:
        threads = [threading.Thread(target=run, args=(c,)) for c in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
    finally:
        event.remove(engine, "before_cursor_execute", hold)
    return sorted(outcomes)


def test_two_administrators_demoting_each_other_leave_one(engine) -> None:
    a = repo.add_user(engine, "ada", "pw-ada-long", role="lead")
    b = repo.add_user(engine, "bea", "pw-bea-long", role="lead")
    outcomes = _race(
        engine,
        lambda: repo.set_role(engine, a, "annotator"),
        lambda: repo.set_role(engine, b, "annotator"),
    )
    assert outcomes == ["done", "refused"]
    assert len(repo.list_users(engine, role="lead")) == 1


@pytest.mark.parametrize("how", ["demote", "remove"])
def test_two_project_leads_stepping_down_at_once_leave_one(engine, project, people, how) -> None:
    a, b = people["ann"], people["bob"]
    repo.set_member(engine, project, a, "lead")
    repo.set_member(engine, project, b, "lead")

    def step_down(user_id: int) -> Callable[[], object]:
        if how == "demote":
            return lambda: repo.set_member(engine, project, user_id, "annotator")
        return lambda: repo.remove_member(engine, project, user_id)

    assert _race(engine, step_down(a), step_down(b)) == ["done", "refused"]
    leads = [m.user_id for m in repo.list_members(engine, project) if m.role == "lead"]
    assert len(leads) == 1


def test_the_last_lead_is_refused_and_others_pass(engine, project, people) -> None:
    lea = people["lea"]
    with pytest.raises(repo.InvalidValueError):
        repo.set_role(engine, lea, "annotator")
    repo.set_member(engine, project, people["ann"], "lead")
    with pytest.raises(repo.InvalidValueError):
        repo.remove_member(engine, project, people["ann"])
    repo.set_member(engine, project, people["bob"], "annotator")
    assert repo.remove_member(engine, project, people["bob"])  # not a lead: no rule applies
    repo.set_member(engine, project, people["bob"], "lead")
    repo.set_member(engine, project, people["ann"], "reviewer")  # bob still leads
    assert repo.get_user(engine, lea).role == "lead"
