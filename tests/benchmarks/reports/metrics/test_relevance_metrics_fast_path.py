"""``manage.py relevance_metrics`` over files alone runs before Django loads, and answers exactly as Django's
command does: the same bytes on stdout, the same error and status, and every option that needs Django (the
exposure ledger, ``--settings``, ``--help``, abbreviations, usage errors) still goes to Django's command.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from scoring.ir.trec_cli import parse_without_django
from tests.conftest import REPO_ROOT as ROOT


def _manage(*args: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run([sys.executable, "manage.py", "relevance_metrics", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)


def _django(*args: str) -> str:
    out = io.StringIO()
    call_command("relevance_metrics", *args, stdout=out)
    return out.getvalue()


def _random_files(directory: Path, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    qrels, runs, families = [], [[], []], []
    for q in range(int(rng.integers(5, 40))):
        qid = f"q{q}"
        families.append(f"{qid} fam{q // 3}\n")
        for d in rng.choice(30, size=int(rng.integers(1, 6)), replace=False):
            qrels.append(f"{qid} 0 D{d} {int(rng.choice([0, 1, 2, 3]))}\n")
        for lines in runs:
            if rng.random() < 0.1:
                continue  # a query this run does not answer
            for rank, d in enumerate(rng.choice(30, size=int(rng.integers(1, 15)), replace=False), start=1):
                lines.append(f"{qid} Q0 D{d} {rank} {int(rng.integers(0, 4))} tag\n")  # ties on purpose
    paths = []
    for name, lines in (("qrels", qrels), ("a.run", runs[0]), ("b.run", runs[1]), ("families", families)):
        path = directory / name
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(str(path))
    return paths


@pytest.mark.slow  # runs the command in a fresh process
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("as_json", [True, False])
def test_the_process_prints_the_same_bytes_as_djangos_command(tmp_path, seed, as_json):
    qrels, run_a, run_b, families = _random_files(tmp_path, seed)
    args = ["--qrels", qrels, "--run", run_a, "--run", run_b, "--families", families, "--replicates", "200",
            "--seed", str(seed)] + (["--json"] if as_json else [])
    process = _manage(*args)
    assert process.returncode == 0, process.stderr
    assert process.stdout == _django(*args)
    if as_json:
        assert json.loads(process.stdout)["heldout_exposure"] is None


@pytest.mark.slow  # runs the command in a fresh process
def test_the_process_loads_neither_django_nor_celery(tmp_path):
    qrels, run_a, _, _ = _random_files(tmp_path, 4)
    probe = ("import runpy, sys\n"
             f"sys.argv = ['manage.py', 'relevance_metrics', '--qrels', {qrels!r}, '--run', {run_a!r}, '--json']\n"
             "try:\n    runpy.run_path('manage.py', run_name='__main__')\nexcept SystemExit as end:\n"
             "    assert end.code == 0, end.code\n"
             "print(sorted(m for m in ('django', 'celery', 'reviewapp') if m in sys.modules), file=sys.stderr)\n")
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    process = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                             check=False)
    assert process.returncode == 0, process.stderr
    assert process.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.slow  # runs the command in a fresh process
def test_bad_input_gives_djangos_error_and_status(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1\n", encoding="utf-8")
    run.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0\n", encoding="utf-8")
    process = _manage("--qrels", str(qrels), "--run", str(run))
    assert process.returncode == 1
    assert process.stdout == ""
    assert process.stderr.startswith(f"CommandError: {run}, line 2: expected 6 fields")
    with pytest.raises(CommandError) as raised:
        _django("--qrels", str(qrels), "--run", str(run))
    assert process.stderr == f"CommandError: {raised.value}\n"
    assert _manage("--qrels", str(qrels), "--run", str(run), "--replicates", "0").stderr == \
        "CommandError: --replicates must be at least 1\n"


@pytest.mark.parametrize("extra", [
    ["--retrieval-run", "1"], ["--retrieval-run=1"], ["--rerank-run", "2"], ["--settings", "reviewapp.settings"],
    ["-v", "2"], ["-v2"], ["--help"], ["-h"], ["--retrieval", "1"], ["--rep", "3"], ["--traceback"], ["--bogus"],
])
def test_options_that_need_django_go_to_djangos_command(extra):
    assert parse_without_django(["--qrels", "q", "--run", "r", *extra]) is None


def test_file_options_alone_stay_on_the_fast_path():
    options = parse_without_django(["--qrels", "q", "--run", "r", "--run", "s", "--families=f", "--replicates",
                                    "5", "--seed", "9", "--json"])
    assert options is not None
    assert (options.qrels, options.run, options.families, options.replicates, options.seed, options.json) == \
        ("q", ["r", "s"], "f", 5, 9, True)
    assert parse_without_django(["--run", "r"]) is None  # a usage error: Django's parser words it


@pytest.mark.slow  # runs the command in a fresh process
def test_help_comes_from_djangos_command_with_every_option():
    process = _manage("--help")
    assert process.returncode == 0
    assert "--retrieval-run" in process.stdout and "--settings" in process.stdout


@pytest.mark.slow  # runs the command in a fresh process
@pytest.mark.parametrize("as_json", [True, False])
def test_named_measures_and_a_relevance_level_print_the_same_bytes_on_both_paths(tmp_path, as_json):
    qrels, run_a, run_b, families = _random_files(tmp_path, 4)
    args = ["--qrels", qrels, "--run", run_a, "--run", run_b, "--families", families, "--replicates", "200",
            "-m", "P@5", "nDCG@10", "MAP", "R@100", "Success@10", "RR", "--rel-level", "2"]
    args += ["--json"] if as_json else []
    assert parse_without_django(args) is not None
    process = _manage(*args)
    assert process.returncode == 0, process.stderr
    assert process.stdout == _django(*args)
