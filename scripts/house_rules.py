"""The house rules that `make lint` checks and no other linter can: each says what is wrong and where.

    python scripts/house_rules.py     # exit 1 naming every breach

- Folder width: no folder of the apps, perf/ or tests/ holds more than 12 modules (split it by feature).
- No issue numbers in code or comments: a reader of the code has no tracker; the story is in the commit and
  CHANGELOG.md.
- One way to hand out a file: only the download helper (reviewapp/core/exports/downloads.py) names a response as
  a file (`Content-Disposition`), so every name is quoted one way (RFC 6266) and every type comes from one table.
- CHANGELOG.md is in versioned releases (``## 0.5.0 - 2026-12-04``, newest first), one line a change, and names
  no issue either.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH_ROOTS = ("reviewapp", "benchmarks", "grading", "scoring", "perf", "tests")
MAX_MODULES = 12
# The word "issue" and a number, with or without "#": a tracker's number means nothing to a reader of the code.
ISSUE_REFERENCE = re.compile(r"\bissues? ?#?\d+\b", re.IGNORECASE)
CODE_SUFFIXES = {".py", ".html", ".js", ".css", ".toml", ".yml", ".yaml", ".sh", ".cfg"}
CODE_NAMES = {"Makefile", "Dockerfile", "run"}
APP_ROOTS = ("reviewapp", "benchmarks", "grading", "scoring")
DOWNLOAD_HELPER = "reviewapp/core/exports/downloads.py"
# Views that set the header by hand; none is left: a new one goes through the helper instead of onto this list.
DOWNLOAD_HEADER_ALLOWED: frozenset[str] = frozenset()
RELEASE = re.compile(r"^## (?P<version>\d+\.\d+\.\d+) - (?P<date>\d{4}-\d{2}-\d{2})$")


def too_wide(root: Path = ROOT) -> list[str]:
    said = []
    for top in WIDTH_ROOTS:
        for folder in sorted([root / top, *(root / top).rglob("*")]):
            if not folder.is_dir() or "__pycache__" in folder.parts or "migrations" in folder.parts:
                continue
            count = len(list(folder.glob("*.py")))
            if count > MAX_MODULES:
                said.append(f"{folder.relative_to(root)}/ holds {count} modules (at most {MAX_MODULES})")
    return said


def _tracked(root: Path) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True).stdout
    return [root / name for name in listed.split("\0") if name]


def issue_references(root: Path = ROOT) -> list[str]:
    said = []
    for path in _tracked(root):
        if path.suffix not in CODE_SUFFIXES and path.name not in CODE_NAMES:
            continue
        if not path.is_file():
            continue  # deleted in the working tree, not yet in the index
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            if ISSUE_REFERENCE.search(line):
                said.append(f"{path.relative_to(root)}:{number}: names an issue: {line.strip()[:100]}")
    return said


def download_headers_by_hand(root: Path = ROOT, allowed: frozenset[str] = DOWNLOAD_HEADER_ALLOWED) -> list[str]:
    """Every place but the download helper that names the `Content-Disposition` header (a string of the code,
    not a word of a docstring or comment): a file handed out another way escapes the helper's quoting."""
    said = []
    for top in APP_ROOTS:
        for path in sorted((root / top).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if "migrations" in path.parts or name == DOWNLOAD_HELPER or name in allowed:
                continue
            for node in ast.walk(ast.parse(path.read_text(), filename=name)):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and node.value.strip().lower() == "content-disposition":
                    said.append(f"{name}:{node.lineno}: sets Content-Disposition by hand; answer with "
                                f"{DOWNLOAD_HELPER}'s download, csv_download or stream_download")
    return said


def changelog_problems(text: str) -> list[str]:
    """Releases newest first, each `## X.Y.Z - YYYY-MM-DD`; every bullet one line; no issue numbers."""
    said = []
    versions: list[tuple[int, ...]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            match = RELEASE.match(line)
            if not match:
                said.append(f"CHANGELOG.md:{number}: a release heading is `## X.Y.Z - YYYY-MM-DD`, not {line!r}")
                continue
            versions.append(tuple(int(part) for part in match["version"].split(".")))
        elif line.startswith(("  ", "\t")) and line.strip():
            said.append(f"CHANGELOG.md:{number}: a change is one line; this continues the line above")
        if ISSUE_REFERENCE.search(line):
            said.append(f"CHANGELOG.md:{number}: names an issue; say what a user or an operator notices")
    if not versions:
        said.append("CHANGELOG.md: no versioned release (`## X.Y.Z - YYYY-MM-DD`)")
    if versions != sorted(versions, reverse=True):
        said.append("CHANGELOG.md: releases are not newest first")
    return said


def main() -> int:
    changelog = changelog_problems((ROOT / "CHANGELOG.md").read_text())
    problems = too_wide() + issue_references() + download_headers_by_hand() + changelog
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
