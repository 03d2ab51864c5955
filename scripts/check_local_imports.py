"""Fail when too many of the project's imports hide inside functions.

An import inside a function is invisible to a reader of the module's head, and to the import graph that the
import-linter contracts and scripts/check_import_cycles.py are checked on only as a line deep in a body: the
real dependencies of a module are the ones at its top. A few have a reason to stay local, and say it on the
import's line, or on a comment line right above a run of imports:

    # local import: onnxruntime costs ~0.4 s and only the embedding run needs it
    import onnxruntime as ort

Such an import is allowed and not counted. Every other import inside a function (or a method, or a nested
function) counts; the check fails when they are more than MAX_SHARE of all the imports of the packages.
Migrations are generated and left out; so are tests/ and perf/ (outside the packages).

    python scripts/check_local_imports.py          # the figure; exit 1 above the limit
    python scripts/check_local_imports.py --list   # and every counted import, module by module
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The packages whose import graph import-linter checks (pyproject's root_packages).
PACKAGES = ("reviewapp", "benchmarks", "grading", "scoring")
MAX_SHARE = 0.05
MARKER = "# local import:"
Imports = (ast.Import, ast.ImportFrom)
Functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class LocalImport:
    path: str
    line: int
    function: str
    text: str


@dataclass(frozen=True)
class Tally:
    imports: int
    local: tuple[LocalImport, ...]
    allowed: int

    @property
    def share(self) -> float:
        return len(self.local) / self.imports if self.imports else 0.0


def _allowed(node: ast.Import | ast.ImportFrom, lines: list[str], import_lines: set[int]) -> bool:
    """The marker on the import's own lines, or in the comment lines above its run of consecutive imports."""
    end = node.end_lineno or node.lineno
    if any(MARKER in lines[number - 1] for number in range(node.lineno, end + 1)):
        return True
    number = node.lineno - 1
    while number >= 1:
        text = lines[number - 1].strip()
        if MARKER in text and text.startswith("#"):
            return True
        if number not in import_lines and not text.startswith("#"):
            return False
        number -= 1
    return False


def _walk(node: ast.AST, function: str | None) -> Iterator[tuple[ast.Import | ast.ImportFrom, str | None]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, Imports):
            yield child, function
        inner = function
        if isinstance(child, Functions):
            inner = getattr(child, "name", "<lambda>")
        yield from _walk(child, inner)


def tally_source(source: str, path: str) -> tuple[int, list[LocalImport], int]:
    """(imports, counted local imports, allowed local imports) of one module's source."""
    lines = source.splitlines()
    found = list(_walk(ast.parse(source, filename=path), None))
    import_lines = {
        number for node, _ in found for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    local: list[LocalImport] = []
    allowed = 0
    for node, function in found:
        if function is None:
            continue
        if _allowed(node, lines, import_lines):
            allowed += 1
            continue
        local.append(LocalImport(path, node.lineno, function, lines[node.lineno - 1].strip()))
    return len(found), local, allowed


def tally(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> Tally:
    imports = allowed = 0
    local: list[LocalImport] = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            count, found, allowed_here = tally_source(path.read_text(), str(path.relative_to(root)))
            imports += count
            local += found
            allowed += allowed_here
    return Tally(imports, tuple(local), allowed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every counted import inside a function")
    arguments = parser.parse_args(argv)
    result = tally()
    if arguments.list:
        for item in result.local:
            print(f"{item.path}:{item.line} in {item.function}(): {item.text}")
    modules = len({item.path for item in result.local})
    print(
        f"imports inside functions: {len(result.local)} of {result.imports} ({result.share:.1%}) in {modules} "
        f"modules; {result.allowed} more say why ({MARKER!r}); limit {MAX_SHARE:.0%}"
    )
    if result.share > MAX_SHARE:
        print(
            "too many imports inside functions: move them to the top of the module, or say why one must stay "
            f"with {MARKER!r} (a measured start-up cost, an optional dependency)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
