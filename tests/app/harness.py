"""Drive the real app in a real browser: start ``streamlit run app.py`` on a given database, open
Debian's Chromium through Playwright (never a downloaded browser), sign in, work the token editor.

Shared by the end-to-end tests (``tests/app/test_browser.py``) and ``bench/browser.py``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CWAL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EDITOR = ".cw-editor"
_SERVERS: dict[str, subprocess.Popen] = {}  # base URL -> the running server
READY = '.cw-editor[data-ready="1"]'

# Installed in the page: from an Enter key press to (1) the next sentence shown and editable (the
# editor's data-sid changes while data-ready is 1), measured after the next paint, and (2) the
# server's answer arriving (data-rev changes: the submission is stored and the model updated).
LATENCY_PROBE = """
() => {
  if (window.__cwProbe) return;
  const probe = { pressed: null, saving: [], results: [], saved: [], lastSid: null,
                  lastRev: null, watched: null };
  window.__cwProbe = probe;
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { probe.pressed = performance.now(); probe.saving.push(probe.pressed); }
  }, true);
  const check = (root) => {
    const sid = root.dataset.sid;
    if (root.dataset.ready === '1' && sid !== probe.lastSid) {
      probe.lastSid = sid;
      if (probe.pressed !== null) {
        const pressed = probe.pressed;
        probe.pressed = null;
        requestAnimationFrame(() => probe.results.push(performance.now() - pressed));
      }
    }
    if (root.dataset.rev !== probe.lastRev) {
      probe.lastRev = root.dataset.rev;
      if (probe.saving.length) probe.saved.push(performance.now() - probe.saving.shift());
    }
  };
  const attach = () => {
    // the editor's host among the page's components (the sign-in cookie is one too)
    const hosts = document.querySelectorAll('[data-testid="stBidiComponentIsolated"]');
    const root = Array.from(hosts).map((h) => h.shadowRoot && h.shadowRoot.querySelector(
      '.cw-editor')).find((r) => r) || null;
    if (root && root !== probe.watched) {
      probe.watched = root;
      probe.lastSid = root.dataset.ready === '1' ? root.dataset.sid : null;
      probe.lastRev = root.dataset.rev;
      new MutationObserver(() => check(root)).observe(root, { attributes: true });
    }
  };
  setInterval(attach, 50);
  attach();
}
"""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setup_token(home: Path, timeout: float = 60.0) -> str:
    """The setup token a server on ``home`` asks for before the first lead exists: the
    ``CWAL_SETUP_TOKEN`` it inherited, else the one it wrote to ``home/setup-token`` (and printed
    on its console) when the sign-in page was first shown."""
    if os.environ.get("CWAL_SETUP_TOKEN"):
        return os.environ["CWAL_SETUP_TOKEN"]
    path = home / "setup-token"
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text().strip():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server wrote no setup token to {path}")
        time.sleep(0.1)
    return path.read_text().strip()


@contextmanager
def app_server(
    database_url: str,
    home: Path,
    *,
    script: str = "app.py",
    env: dict[str, str] | None = None,
    timeout: float = 90.0,
    port: int | None = None,
) -> Iterator[str]:
    """Run ``streamlit run <script>`` on ``database_url`` (on ``port``, or a free one) and yield
    its base URL; stopped after (:func:`kill_server` kills it before)."""
    port = port or free_port()
    env = {**os.environ, **(env or {}), "CWAL_DATABASE_URL": database_url, "CWAL_HOME": str(home)}
    cmd = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.headless=true", f"--server.port={port}", "--server.address=127.0.0.1",
        "--browser.gatherUsageStats=false", "--server.fileWatcherType=none",
        "--global.developmentMode=false", "--client.toolbarMode=minimal",
    ]  # fmt: skip
    log = open(home / "streamlit.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    _SERVERS[base] = proc
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited early: {(home / 'streamlit.log').read_text()}"
                )
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("streamlit did not become healthy in time")
            time.sleep(0.2)
        yield base
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        _SERVERS.pop(base, None)
        log.close()


def server_pid(base: str) -> int:
    """The process id of the server at ``base``."""
    return _SERVERS[base].pid


def kill_server(base: str) -> None:
    """Kill the server at ``base`` (and its children) at once, as a crash would: SIGKILL."""
    proc = _SERVERS[base]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextmanager
def chromium(viewport: tuple[int, int] = (1280, 900)) -> Iterator[Any]:
    """A Playwright page in Debian's headless Chromium (``executable_path``, no download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": viewport[0], "height": viewport[1]}, accept_downloads=True
            )
            yield context.new_page()
        finally:
            browser.close()


def sign_in(page: Any, base: str, name: str, password: str) -> None:
    """Open the app and sign in through its form."""
    page.goto(base)
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()


def sign_out(page: Any) -> None:
    """Press Sign out and wait for the sign-in form, as a user does: leaving at once (a new URL)
    can close the page before the server ran the sign-out, which then never happens."""
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="Sign in").wait_for()


def wait_ready(page: Any, previous: int | None = None, timeout: float = 60.0) -> int:
    """Wait until the editor shows an editable sentence other than ``previous``; its id."""
    selector = READY if previous is None else f'{READY}:not([data-sid="{previous}"])'
    page.locator(selector).wait_for(timeout=timeout * 1000)
    return int(page.locator(EDITOR).get_attribute("data-sid"))


def token(page: Any, i: int) -> Any:
    """The locator of token ``i`` in the editor."""
    return page.locator(f'.cw-tok[data-i="{i}"]')


def tokens(page: Any) -> list[str]:
    """The tokens the editor shows, as the page's text (what a person reads)."""
    return page.locator(".cw-tok").evaluate_all(
        "nodes => nodes.map(n => n.firstChild ? n.firstChild.textContent : '')"
    )


def shown_tags(page: Any) -> list[str]:
    """The IOB2-style tag each token shows (``data-tag``)."""
    return page.locator(".cw-tok").evaluate_all("nodes => nodes.map(n => n.dataset.tag)")


def install_probe(page: Any) -> None:
    """Start measuring Enter-to-next-sentence latency inside the page."""
    page.evaluate(LATENCY_PROBE)


def probe_results(page: Any) -> tuple[list[float], list[float]]:
    """Latencies (ms) the probe has measured so far: Enter to the next sentence editable, and
    Enter to the server's answer (the submission saved)."""
    got = page.evaluate(
        "() => window.__cwProbe ? [window.__cwProbe.results, window.__cwProbe.saved] : [[], []]"
    )
    return list(got[0]), list(got[1])


def seed(database_url: str, users: Sequence[tuple[str, str, str]]) -> dict[str, int]:
    """Create users ``(name, password, role)`` on a fresh database; their ids by name."""
    from db import open_database
    from db import repository as repo

    engine = open_database(database_url)
    ids = {name: repo.add_user(engine, name, password, role) for name, password, role in users}
    engine.dispose()
    return ids
