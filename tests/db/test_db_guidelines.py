"""Guidelines are versioned, flags are opened by members and resolved once (both backends)."""

from __future__ import annotations

import pytest

from db import imports
from db import repository as repo


def test_guidelines_are_versioned(engine, project, people):
    assert repo.latest_guidelines(engine, project) is None
    assert repo.save_guidelines(engine, project, people["lea"], "# Rules\nNP only") == 1
    assert repo.save_guidelines(engine, project, people["lea"], "# Rules\nNP and VP") == 2
    latest = repo.latest_guidelines(engine, project)
    assert (latest.version, latest.text, latest.author) == (2, "# Rules\nNP and VP", "lea")
    assert [v.version for v in repo.guideline_versions(engine, project)] == [2, 1]
    with pytest.raises(repo.InvalidValueError):
        repo.save_guidelines(engine, project, people["lea"], "x" * 200_001)
    assert repo.latest_guidelines(engine, project).version == 2


def test_flags_open_and_resolve_once(engine, project, people, corpus):
    imports.import_file(engine, project, corpus(3))
    sid = repo.sentence_ids(engine, project)[1]
    fid = repo.add_flag(engine, sid, people["ann"], "is 'w1b' a verb?")
    with pytest.raises(repo.InvalidValueError):
        repo.add_flag(engine, sid, people["ann"], "   ")
    (flag,) = repo.list_flags(engine, project)
    assert (flag.id, flag.sentence_id, flag.author, flag.tokens) == (fid, sid, "ann",
                                                                     ["w1a", "w1b", "w1c"])  # fmt: skip
    assert repo.resolve_flag(engine, project, fid, people["lea"], "yes, VP")
    assert not repo.resolve_flag(engine, project, fid, people["lea"], "again")
    assert repo.list_flags(engine, project) == []
    (closed,) = repo.list_flags(engine, project, open_only=False)
    assert (closed.resolver, closed.resolution) == ("lea", "yes, VP")
