"""The engine's modules depend one way: no import cycle inside cwal/, no private name imported
from another module. Every import counts, at module level, inside functions and under
``TYPE_CHECKING`` alike: a lower module knows nothing of a higher one."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "cwal"


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, known: set[str]) -> list[tuple[str, str]]:
    """``(module, imported name or "")`` for each import of a module in ``known``; a name that
    is itself a submodule counts as an import of that submodule."""
    out: list[tuple[str, str]] = []
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, "") for a in node.names if a.name in known]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module not in known:
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                out.append((sub, "") if sub in known else (module, alias.name))
    return out


def import_graph(root: Path = ROOT, package: str = "cwal") -> dict[str, dict[str, list[str]]]:
    """Every module of ``package`` under ``root`` -> the package modules it imports -> the names
    it takes from each (empty for ``import x`` or a submodule)."""
    paths = {_module(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph: dict[str, dict[str, list[str]]] = {}
    for name, path in paths.items():
        edges: dict[str, list[str]] = {}
        for module, imported in _imports(path, name, set(paths)):
            if module != name:
                edges.setdefault(module, []).append(imported)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_engine_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 50
    assert cycles(graph) == []


def test_no_private_name_is_imported_across_modules() -> None:
    private = {
        f"{module}.{name}"
        for module, edges in import_graph().items()
        for target, names in edges.items()
        for name in names
        if name.startswith("_") and not name.startswith("__")
    }
    assert private == set()


def test_the_checks_see_a_cycle_and_a_private_import(tmp_path: Path) -> None:
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from toy.sub import low\n")
    (pkg / "sub" / "low.py").write_text("def f():\n    from toy.high import _helper\n")
    (pkg / "high.py").write_text("from .sub.low import f\n_helper = 1\n")
    graph = import_graph(tmp_path, "toy")
    assert cycles(graph) == [["toy.high", "toy.sub.low"]]
    assert graph["toy.sub.low"] == {"toy.high": ["_helper"]}
