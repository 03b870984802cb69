"""The one-time setup token that guards the creation of the first lead.

While the store has no account, whoever creates the first lead must give this token, so that the
first visitor of a freshly started server cannot take it over. It is ``CWAL_SETUP_TOKEN`` when
set (scripts, tests); otherwise a random token written to ``$CWAL_HOME/setup-token`` (readable
only by its owner) and printed on the server console the first time the sign-in page is shown.
The file is deleted once the first lead exists.
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
from pathlib import Path

from db.engine import data_home

TOKEN_ENV = "CWAL_SETUP_TOKEN"
FILE_NAME = "setup-token"
_printed: set[str] = set()
_lock = threading.Lock()


def token_path() -> Path:
    """Where the random token is kept: ``$CWAL_HOME/setup-token``."""
    return data_home() / FILE_NAME


def setup_token() -> str:
    """The setup token (``CWAL_SETUP_TOKEN``, the file's, or a new random one), printed on the
    server console once per process."""
    given = os.environ.get(TOKEN_ENV)
    with _lock:
        if given:
            token, where = given, f"the environment variable {TOKEN_ENV}"
        else:
            path = token_path()
            try:
                token = path.read_text(encoding="ascii").strip()
            except FileNotFoundError:
                token = ""
            if not token:
                path.parent.mkdir(parents=True, exist_ok=True)
                token = secrets.token_urlsafe(18)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w", encoding="ascii") as out:
                    out.write(token + "\n")
            where = str(path)
        if token not in _printed:
            _printed.add(token)
            print(
                f"\ncwal: no account exists yet. To create the first lead, open the app and "
                f"give this setup token:\n\n    {token}\n\n(also in {where})\n",
                file=sys.stderr,
                flush=True,
            )
    return token


def check_setup_token(given: str) -> bool:
    """True when ``given`` is the setup token (compared in constant time)."""
    return bool(given) and secrets.compare_digest(given.strip(), setup_token())


def forget_setup_token() -> None:
    """Delete the token file once the first lead exists (it is of no use any more)."""
    token_path().unlink(missing_ok=True)
