"""The registry keeps one session per project per process: concurrent callers share it, a slow
build of one project's session holds up no other project, a new label revision replaces (and
closes) the old session."""

from __future__ import annotations

import threading
import time

from cwal.live import registry


class Stub:
    def __init__(self) -> None:
        self.closed = False

    def close(self, timeout: float = 30.0) -> None:
        self.closed = True


def test_one_session_per_project_and_builds_do_not_block_each_other() -> None:
    key, release, builds = object(), threading.Event(), []

    def slow() -> Stub:
        builds.append("slow")
        release.wait(10)
        return Stub()

    got: list[object] = []
    callers = [threading.Thread(target=lambda: got.append(registry.get_session(key, 1, slow)))
               for _ in range(3)]  # fmt: skip
    for t in callers:
        t.start()
    time.sleep(0.2)  # project 1's build is under way
    start = time.monotonic()
    other = registry.get_session(key, 2, Stub)  # another project: not held up
    assert time.monotonic() - start < 1.0 and isinstance(other, Stub)
    release.set()
    for t in callers:
        t.join(10)
    assert builds == ["slow"] and len(got) == 3 and got[0] is got[1] is got[2]
    assert registry.get_session(key, 1, Stub) is got[0]
    renamed = registry.get_session(key, 1, Stub, revision=1)  # label types changed
    assert renamed is not got[0] and got[0].closed and not renamed.closed
    registry.drop_session(key, 1)
    registry.drop_session(key, 2)
    assert renamed.closed and other.closed
    assert registry.get_session(key, 1, Stub) is not renamed
    registry.drop_session(key, 1)
