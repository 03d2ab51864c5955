"""`make test` installs every system program its tests call: each executable a test starts is in the list that
`make system-deps` installs from, and the Makefile's test targets run that step."""

import ast
import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("system_deps", ROOT / "scripts" / "system_deps.py")
assert _spec is not None and _spec.loader is not None
system_deps = importlib.util.module_from_spec(_spec)
sys.modules["system_deps"] = system_deps  # dataclasses look their module up there
_spec.loader.exec_module(system_deps)

# Programs that come with the project's own environment (the venv, Node.js) or with every machine of this kind.
_OURS = {"python", "python3", "celery", "gunicorn", "npm", "node", "git", "sh", "bash", "kill", "ldconfig",
         "pg_ctlcluster", "pg_isready", "psql", "redis-cli", "pg_dump", "pg_restore", "initdb", "pg_ctl",
         "postgres", "sqlite3"}
_CALLS = {"run", "Popen", "check_output", "check_call", "call"}


def _first_word(node: ast.expr) -> str | None:
    """The program of `subprocess.run(["prog", ...])` or of a string constant; None when it is computed."""
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        node = node.elts[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        return Path(node.value.split()[0]).name
    return None


def executables_called(source: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
        if (owner == "subprocess" and name in _CALLS) or (owner == "shutil" and name == "which"):
            word = _first_word(node.args[0])
            if word:
                found.add(word)
    # A program named by its absolute path in a constant (CHROMIUM = "/usr/bin/chromium").
    found |= {m.group(1) for m in re.finditer(r"[\"']/usr/s?bin/([A-Za-z0-9_.+-]+)[\"']", source)}
    return found


def test_it_reads_the_programs_a_test_starts():
    source = (
        'import shutil, subprocess\nsubprocess.run(["pdftotext", "-", "x"])\nshutil.which("nginx")\n'
        'subprocess.Popen([sys.executable, "-m", "x"])\nB = "/usr/bin/chromium"\n'
    )
    assert executables_called(source) == {"pdftotext", "nginx", "chromium"}


def test_every_program_the_tests_call_is_installed_by_make_system_deps():
    listed = {need.name for need in system_deps.NEEDS}
    called: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "perf").rglob("*.py")):
        for program in executables_called(path.read_text()):
            called.setdefault(program, set()).add(str(path.relative_to(ROOT)))
    unlisted = {p: sorted(files) for p, files in called.items() if p not in listed and p not in _OURS}
    assert not unlisted, f"called by tests but not installed by `make system-deps` (scripts/system_deps.py): {unlisted}"
    # The scan is not vacuous: it finds the programs the summary and proxy tests are known to start.
    assert {"pdftotext", "nginx", "chromium"} <= called.keys()


def test_make_test_runs_system_deps_first_and_it_installs_the_missing_packages():
    makefile = (ROOT / "Makefile").read_text()
    targets = {m.group(1): m.group(2) for m in re.finditer(r"^([a-z-]+):([^\n]*)$", makefile, re.M)}
    for target in ("test", "test-fast", "test-postgres"):
        assert "system-deps" in targets[target].split(), f"`make {target}` does not depend on system-deps"
    recipe = makefile.split("\nsystem-deps:", 1)[1].split("\n\n", 1)[0]
    assert "scripts/system_deps.py" in recipe and "apt-get install" in recipe


def test_missing_packages_names_each_package_once_and_only_what_is_missing():
    needs = (
        system_deps.Need("surely-not-a-program-xyz", "pkg-a", "x"),
        system_deps.Need("surely-not-a-program-abc", "pkg-a", "x"),
        system_deps.Need("sh", "pkg-b", "present on every machine"),
        system_deps.Need("lib:libsurely-not-a-library.so", "pkg-c", "x"),
    )
    assert system_deps.missing_packages(needs) == ["pkg-a", "pkg-c"]
