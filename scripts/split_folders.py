"""Split reviewapp/core/ and reviewapp/review/ into feature folders, and rewrite every reference to a moved module.

    python scripts/split_folders.py            # move what is still in place, rewrite references, report widths
    python scripts/split_folders.py --dry-run  # print what would move and which files would change

1. Each entry of MOVES whose source module still exists is moved with ``git mv`` (a new folder gets an
   ``__init__.py`` holding the docstring in PACKAGES). An entry whose source is gone is skipped.
2. Every tracked or new file of the repository (not README.md, CHANGELOG.md or this script) is rewritten:
   Python imports (``from a.b import c``, ``from a import b``, ``import a.b as c``, also inside functions),
   dotted names in code, strings and comments (``mock.patch("a.b.f")``, ``lazy_module("a.b")``, settings,
   import-linter contracts) and ``reviewapp/core/x.py`` paths. Then ``ruff --select I001 --fix`` sorts the
   imports of the files it changed.
3. It is idempotent: a second run moves nothing and changes no file. Run it again after merging code written
   against the old layout; it rewrites that code too.

A folder may take the name of a module that moves into it (``review/workspace.py`` -> ``review/workspace/``):
after the move, ``reviewapp.review.workspace.<name>`` is left alone when ``<name>`` is a module of the new
folder, and rewritten otherwise (it then names something of the old module).

No task, model, migration, template tag, management command or app config moves: app labels, migration paths,
template libraries and Celery task names stay what they were.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from house_rules import too_wide  # the width rule has one owner: make lint's house rules

ROOT = Path(__file__).resolve().parents[1]

# old module -> new module (dotted). The order is the order of the moves; nothing depends on it.
MOVES: tuple[tuple[str, str], ...] = (
    # core/auth/: who a user is, what their role lets them do, how they sign in, what was changed about them.
    ("reviewapp.core.access", "reviewapp.core.auth.roles"),
    ("reviewapp.core.accounts", "reviewapp.core.auth.accounts"),
    ("reviewapp.core.audit", "reviewapp.core.auth.audit"),
    ("reviewapp.core.auth", "reviewapp.core.auth.credentials"),
    ("reviewapp.core.signin", "reviewapp.core.auth.signin"),
    ("reviewapp.core.schema", "reviewapp.core.auth.schema"),
    # core/http/: what every request and response goes through: API helpers, bounded JSON, middleware, files.
    ("reviewapp.core.api", "reviewapp.core.http.api"),
    ("reviewapp.core.api_filters", "reviewapp.core.http.api_filters"),
    ("reviewapp.core.api_parsers", "reviewapp.core.http.api_parsers"),
    ("reviewapp.core.json_input", "reviewapp.core.http.json_input"),
    ("reviewapp.core.middleware", "reviewapp.core.http.middleware"),
    ("reviewapp.core.lazy_views", "reviewapp.core.http.lazy_views"),
    ("reviewapp.core.log_filters", "reviewapp.core.http.log_filters"),
    ("reviewapp.core.csv_export", "reviewapp.core.exports.csv_export"),
    ("reviewapp.core.pdf", "reviewapp.core.exports.pdf"),
    # core/records/: what people made is kept: hashed, storable, append-only (backup.py stays: it reads apps.py).
    ("reviewapp.core.append_only", "reviewapp.core.records.append_only"),
    ("reviewapp.core.hashing", "reviewapp.core.records.hashing"),
    ("reviewapp.core.storable", "reviewapp.core.records.storable"),
    # review/workspace/: the reviewer's side: their queue, skip and undo, where a passage sits, staleness.
    ("reviewapp.review.workspace", "reviewapp.review.workspace.skips"),
    ("reviewapp.review.queue", "reviewapp.review.workspace.queue"),
    ("reviewapp.review.passage_location", "reviewapp.review.workspace.passage_location"),
    ("reviewapp.review.staleness", "reviewapp.review.workspace.staleness"),
    # review/assignment/: who holds which item: the one placing function and judge once (below the services).
    ("reviewapp.review.assign", "reviewapp.review.assignment.assign"),
    ("reviewapp.review.reuse", "reviewapp.review.assignment.reuse"),
    # review/pools/: a pool's settings after it is declared: guidelines, known answers, unassign and reassign.
    ("reviewapp.review.guidelines", "reviewapp.review.pools.guidelines"),
    ("reviewapp.review.known_answers", "reviewapp.review.pools.known_answers"),
    ("reviewapp.review.pool_admin", "reviewapp.review.pools.pool_admin"),
    # review/people/: who holds what, a reviewer's account, reliability (admin pages under /review/admin/).
    ("reviewapp.review.admin_views", "reviewapp.review.people.views"),
    ("reviewapp.review.workload", "reviewapp.review.people.workload"),
    # review/agreement/: a pool's judgments read together: progress, agreement, disagreements, exports.
    ("reviewapp.review.agreement", "reviewapp.review.agreement.selectors"),
    ("reviewapp.review.disagreements", "reviewapp.review.agreement.disagreements"),
    ("reviewapp.review.exports", "reviewapp.review.agreement.exports"),
    # review/workspace/: the stored order and per-pool tallies that make the queue an index lookup.
    ("reviewapp.review.queue_order", "reviewapp.review.workspace.queue_order"),
    ("reviewapp.review.queue_tally", "reviewapp.review.workspace.queue_tally"),
    # providers/local/: the offline model's own pieces (its embeddings, the grade distributions it maps to).
    ("reviewapp.providers.embeddings", "reviewapp.providers.local.embeddings"),
    ("reviewapp.providers.distributions", "reviewapp.providers.local.distributions"),
    # benchmarks/reports/reading/: what a reader is told, the one page to send among it.
    ("benchmarks.reports.summary", "benchmarks.reports.reading.summary"),
    # grading/audits/judging/: how a judge is asked, and what it is shown of a candidate.
    ("grading.audits.judges", "grading.audits.judging.judges"),
    ("grading.audits.excerpts", "grading.audits.judging.excerpts"),
    # benchmarks/corpus/formats/: every official format's parser, beside the eCFR one (room for corpus/urls.py).
    ("benchmarks.corpus.hrs_json", "benchmarks.corpus.formats.hrs_json"),
    ("benchmarks.corpus.nrs_html", "benchmarks.corpus.formats.nrs_html"),
    ("benchmarks.corpus.uslm_xml", "benchmarks.corpus.formats.uslm_xml"),
    # benchmarks/reports/exports/: the files of a report and of a leaderboard (room for reports/urls.py).
    ("benchmarks.reports.exports", "benchmarks.reports.exports.report"),
    ("benchmarks.reports.leaderboard_exports", "benchmarks.reports.exports.leaderboard"),
    # The CUAD grading bench is run by perf/ only (room for grading/scorecard/urls.py).
    ("grading.scorecard.bench", "perf.cuad.grading_bench"),
)

# The docstring of each new folder's __init__.py.
PACKAGES: dict[str, str] = {
    "reviewapp.core.auth": "Who a user is and what they may do: roles, accounts and invitations, sign-in limits and "
                           "API tokens, how a session signed in, the account audit log.",
    "reviewapp.core.http": "What every request and response goes through: API helpers, filters and parsers, bounded "
                           "JSON, middleware, lazily imported views, log filters, the one CSV writer and PDF path.",
    "reviewapp.core.records": "What people made is kept: one way to hash, text every database can store, "
                              "append-only tables enforced by the database.",
    "reviewapp.review.workspace": "The reviewer's side: their queue, skip and undo, where the passage sits in its "
                                  "source, whether a judgment is stale.",
    "reviewapp.review.assignment": "Who holds which item: the one function that puts items in front of reviewers, "
                                   "balanced assignment, and judge once (a reviewer's judgment serving every pool "
                                   "that asks the same question of the same texts).",
    "reviewapp.review.pools": "A pool's settings after it is declared: guidelines, known-answer items, unassign and "
                              "reassign, label-deciding settings.",
    "reviewapp.review.people": "People and reliability (admin pages under /review/admin/): workload and "
                               "reassignment, a reviewer's account, the walk through disagreements.",
    "reviewapp.review.agreement": "A pool's judgments read together: progress, agreement between reviewers, "
                                  "disagreements and their rulings, exports (qrels, judgments).",
    "benchmarks.reports.exports": "The files of a report and of a leaderboard (JSON, CSV, TREC), the very figures "
                                  "their pages show.",
}

TEXT_SUFFIXES = {".py", ".pyi", ".toml", ".cfg", ".ini", ".html", ".txt", ".md", ".yml", ".yaml", ".json", ".sh",
                 ".js", ".conf"}
TEXT_NAMES = {"Makefile", "Dockerfile", ".importlinter", ".pre-commit-config.yaml"}
# The lead writes these; and this script names the old paths on purpose.
SKIP_FILES = {"README.md", "CHANGELOG.md", "scripts/split_folders.py"}


def module_file(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def package_dir(module: str) -> Path:
    return ROOT.joinpath(*module.split("."))


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


# ---------------------------------------------------------------------------
# Moving
# ---------------------------------------------------------------------------


def move_all(*, dry_run: bool) -> list[str]:
    """``git mv`` every entry whose source still exists; the lines to print."""
    said = []
    for old, new in MOVES:
        source, target = module_file(old), module_file(new)
        if not source.exists():
            continue
        if target.exists():
            said.append(f"left in place: {old} (both {source.relative_to(ROOT)} and {target.relative_to(ROOT)} "
                        "exist; merge them by hand)")
            continue
        said.append(f"move {source.relative_to(ROOT)} -> {target.relative_to(ROOT)}")
        if dry_run:
            continue
        parent = new.rsplit(".", 1)[0]
        folder = package_dir(parent)
        init = folder / "__init__.py"
        folder.mkdir(parents=True, exist_ok=True)
        if not init.exists():
            doc = textwrap.fill(PACKAGES.get(parent, ""), 110)
            init.write_text((f'"""{doc}"""\n' if "\n" not in doc else f'"""{doc}\n"""\n') if doc else "")
            git("add", str(init))
        git("mv", str(source), str(target))
    return said


# ---------------------------------------------------------------------------
# Rewriting
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mapping:
    moves: dict[str, str]
    # old module -> the names of the modules now in the folder of the same name (only where a folder took a
    # moved module's name).
    children: dict[str, frozenset[str]]
    dotted: re.Pattern[str]
    slashed: re.Pattern[str]

    def module(self, name: str) -> str:
        """``name`` (a module, or a module and an attribute) as it reads after the moves."""
        for old in sorted(self.moves, key=len, reverse=True):
            if name == old:
                return self.moves[old]
            if name.startswith(old + "."):
                rest = name[len(old) + 1:]
                if rest.split(".", 1)[0] in self.children.get(old, ()):
                    return name
                return self.moves[old] + "." + rest
        return name


def mapping_build() -> Mapping:
    moves = {old: new for old, new in MOVES if module_file(new).exists() or module_file(old).exists()}
    children: dict[str, frozenset[str]] = {}
    for old in moves:
        folder = package_dir(old)
        if folder.is_dir():
            children[old] = frozenset(p.stem for p in folder.glob("*.py")) | frozenset(
                p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    olds = sorted(moves, key=len, reverse=True)
    dotted = re.compile(r"(?<![\w.])(" + "|".join(re.escape(o) for o in olds) + r")(?![\w])((?:\.\w+)*)")
    # reviewapp/core/access.py, and the short form core/access.py that comments use inside reviewapp/.
    slashed = re.compile(r"(?<![\w/.])((?:reviewapp/)?(?:" + "|".join(
        re.escape(o.removeprefix("reviewapp.").replace(".", "/")) for o in olds) + r"))\.py\b")
    return Mapping(moves=moves, children=children, dotted=dotted, slashed=slashed)


def text_rewrite(text: str, mapping: Mapping) -> str:
    def dotted(match: re.Match[str]) -> str:
        return mapping.module(match.group(1) + match.group(2))

    def slashed(match: re.Match[str]) -> str:
        written = match.group(1)
        # benchmarks/ and grading/ paths are written whole; only reviewapp/'s have the short form
        short = written.replace("/", ".") not in mapping.moves
        new = mapping.moves[("reviewapp." if short else "") + written.replace("/", ".")].replace(".", "/")
        return (new.removeprefix("reviewapp/") if short else new) + ".py"

    return mapping.slashed.sub(slashed, mapping.dotted.sub(dotted, text))


def _alias(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname else name


def _from_line(module: str, names: list[str], indent: str) -> str:
    line = f"from {module} import {', '.join(names)}"
    if len(indent) + len(line) <= 120:
        return line
    inner = "".join(f"{indent}    {name},\n" for name in names)
    return f"from {module} import (\n{inner}{indent})"


def _absolute(node: ast.ImportFrom, module_path: str | None) -> str | None:
    if node.level == 0:
        return node.module
    if module_path is None:
        return None
    parts = module_path.split(".")
    base = parts[: len(parts) - node.level]
    return ".".join(base + ([node.module] if node.module else []))


def import_rewrite(node: ast.Import | ast.ImportFrom, mapping: Mapping, module_path: str | None,
                   indent: str) -> list[str] | None:
    """The statements that replace ``node``, or None when it stays as it is."""
    if isinstance(node, ast.Import):
        renamed = [(mapping.module(a.name), a.asname) for a in node.names]
        if all(new == a.name for (new, _), a in zip(renamed, node.names, strict=True)):
            return None
        return [f"import {_alias(new, asname)}" for new, asname in renamed]
    module = _absolute(node, module_path)
    if module is None:
        return None
    kept: list[str] = []
    moved: dict[str, list[str]] = {}  # new module -> names imported from it
    changed = False
    whole = mapping.module(module)
    for alias in node.names:
        full = f"{module}.{alias.name}"
        if alias.name in mapping.children.get(module, ()):
            # ``from reviewapp.review.workspace import queue``: a module of the folder that took the old name.
            kept.append(_alias(alias.name, alias.asname))
        elif full in mapping.moves:
            # ``from reviewapp.review import assign``: the module itself, now in a folder.
            parent, last = mapping.moves[full].rsplit(".", 1)
            binding = alias.asname or alias.name
            moved.setdefault(parent, []).append(_alias(last, binding if binding != last or alias.asname else None))
            changed = True
        elif whole != module:
            moved.setdefault(whole, []).append(_alias(alias.name, alias.asname))
            changed = True
        else:
            kept.append(_alias(alias.name, alias.asname))
    if not changed:
        return None
    statements: list[str] = []
    if kept:
        statements.append(_from_line(module if node.level == 0 else "." * node.level + (node.module or ""),
                                     kept, indent))
    for new_module, names in moved.items():
        statements.append(_from_line(new_module, names, indent))
    return statements


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _char_offset(text: str, starts: list[int], lineno: int, col_bytes: int) -> int:
    line_start = starts[lineno - 1]
    line = text[line_start: starts[lineno] if lineno < len(starts) else len(text)]
    return line_start + len(line.encode()[:col_bytes].decode())


def python_rewrite(path: Path, text: str, mapping: Mapping) -> str:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text_rewrite(text, mapping)
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts = [*parts, "__init__"]
    module_path = ".".join(parts)
    starts = _offsets(text)
    spans: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or node.end_lineno is None or node.end_col_offset is None:
            continue
        start = _char_offset(text, starts, node.lineno, node.col_offset)
        end = _char_offset(text, starts, node.end_lineno, node.end_col_offset)
        indent = text[starts[node.lineno - 1]: start]
        statements = import_rewrite(node, mapping, module_path, indent)
        if statements is None:
            spans.append((start, end, text[start:end]))
            continue
        if indent.strip():
            raise SystemExit(f"{path.relative_to(ROOT)}:{node.lineno}: an import not at the start of its line; "
                             "put it on its own line and run again")
        if "#" in text[start:end]:
            print(f"  note: {path.relative_to(ROOT)}:{node.lineno}: a comment inside a rewritten import was dropped")
        spans.append((start, end, ("\n" + indent).join(statements)))
    spans.sort()
    out, at = [], 0
    for start, end, replacement in spans:
        out.append(text_rewrite(text[at:start], mapping))
        out.append(replacement)
        at = end
    out.append(text_rewrite(text[at:], mapping))
    return "".join(out)


def files_to_rewrite() -> Iterable[Path]:
    for name in git("ls-files", "-co", "--exclude-standard").splitlines():
        path = ROOT / name
        if name in SKIP_FILES or not path.is_file() or "node_modules" in path.parts:
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            yield path


def rewrite_all(mapping: Mapping, *, dry_run: bool) -> list[Path]:
    changed = []
    for path in files_to_rewrite():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = python_rewrite(path, text, mapping) if path.suffix == ".py" else text_rewrite(text, mapping)
        if new != text:
            changed.append(path)
            if not dry_run:
                path.write_text(new)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")
    args = parser.parse_args(argv)
    for line in move_all(dry_run=args.dry_run):
        print(line)
    mapping = mapping_build()
    changed = rewrite_all(mapping, dry_run=args.dry_run)
    for path in changed:
        print(f"rewrote {path.relative_to(ROOT)}")
    python_files = [str(p) for p in changed if p.suffix == ".py"]
    if python_files and not args.dry_run:
        ruff = Path(sys.executable).with_name("ruff")
        subprocess.run([str(ruff), "check", "--quiet", "--select", "I001", "--fix", *python_files], cwd=ROOT,
                       check=False)
    for line in too_wide():
        print(f"too wide: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
