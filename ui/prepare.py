"""The model's compiled code, made ready once per server process before the annotator's first
submit, and what Annotate serves meanwhile.

numba compiles the engine's kernels on their first call (30-50 s on a fresh install, a few
seconds when they load from numba's on-disk cache). :func:`start` runs the live service once on a
throwaway copy of the demo project (its own temporary SQLite file): lease, submit, rank, pre-fill,
undo, so that every kernel the annotate path calls is compiled or loaded before a real project
needs it: first in a child process at a lower priority, which fills numba's on-disk cache without
holding the server's GIL, then in a daemon thread of the server, which loads them from there. Until that is done, :func:`service` hands Annotate a
:class:`Preparing` service instead of the project's live session: it stores every answer at once
through the same store operations and leases sentences in pool order, without a pre-fill. The live
session, opened once the kernels are ready, learns those answers from the log like labels stored
by another process.
"""

from __future__ import annotations

import logging
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import streamlit as st

from cwal.live import LiveConfig, ProjectSession, Suggestion
from cwal.supervisor import SUPERVISOR
from db import open_database
from db import repository as repo
from db.store import SqlStore
from ui import state

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parent.parent
NICE = 10  # the child's niceness, added to the server's: its own requests come first
_READY = threading.Event()
WARM_UP_SENTENCES = (
    4  # submitted on the throwaway project: the model's learned, then rank and pre-fill
)
PREPARING = "model being prepared: pool order, no pre-fill"


def warm_kernels() -> float:
    """Run the live service once on a throwaway demo project (every kernel of the annotate path
    compiled or loaded from numba's cache); the seconds it took."""
    from db.service import install_demo  # the demo data and its settings

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cwal-warm-") as tmp:
        engine = open_database(f"sqlite:///{Path(tmp) / 'warm.sqlite3'}")
        session = None
        try:
            user = repo.add_user(engine, "warm-up", secrets.token_hex(16), role="annotator")
            session = ProjectSession(SqlStore(engine), install_demo(engine))
            for _ in range(WARM_UP_SENTENCES):
                shown = session.next(user, n=1)[0]
                tags = ["B-PER"] + ["O"] * (len(shown.tokens) - 1)
                session.submit(shown.sentence_id, tags, user, 1.0)
            session.next(user, n=3)  # ranked by the project's strategy, pre-filled
            session.wait_idle(timeout=600)
            session.undo(user)  # the model rebuilt without the last label
            session.next(user, n=1)
            session.wait_idle(timeout=600)
        finally:
            if session is not None:
                session.close()
            engine.dispose()
    return time.perf_counter() - t0


def compile_apart(timeout_s: float = 1800.0, stop: threading.Event | None = None) -> float:
    """Run :func:`warm_kernels` in a child process at a lower CPU priority: numba compiles into
    its on-disk cache there, without holding this server's GIL (a compile in a thread of the
    server made every request wait seconds); the seconds it took. ``stop`` set: the child is
    killed (``subprocess.SubprocessError``)."""
    t0 = time.perf_counter()
    code = f"import os; os.nice({NICE}); from ui.prepare import warm_kernels; warm_kernels()"
    args = [sys.executable, "-c", code]
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: the child never blocks on it
        child = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        while child.poll() is None:
            if (stop is not None and stop.is_set()) or time.perf_counter() - t0 > timeout_s:
                child.kill()
                child.wait()
                raise subprocess.SubprocessError("compiling apart was stopped or timed out")
            time.sleep(0.1)
        err.seek(0)
        if child.returncode:
            raise subprocess.CalledProcessError(child.returncode, args, stderr=err.read())
    return time.perf_counter() - t0


def _run(stop: threading.Event) -> None:
    try:
        apart = compile_apart(stop=stop)
        log.info("the model's kernels are compiled into numba's cache (%.1f s)", apart)
    except (OSError, subprocess.SubprocessError) as exc:
        why = getattr(exc, "stderr", None) or b""
        log.warning("compiling apart failed (%s %s): the server compiles them", exc, why[-2000:])
    try:
        if stop.is_set():  # the server stops: nothing left to prepare for
            return
        took = warm_kernels()
        log.info("the model's kernels are ready (%.1f s)", took)
    except Exception:
        log.exception("preparing the model's kernels failed: the live sessions compile them")
    finally:
        _READY.set()  # ready or failed: the live session then compiles on first use


@st.cache_resource(show_spinner=False)
def _started() -> threading.Thread:
    stop = threading.Event()
    return SUPERVISOR.start("cwal-kernels", _run, stop, stop=stop.set)


def start() -> threading.Thread:
    """Start preparing the kernels unless this process already did (the same thread then)."""
    return _started()


def ready() -> bool:
    """True once the kernels are compiled or loaded (or preparing them failed)."""
    return _READY.is_set()


class Preparing:
    """Annotate's service while the kernels are being prepared: every answer is stored at once
    (the live session learns it later, from the log); sentences are leased in pool order."""

    def __init__(self, project_id: int) -> None:
        self.store = SqlStore(state.engine())
        self.project_id = project_id
        self.ttl = LiveConfig.from_settings(self.store.settings(project_id)).lease_ttl

    def next(self, annotator_id: int, n: int = 1) -> list[Suggestion]:
        """Lease up to ``n`` sentences (the ones the annotator holds first), without a pre-fill."""
        ids = self.store.lease(self.project_id, annotator_id, None, self.ttl, n)
        return [
            Suggestion(s.id, list(s.tokens), dict(s.columns), None, None, None, 0, 0, PREPARING)
            for s in self.store.pool_sentences(ids)
        ]

    def submit(
        self, sentence_id: int, tags: list[str], annotator_id: int, seconds: float | None = None
    ) -> int:
        return self.store.submit(sentence_id, annotator_id, tags, seconds)

    def skip(self, sentence_id: int, annotator_id: int) -> None:
        self.store.skip(sentence_id, annotator_id)

    def undo(self, annotator_id: int) -> int | None:
        done = self.store.undo(self.project_id, annotator_id, self.ttl)
        return None if done is None else done[1]


def service(project_id: int) -> Any:
    """The project's live session once the kernels are ready, a :class:`Preparing` before."""
    return state.live(project_id) if ready() else Preparing(project_id)
