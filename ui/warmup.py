"""Once per server process, from the app's first script run (the sign-in page, before any lead
page): a daemon thread imports what the lead pages draw with, builds an Altair chart once, and
computes the lead views of the first projects that have a consolidated model
(``db.repository.warm``), so that a lead's first page finds them ready or being computed (it
then waits for that computation instead of starting its own).

``page_run`` wraps every page run (the router's ``navigation.run``): background refreshes of the
lead views start only when no page runs, so they do not slow the page that served a view a few
labels old.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import AbstractContextManager

import streamlit as st

from cwal.supervisor import SUPERVISOR
from db import Database, database_url
from db.repository.views import FOREGROUND, WARMING
from ui import state

log = logging.getLogger(__name__)


def page_run() -> AbstractContextManager[None]:
    """Count the enclosed block as a page run (the router wraps ``navigation.run`` in it)."""
    return FOREGROUND.running()


@st.cache_resource(show_spinner=False)
def _warm_up(url: str, _engine: Database) -> threading.Thread:
    stop = threading.Event()
    return SUPERVISOR.start("cwal-warm-up", warm_up, _engine, stop, stop=stop.set)


def start() -> threading.Thread:
    """Start the process's warm-up for the configured database unless it started already (the
    same thread then)."""
    return _warm_up(database_url(), state.engine())


def warm_up(engine: Database, stop: threading.Event | None = None) -> dict[str, float]:
    """Import and draw once, then compute the views of ``warm.warm_projects``; seconds per
    step (a failure is logged: the pages then compute what they need themselves). ``stop``
    set: the views not started yet are left to the pages."""
    took: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        import altair as alt

        from db.repository import warm
        from ui import charts  # noqa: F401  (altair's schema classes; the pages import it)

        took["imports"] = time.perf_counter() - t0
        _altair_once(alt)
        took["altair"] = time.perf_counter() - t0 - took["imports"]
        projects = warm.warm_projects(engine)
        with WARMING.running():  # the live session's optional idle work waits meanwhile
            warm.warm_up(engine, projects, stop)
        took["views"] = time.perf_counter() - t0 - took["imports"] - took["altair"]
        log.info("warm-up of projects %s done: %s", projects, took)
    except Exception:
        log.exception("warm-up failed")
    return took


def _altair_once(alt) -> None:  # noqa: ANN001
    """Altair validates a chart's spec against the Vega-Lite schema; its first time builds the
    validator and reference resolver (a few hundred ms). Inline values: Streamlit's data
    transformer, enabled process-wide while a page draws, is never involved."""
    values = [{"x": 0, "y": 0.5, "m": "a"}, {"x": 1, "y": 0.6, "m": "a"}]
    chart = (
        alt.Chart(alt.Data(values=values), title="warm-up", height=100)
        .mark_line(point=True)
        .encode(
            x=alt.X("x:Q"), y=alt.Y("y:Q"), color=alt.Color("m:N"), tooltip=[alt.Tooltip("y:Q")]
        )
    )
    chart.to_dict()
