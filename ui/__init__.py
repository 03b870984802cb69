"""App-only glue between the Streamlit pages and the store: the sign-in gate and role checks
(``auth``), process-wide resources (``state``), the annotate page's
controller (``annotate``), shared form pieces (``forms``), escaping of untrusted text (``safe``) and
the token editor component (``editor``)."""

from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import RerunData, RerunException, get_script_run_ctx


def _route_every_url_through_the_router() -> None:
    """Streamlit runs a ``pages/`` folder next to ``app.py`` as the old multipage app (each page
    script run alone, without ``app.py``) until ``st.navigation`` is first called. A server
    whose first request was a direct page URL (``/dashboard``) stayed in that mode: this import,
    the first one of ``ui`` in the process, leaves it, and reruns such a run through the router."""
    was = PagesManager.uses_pages_directory
    PagesManager.uses_pages_directory = False
    ctx = get_script_run_ctx()
    if was and ctx is not None:
        page = ctx.pages_manager.intended_page_name or ""
        raise RerunException(RerunData(query_string=ctx.query_string, page_name=page))


_route_every_url_through_the_router()
