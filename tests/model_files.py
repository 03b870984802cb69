"""Model files as an older writer made them: for the tests that old files keep loading."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np


def older_file(data: bytes, version: int, drop_param: str) -> tuple[bytes, dict]:
    """``data`` (a model file) rewritten with format ``version`` and without the learner
    parameter ``drop_param`` (what a writer before that parameter stored); also the original meta."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        parts = {n[:-4]: np.load(io.BytesIO(z.read(n))) for n in z.namelist()}
    meta = json.loads(bytes(parts["meta"]))
    original = json.loads(json.dumps(meta))
    meta["version"] = version
    del meta["params"][drop_param]
    parts["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    buf = io.BytesIO()
    np.savez_compressed(buf, **parts)
    return buf.getvalue(), original
