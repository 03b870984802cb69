"""Every lead action of the app, each refused (``auth.Forbidden``) unless the acting user is a lead.

Pages pass the signed-in user first; the role is re-read from the store at the moment of the action,
so hiding a button is never the only protection.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from cwal.io import schemes
from db import backup as backups
from db import exports, imports
from db import repository as repo
from ui import state
from ui.auth import lead_only, project_lead_only, project_role_only

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
DEMO_NAME = "Demo: invented news (NER)"
DEMO_TYPES = ("PER", "ORG", "LOC", "MISC")


def tagset(types: Sequence[str], scheme: str) -> list[str]:
    """Every tag of ``types`` under ``scheme``, ``O`` first (the project's ``tagset`` setting)."""
    prefixes = sorted(schemes.get(scheme).alphabet)
    return ["O"] + [f"{p}-{t}" for t in types for p in prefixes]


def entity_types(settings: Mapping[str, Any]) -> list[str]:
    """The entity types a project labels, in the order the lead set (``repo.entity_types``)."""
    return repo.entity_types(settings)


@lead_only
def create_project(actor: repo.UserInfo, name: str, settings: Mapping[str, Any]) -> int:
    """Create an empty project led by its creator; its files come with :func:`import_upload`."""
    project_id = repo.create_project(state.engine(), name, settings)
    repo.set_member(state.engine(), project_id, actor.id, "lead")
    return project_id


@project_lead_only
def import_upload(
    actor: repo.UserInfo, project_id: int, data: bytes, name: str, **options: Any
) -> imports.ImportResult:
    """Import one uploaded file, all or nothing (options of ``db.imports.import_bytes``).
    Tags imported as annotations are credited to the acting lead."""
    if options.get("tags_as") == "annotations":
        options["annotator_id"] = actor.id
    result = imports.import_bytes(state.engine(), project_id, data, name, **options)
    state.reload_live(project_id)  # a running session knows only the pool it started with
    return result


def install_demo(engine: Engine) -> int:
    """Create the built-in demo project on ``engine`` unless it exists; its id. (No role check:
    callers are :func:`create_demo_project` and test or benchmark set-ups.)"""
    existing = repo.find_project(engine, DEMO_NAME)
    if existing is not None:
        return existing.id
    settings = {
        "scheme": "IOB2",
        "tagset": tagset(DEMO_TYPES, "IOB2"),
        "feature_template": "ner",
        "learner": "arow",
    }
    project_id = repo.create_project(engine, DEMO_NAME, settings)
    imports.import_file(engine, project_id, DEMO_DIR / "ner_pool.jsonl", split="pool")
    imports.import_file(engine, project_id, DEMO_DIR / "ner_eval.jsonl", split="eval")
    return project_id


@lead_only
def create_demo_project(actor: repo.UserInfo) -> int:
    """Create the built-in demo project (320 sentences to label, 100 gold for evaluation), led
    by the acting lead."""
    project_id = install_demo(state.engine())
    repo.set_member(state.engine(), project_id, actor.id, "lead")
    return project_id


@project_lead_only
def update_settings(
    actor: repo.UserInfo, project_id: int, changes: Mapping[str, Any]
) -> dict[str, Any]:
    """Change a project's settings (validated by the store); the live session restarts."""
    settings = repo.update_project_settings(state.engine(), project_id, changes)
    state.reload_live(project_id)
    return settings


@project_lead_only
def export_file(
    actor: repo.UserInfo,
    project_id: int,
    format: str,
    *,
    what: str = "labels",
    status: str | None = "submitted",
    annotator_ids: Iterable[int] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> bytes:
    """The project's export in any ``cwal.io`` format, as the bytes to download (brat: a zip of
    .txt/.ann pairs; spaCy: a .spacy DocBin). Rows are streamed into the file."""
    filters = {"status": status, "annotator_ids": annotator_ids, "since": since, "until": until}
    with tempfile.TemporaryDirectory(prefix="cwal-export-") as tmp:
        path = Path(tmp) / ("export.zip" if format == "brat" else "export")
        exports.export_annotations(state.engine(), project_id, path, format, what=what, **filters)
        return path.read_bytes()


@lead_only
def list_users(actor: repo.UserInfo) -> list[repo.UserInfo]:
    """Every account (names and roles)."""
    return repo.list_users(state.engine())


@lead_only
def add_user(actor: repo.UserInfo, name: str, password: str, role: str) -> int:
    """Create an annotator or lead account."""
    return repo.add_user(state.engine(), name, password, role)


@lead_only
def set_role(actor: repo.UserInfo, user_id: int, role: str) -> None:
    """Change a user's role; the last lead cannot be demoted (someone must manage the app)."""
    engine = state.engine()
    leads = repo.list_users(engine, role="lead")
    if role != "lead" and [u.id for u in leads] == [user_id]:
        raise repo.InvalidValueError("the last lead cannot stop being a lead")
    repo.set_role(engine, user_id, role)


@lead_only
def set_password(actor: repo.UserInfo, user_id: int, password: str) -> None:
    """Give a user a new password."""
    repo.set_password(state.engine(), user_id, password)


@project_lead_only
def set_member(actor: repo.UserInfo, project_id: int, user_id: int, role: str) -> None:
    """Add a user to the project, or change their project role; the project keeps a lead."""
    _keep_a_lead(project_id, user_id, role)
    repo.set_member(state.engine(), project_id, user_id, role)


@project_lead_only
def remove_member(actor: repo.UserInfo, project_id: int, user_id: int) -> bool:
    """Take a user off the project (their labels stay); the project keeps a lead."""
    _keep_a_lead(project_id, user_id, None)
    return repo.remove_member(state.engine(), project_id, user_id)


def _keep_a_lead(project_id: int, user_id: int, role: str | None) -> None:
    leads = [m.user_id for m in repo.list_members(state.engine(), project_id) if m.role == "lead"]
    if role != "lead" and leads == [user_id]:
        raise repo.InvalidValueError("the project's last lead cannot stop leading it")


@project_lead_only
def list_members(actor: repo.UserInfo, project_id: int) -> list[repo.MemberInfo]:
    """The project's members and their roles."""
    return repo.list_members(state.engine(), project_id)


@project_lead_only
def accounts(actor: repo.UserInfo, project_id: int) -> list[tuple[int, str]]:
    """``(id, name)`` of every account, for a project lead choosing whom to add."""
    return [(u.id, u.name) for u in repo.list_users(state.engine())]


@project_lead_only
def set_overlap(actor: repo.UserInfo, project_id: int, share: float, k: int) -> None:
    """Set the share (0..1) of pool sentences that ``k`` annotators label independently."""
    repo.set_overlap(state.engine(), project_id, share, k)


@project_role_only("lead", "reviewer")
def adjudicate(
    actor: repo.UserInfo,
    project_id: int,
    sentence_id: int,
    tags: Sequence[str],
    source_ids: Sequence[int],
    method: str,
) -> int:
    """Store the reviewer's decision on an overlap sentence as its gold (the acting user is
    recorded as who decided); the live model learns it when it next reads the log."""
    sentence = repo.get_sentence(state.engine(), sentence_id)
    if sentence.project_id != project_id:
        raise repo.NotFoundError(f"sentence {sentence_id} is not in this project")
    return repo.adjudicate(state.engine(), sentence_id, actor.id, tags, source_ids, method)


@project_lead_only
def discard_import(actor: repo.UserInfo, project_id: int, batch_id: int) -> int:
    """Delete an unfinished (interrupted) import of the project and its staged sentences; how
    many (0 when the project has no such unfinished import, e.g. a second click)."""
    if batch_id not in {b.id for b in repo.incomplete_imports(state.engine(), project_id)}:
        return 0
    return repo.discard_import(state.engine(), batch_id)


@project_lead_only
def save_guidelines(actor: repo.UserInfo, project_id: int, text: str) -> int:
    """Store a new version of the project's guidelines (Markdown); its version number."""
    return repo.save_guidelines(state.engine(), project_id, actor.id, text)


@project_lead_only
def resolve_flag(actor: repo.UserInfo, project_id: int, flag_id: int, resolution: str) -> bool:
    """Close an open flag of the project with a note."""
    return repo.resolve_flag(state.engine(), project_id, flag_id, actor.id, resolution)


@project_role_only("lead", "reviewer", "annotator")
def flag_sentence(actor: repo.UserInfo, project_id: int, sentence_id: int, comment: str) -> int:
    """Any member flags a sentence of the project with a comment for the leads."""
    if repo.get_sentence(state.engine(), sentence_id).project_id != project_id:
        raise repo.NotFoundError(f"sentence {sentence_id} is not in this project")
    return repo.add_flag(state.engine(), sentence_id, actor.id, comment)


def backup_hint() -> str | None:
    """None when the app can take a backup itself (SQLite); else how to take one (pg_dump)."""
    return None if state.engine().url.get_backend_name() == "sqlite" else backups.PG_HINT


@lead_only
def backup_database(actor: repo.UserInfo) -> bytes:
    """An online backup of the whole SQLite store (also kept under CWAL_HOME/backups); its bytes."""
    return backups.backup(state.engine()).read_bytes()


LEAD_ACTIONS = (
    create_project,
    import_upload,
    create_demo_project,
    update_settings,
    export_file,
    list_users,
    add_user,
    set_role,
    set_password,
    set_member,
    remove_member,
    list_members,
    accounts,
    backup_database,
    set_overlap,
    save_guidelines,
    resolve_flag,
    discard_import,
)


@project_lead_only
def add_label_type(actor: repo.UserInfo, project_id: int, name: str, **style: Any) -> None:
    """Add an entity type (``color``, ``key`` optional); the live model restarts with it."""
    repo.add_label_type(state.engine(), project_id, actor.id, name, **style)
    state.reload_live(project_id)


@project_lead_only
def update_label_type(actor: repo.UserInfo, project_id: int, name: str, **changes: Any) -> int:
    """Rename, recolour, re-key or move a type (``repo.update_label_type``); after a rename the
    model is rebuilt from the rewritten log. Returns the tag lists rewritten."""
    rewritten = repo.update_label_type(state.engine(), project_id, actor.id, name, **changes)
    if changes.get("rename") not in (None, name):
        state.reload_live(project_id)
    return rewritten


@project_lead_only
def remove_label_type(
    actor: repo.UserInfo, project_id: int, name: str, into: str | None = None
) -> int:
    """Delete a type, its spans merged ``into`` another or dropped to O (``repo.DROP``); the
    model is rebuilt from the rewritten log. Returns the tag lists rewritten."""
    rewritten = repo.remove_label_type(state.engine(), project_id, actor.id, name, into=into)
    state.reload_live(project_id)
    return rewritten
