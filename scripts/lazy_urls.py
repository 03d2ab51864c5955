"""Make URL modules name their views instead of importing them (reviewapp.core.http.lazy_views).

    python scripts/lazy_urls.py [FILE ...]     # default: every urls.py / api_urls.py of the project

Each ``from X import views as alias`` whose names serve only as views in ``path(...)`` becomes
``alias = lazy_module("X.views")``, and each ``from X.api import ThingApi`` such a view becomes
``ThingApi = lazy_module("X.api").ThingApi``: the patterns themselves do not change (``alias.page``,
``ThingApi.as_view()``). Imports used for anything else (included pattern lists, side effects) stay.
Idempotent; run it again after adding a URL module or an import to one.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("reviewapp", "benchmarks", "grading")
IMPORT_LINE = "from reviewapp.core.http.lazy_views import lazy_module\n"
EAGER = ("django.urls", "reviewapp.core.http.lazy_views")


def _view_bases(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """Names that views in ``path()`` are written with -> "module" (``alias.page``, ``alias.Api.as_view()``) or
    "name" (``page``, ``Api.as_view()``); and every name used anywhere else."""
    bases: dict[str, str] = {}
    view_nodes: set[int] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("path", "re_path")
                and len(node.args) >= 2):
            continue
        view = node.args[1]
        if isinstance(view, ast.Call) and isinstance(view.func, ast.Attribute) and view.func.attr == "as_view":
            view = view.func.value
        if isinstance(view, ast.Name):
            bases.setdefault(view.id, "name")
            view_nodes.add(id(view))
        elif isinstance(view, ast.Attribute) and isinstance(view.value, ast.Name):
            bases.setdefault(view.value.id, "module")
            view_nodes.add(id(view.value))
    elsewhere = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and id(node) not in view_nodes}
    return bases, elsewhere


def rewrite(path: Path) -> bool:
    source = path.read_text()
    tree = ast.parse(source)
    bases, elsewhere = _view_bases(tree)
    lines = source.splitlines(keepends=True)
    assignments: list[str] = []
    for node in sorted((n for n in tree.body if isinstance(n, ast.ImportFrom)), key=lambda n: -n.lineno):
        if node.level or not node.module or node.module.startswith(EAGER) or node.module == "__future__":
            continue
        lazy = [a for a in node.names if (a.asname or a.name) in bases and (a.asname or a.name) not in elsewhere]
        if not lazy:
            continue
        eager = [a for a in node.names if a not in lazy]
        kept = []
        if eager:
            names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in eager)
            kept.append(f"from {node.module} import {names}\n")
        for alias in reversed(lazy):
            local = alias.asname or alias.name
            if bases[local] == "name":  # a view function or class of the module
                assignments.insert(0, f'{local} = lazy_module("{node.module}").{alias.name}\n')
            else:  # a module of views
                assignments.insert(0, f'{local} = lazy_module("{node.module}.{alias.name}")\n')
        lines[node.lineno - 1:node.end_lineno or node.lineno] = kept
    if not assignments:
        return False
    source = "".join(lines)
    tree = ast.parse(source)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    last = max((n.end_lineno or n.lineno) for n in imports) if imports else 0
    lines = source.splitlines(keepends=True)
    block = ([] if IMPORT_LINE in source else [IMPORT_LINE]) + ["\n", *assignments]
    lines[last:last] = block
    path.write_text("".join(lines))
    return True


def main(argv: list[str]) -> int:
    files = [Path(a).resolve() for a in argv] or sorted(
        p for package in PACKAGES for p in (ROOT / package).rglob("*urls.py"))
    for f in files:
        if rewrite(f):
            print(f"rewrote {f.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
