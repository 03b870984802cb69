"""Untrusted text (tokens, file names, user and project names, error messages quoting them) shown
in Markdown-rendering widgets: every Markdown, HTML and shortcode character is escaped, so the text
appears exactly as typed and nothing in it is ever interpreted."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"""([\\`*_{}\[\]()#+\-.!|<>~$:&="'@%^])""")


def md(text: object) -> str:
    """``text`` as Markdown that renders to exactly that text, on one line."""
    flat = " ".join(str(text).splitlines())
    return _SPECIAL.sub(r"\\\1", flat)
