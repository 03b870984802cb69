"""The engine stays UI- and database-free: nothing under cwal/ imports streamlit or sqlalchemy."""

from __future__ import annotations

import ast
from pathlib import Path

FORBIDDEN = {"streamlit", "sqlalchemy", "alembic", "psycopg", "pickle", "joblib"}
ENGINE = Path(__file__).resolve().parent.parent / "cwal"


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_engine_imports_neither_ui_nor_database() -> None:
    files = sorted(ENGINE.rglob("*.py"))
    assert files, "no engine modules found"
    offenders = {str(f.relative_to(ENGINE)): sorted(_imported_roots(f) & FORBIDDEN) for f in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom sqlalchemy.orm import Session\n", encoding="utf-8")
    assert _imported_roots(bad) & FORBIDDEN == {"sqlalchemy"}
