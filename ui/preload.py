"""The browser's half of the warm-up: a signed-in lead's browser loads the code that draws charts
and tables (Streamlit's lazily imported Vega-Lite and dataframe chunks, about 2 MB of JavaScript)
while the lead is on another page, not after the click on the first lead page.

Without it, a browser's first lead page fetched and evaluated that code after its first chart
element arrived: 0.7-0.9 s of the first dashboard's 1.7-2.2 s. The chunks are imported by their
URLs, as Streamlit's own bundle imports them, so that import then finds them loaded; in an idle
moment (the annotation editor comes first), once per browser page load. Annotators never load
them. A Streamlit build without these chunk files mounts nothing (the pages work as before).
"""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

# The lazy chunks of st.altair_chart and st.dataframe in Streamlit's frontend build.
CHUNKS = ("ArrowVegaLiteChart", "DataFrame")
KEY = "cw_chart_code"

_JS = """
export default function (component) {
  const files = (component.data && component.data.files) || [];
  if (window.__cwChartCode || !files.length) return undefined;
  const index = document.querySelector('script[type="module"][src*="/static/js/index."]');
  if (!index) return undefined;
  window.__cwChartCode = true;
  const load = () => {
    for (const file of files) import(new URL(file, index.src).href).catch(() => {});
  };
  if (window.requestIdleCallback) window.requestIdleCallback(load, { timeout: 500 });
  else window.setTimeout(load, 100);
  return undefined;
}
"""

_component = st.components.v2.component("cwal_chart_code", html="<span></span>", js=_JS)


@functools.cache
def chunk_files(static: Path | None = None) -> tuple[str, ...]:
    """File names of the ``CHUNKS`` in the installed Streamlit's frontend build (each found
    exactly once; a name not found so is left out)."""
    if static is None:
        static = Path(st.__file__).parent / "static" / "static" / "js"
    found = []
    for name in CHUNKS:
        hits = sorted(static.glob(f"{name}.*.js"))
        if len(hits) == 1:
            found.append(hits[0].name)
    return tuple(found)


def chart_code() -> None:
    """Mount, at the sidebar's foot, the invisible element that has the browser import the
    chart and table chunks (once per page load; nothing when no chunk file is known)."""
    files = chunk_files()
    if files:
        with st.sidebar:
            _component(data={"files": list(files)}, key=KEY, height="content")
