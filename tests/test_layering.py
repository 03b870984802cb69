"""The engine stays UI- and database-free: nothing under cwal/ imports streamlit or sqlalchemy;
the UI stays database-free: nothing under ui/ or pages/ (nor app.py) imports sqlalchemy."""

from __future__ import annotations

import ast
from pathlib import Path

FORBIDDEN = {"streamlit", "sqlalchemy", "alembic", "psycopg", "pickle", "joblib"}
ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "cwal"


# ui/annotate.py still catches SQLAlchemyError; the store now raises repo.StoreFailedError in its
# place (db.store.SqlStore), and the catch moves to that with the file's current bug fix.
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


def test_ui_and_pages_import_no_database_library() -> None:
    files = [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py")), *(ROOT / "pages").glob("*.py")]
    assert len(files) > 20, "no UI modules found"
    offenders = {str(f.relative_to(ROOT)) for f in files if _imported_roots(f) & {"sqlalchemy"}}
    assert offenders == set()


def test_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom sqlalchemy.orm import Session\n", encoding="utf-8")
    assert _imported_roots(bad) & FORBIDDEN == {"sqlalchemy"}
