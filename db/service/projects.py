"""Projects: creating them (the demo too), their files, settings, exports and backups."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from cwal.io import schemes
from db import backup as backups
from db import exports, imports
from db import repository as repo
from db import simulations as sims
from db.service.guard import lead_only, project_lead_only

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
DEMO_NAME = "Demo: invented news (NER)"
DEMO_TYPES = ("PER", "ORG", "LOC", "MISC")


def tagset(types: Sequence[str], scheme: str) -> list[str]:
    """Every tag of ``types`` under ``scheme``, ``O`` first (the project's ``tagset`` setting)."""
    prefixes = sorted(schemes.get(scheme).alphabet)
    return ["O"] + [f"{p}-{t}" for t in types for p in prefixes]


def entity_types(settings: Mapping[str, Any]) -> list[str]:
    """The entity types a project labels, in the order the lead set (``repo.entity_types``)."""
    return repo.entity_types(settings)


def install_demo(engine: Engine) -> int:
    """Create the built-in demo project on ``engine`` unless it exists; its id. (No role check:
    callers are :meth:`Projects.create_demo_project` and test or benchmark set-ups.)"""
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


class Projects:
    """Project actions (part of :class:`db.service.Service`). ``restart(project_id)`` is called
    after a change a running live session does not pick up (new files, new settings)."""

    engine: Engine
    restart: Callable[[int], None]

    @lead_only
    def create_project(self, actor: repo.UserInfo, name: str, settings: Mapping[str, Any]) -> int:
        """Create an empty project led by its creator; its files come with :meth:`import_upload`."""
        project_id = repo.create_project(self.engine, name, settings)
        repo.set_member(self.engine, project_id, actor.id, "lead")
        return project_id

    @lead_only
    def create_demo_project(self, actor: repo.UserInfo) -> int:
        """Create the built-in demo project (320 sentences to label, 100 gold for evaluation),
        led by the acting lead."""
        project_id = install_demo(self.engine)
        repo.set_member(self.engine, project_id, actor.id, "lead")
        return project_id

    @project_lead_only
    def import_upload(
        self, actor: repo.UserInfo, project_id: int, data: bytes, name: str, **options: Any
    ) -> imports.ImportResult:
        """Import one uploaded file, all or nothing (options of ``db.imports.import_bytes``).
        Tags imported as annotations are credited to the acting lead."""
        if options.get("tags_as") == "annotations":
            options["annotator_id"] = actor.id
        result = imports.import_bytes(self.engine, project_id, data, name, **options)
        self.restart(project_id)  # a running session knows only the pool it started with
        return result

    @project_lead_only
    def discard_import(self, actor: repo.UserInfo, project_id: int, batch_id: int) -> int:
        """Delete an unfinished (interrupted) import of the project and its staged sentences;
        how many (0 when the project has no such unfinished import, e.g. a second click)."""
        if batch_id not in {b.id for b in repo.incomplete_imports(self.engine, project_id)}:
            return 0
        return repo.discard_import(self.engine, batch_id)

    @project_lead_only
    def update_settings(
        self, actor: repo.UserInfo, project_id: int, changes: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Change a project's settings (validated by the store); the live session restarts."""
        settings = repo.update_project_settings(self.engine, project_id, changes)
        repo.learn_pool_clusters(self.engine, project_id, settings)  # turned on before labels
        self.restart(project_id)
        return settings

    @project_lead_only
    def add_label_type(
        self, actor: repo.UserInfo, project_id: int, name: str, **style: Any
    ) -> None:
        """Add an entity type (``color``, ``key`` optional); the live model restarts with it."""
        repo.add_label_type(self.engine, project_id, actor.id, name, **style)
        self.restart(project_id)

    @project_lead_only
    def update_label_type(
        self, actor: repo.UserInfo, project_id: int, name: str, **changes: Any
    ) -> int:
        """Rename, recolour, re-key or move a type (``repo.update_label_type``); after a rename
        the model is rebuilt from the rewritten log. Returns the tag lists rewritten."""
        rewritten = repo.update_label_type(self.engine, project_id, actor.id, name, **changes)
        if changes.get("rename") not in (None, name):
            self.restart(project_id)
        return rewritten

    @project_lead_only
    def remove_label_type(
        self, actor: repo.UserInfo, project_id: int, name: str, into: str | None = None
    ) -> int:
        """Delete a type, its spans merged ``into`` another or dropped to O (``repo.DROP``); the
        model is rebuilt from the rewritten log. Returns the tag lists rewritten."""
        rewritten = repo.remove_label_type(self.engine, project_id, actor.id, name, into=into)
        self.restart(project_id)
        return rewritten

    @project_lead_only
    def export_file(
        self,
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
        """The project's export in any ``cwal.io`` format, as the bytes to download (brat: a zip
        of .txt/.ann pairs; spaCy: a .spacy DocBin). Rows are streamed into the file."""
        filters = {"status": status, "annotator_ids": annotator_ids, "since": since, "until": until}
        with tempfile.TemporaryDirectory(prefix="cwal-export-") as tmp:
            path = Path(tmp) / ("export.zip" if format == "brat" else "export")
            exports.export_annotations(self.engine, project_id, path, format, what=what, **filters)
            return path.read_bytes()

    @project_lead_only
    def start_comparison(
        self,
        actor: repo.UserInfo,
        project_id: int,
        key: str | None,
        name: str = "",
        **settings: Any,
    ) -> str:
        """Launch a new strategy comparison on the project's gold data (``key`` None; ``settings``
        override the project's live configuration) or resume one, in a background process."""
        if key is None:
            project = repo.get_project(self.engine, project_id)
            config = sims.project_config(project.settings, **settings)
            ref = sims.project_ref(project_id)
            key = sims.create_experiment(self.engine, name, config, ref, project_id=project_id)
        sims.launch(self.engine.url.render_as_string(hide_password=False), key)
        return key

    def backup_hint(self) -> str | None:
        """None when the app can take a backup itself (SQLite); else how to take one (pg_dump)."""
        return None if self.engine.url.get_backend_name() == "sqlite" else backups.PG_HINT

    @lead_only
    def backup_database(self, actor: repo.UserInfo) -> bytes:
        """An online backup of the whole SQLite store (also kept under CWAL_HOME/backups)."""
        return backups.backup(self.engine).read_bytes()
