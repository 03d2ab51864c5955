"""CUAD load + sample + grade as whole processes, beside a plain-Python grader's process on the same run.

Ours, on a fresh database each time, through manage.py, two ways:

- one process (the goal's figure): ``grade_cuad --cuad CUAD_v1.json --run run.json --json``, which loads the
  file, draws the seeded sample (n=100, at least 30 per type, seed 42) and grades on it (Hungarian, bootstrap
  B=1000), as the peer reads, samples and grades in one process;
- three processes, one command each, as an admin may also run them: ``load_cuad CUAD_v1.json``,
  ``sample_cuad --out manifest.json`` and ``grade_cuad --run run.json --manifest manifest.json --json``. Wall
  time is from the first start to the last exit, CPU time (user + system) is summed over the three, peak RSS
  is the largest of them. Each process pays Django's start-up, so this figure is reported without a goal.

Both engines, one after the other, each with its own figures: SQLite, then PostgreSQL (the server of
BENCH_DATABASE_URL, or DATABASE_URL when it is postgres://..., or postgres://postgres@127.0.0.1:5432; skipped
with a note when none answers). The database is fresh each time: a copy of a migrated SQLite file in a
temporary folder (migrating is not timed), or a scratch PostgreSQL database of this run's own
(perf/scratch_db.py), migrated untimed and dropped after the round.

Peer: ``perf/cuad/plain_cuad_grader.py`` (standard library + scipy's linear_sum_assignment) reading CUAD_v1.json,
taking the manifest's 100 contracts and grading the same run by the same rules; its per clause type F1 is
checked against ours (printed with the largest difference).

The run (seeded, built once from the manifest and CUAD_v1.json, as perf/cuad/grading_bench.py builds its own):
every gold span of the 100 contracts, plus as many noise extractions of the same clause type, half verbatim
passages of the contract that overlap no gold span, half the span's words shuffled with three words no
contract has (fabricated).

Median of REPEATS rounds, ours and the peer interleaved; each figure with the mean 1-minute load average.
CUAD_v1.json is read in place from DATA_DIR/cuad (default: ../shared/data). Prints, asserts nothing.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.figures import load_average, report  # noqa: E402
from perf.scratch_db import scratch_postgres  # noqa: E402

BENCH = "cuad_process"
REPEATS = int(os.environ.get("BENCH_CUAD_PROCESS_REPEATS", "5"))
SEED = 7
NOISE_WORDS = ["purple", "zeppelin", "saffron"]
TOLERANCE = 1e-9


def _cuad_path() -> Path:
    data_dir = Path(os.environ.get("DATA_DIR", REPO.parent / "shared" / "data"))
    path = data_dir / "cuad" / "CUAD_v1.json"
    if not path.is_file():
        raise SystemExit(f"bench_cuad_process: {path} not found (set DATA_DIR)")
    return path


DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"


def _postgres_url() -> str:
    for name in ("BENCH_DATABASE_URL", "DATABASE_URL"):
        url = os.environ.get(name, "")
        if url.startswith("postgres"):
            return url
    return ""


def _postgres_reachable() -> str:
    """The PostgreSQL server to measure on (see the module docstring), or "" when none answers."""
    url = _postgres_url() or DEFAULT_POSTGRES
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=3).close()
    except Exception as exc:  # a benchmark, not a test: say why and go on with SQLite alone
        print(f"bench_cuad_process: PostgreSQL not reachable at {url.split('@')[-1]} ({exc}); SQLite only")
        return ""
    return url


class Process:
    """One child process: wall seconds, CPU seconds (user + system, its own rusage), peak RSS MiB, stdout."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        started = time.perf_counter()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            child = subprocess.Popen(args, cwd=REPO, env=env, stdout=out, stderr=err)
            _, status, usage = os.wait4(child.pid, 0)
            self.wall = time.perf_counter() - started
            out.seek(0)
            err.seek(0)
            self.stdout, stderr = out.read().decode(), err.read().decode()
        if status != 0:
            raise SystemExit(f"{' '.join(args[1:3])} failed:\n{stderr[-2000:]}")
        self.cpu = usage.ru_utime + usage.ru_stime
        self.rss = usage.ru_maxrss / 1024  # KiB on Linux


def build_run(cuad: dict, titles: list[str], seed: int = SEED) -> dict:
    """Every gold span of ``titles`` plus as many noise extractions (see the module docstring)."""
    rng = random.Random(seed)
    by_title = {e["title"]: e["paragraphs"][0] for e in cuad["data"]}
    gold, noise = [], []
    for title in titles:
        paragraph = by_title[title]
        text = paragraph["context"]
        spans = [(a["answer_start"], a["answer_start"] + len(a["text"])) for qa in paragraph["qas"]
                 for a in qa["answers"]]
        for qa in paragraph["qas"]:
            category = qa["id"].rsplit("__", 1)[1]
            for answer in qa["answers"]:
                gold.append({"contract": title, "category": category, "text": answer["text"]})
                if len(gold) % 2:
                    length = max(40, min(len(answer["text"]), 600))
                    passage = ""
                    for _ in range(50):
                        start = rng.randrange(max(1, len(text) - length))
                        if all(start + length <= s or start >= e for s, e in spans):
                            passage = text[start : start + length]
                            break
                    noise_text = passage if passage.strip() else "fabricated clause text"
                else:
                    words = [*(answer["text"].split() or ["nothing"]), *NOISE_WORDS]
                    rng.shuffle(words)
                    noise_text = " ".join(words)
                noise.append({"contract": title, "category": category, "text": noise_text})
    return {"model": "bench-noise", "extractions": gold + noise}


def ours_round(env: dict[str, str], cuad: Path, tmp: Path, run: Path | None) -> tuple[list[Process], float]:
    """load, sample (and grade, once the run exists) on the database of ``env``; the processes and total wall."""
    python = sys.executable
    manifest = tmp / "manifest.json"
    started = time.perf_counter()
    steps = [Process([python, "manage.py", "load_cuad", str(cuad)], env),
             Process([python, "manage.py", "sample_cuad", "--n", "100", "--seed", "42", "--out", str(manifest)], env)]
    if run is not None:
        steps.append(Process([python, "manage.py", "grade_cuad", "--run", str(run), "--manifest", str(manifest),
                              "--json"], env))
    return steps, time.perf_counter() - started


def one_process_round(env: dict[str, str], cuad: Path, run: Path) -> Process:
    """load + sample + grade in one ``grade_cuad --cuad`` process on the database of ``env``."""
    return Process([sys.executable, "manage.py", "grade_cuad", "--cuad", str(cuad), "--run", str(run), "--json"],
                   env)


def peer_round(cuad: Path, tmp: Path, run: Path) -> Process:
    return Process([sys.executable, str(REPO / "perf" / "cuad" / "plain_cuad_grader.py"), str(cuad),
                    str(tmp / "manifest.json"), str(run)], dict(os.environ))


def agreement(ours_json: str, peer_json: str) -> tuple[float, int, int]:
    """Largest |ours - peer| per clause type F1, the types compared, and the types whose counts differ."""
    ours = json.loads(ours_json)["per_category"]
    peer = json.loads(peer_json)["per_type"]
    worst, compared, count_diffs = 0.0, 0, 0
    for category, p in peer.items():
        o = ours[category]
        if p["f1"] is None:
            continue
        worst = max(worst, abs(o["f1"] - p["f1"]))
        compared += 1
        keys = ("correct", "partial", "incorrect", "hallucinated", "extractions", "spans")
        count_diffs += any(o["counts"][k] != p["counts"][k] for k in keys)
    return worst, compared, count_diffs


def main() -> None:
    cuad = _cuad_path()
    engine_bench(cuad, "")
    pg = _postgres_reachable()
    if pg:
        engine_bench(cuad, pg)


def engine_bench(cuad: Path, pg: str) -> None:
    """Every figure on one engine: PostgreSQL at ``pg`` when given, else SQLite."""
    engine = "PostgreSQL" if pg else "SQLite"
    # Without bytecode caching (as in the Docker image) every process compiles the project modules it imports.
    bytecode = "off" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "on"
    print(f"bench_cuad_process: {engine}, median of {REPEATS}, ours and the peer interleaved; "
          f"{os.cpu_count()} CPUs, bytecode cache writes {bytecode}, load average {load_average():.2f} at start",
          flush=True)
    with ExitStack() as stack:
        tmp = Path(tempfile.mkdtemp(prefix="bench_cuad_process-"))
        stack.callback(shutil.rmtree, tmp, ignore_errors=True)
        base_env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        base_env.update(VAR_DIR=str(tmp / "var"), DEBUG="0", PRODUCTION="0")
        template = tmp / "template.sqlite3"

        def fresh_env(round_stack: ExitStack) -> dict[str, str]:
            """The environment of one round's processes, on a fresh migrated database (migrating untimed)."""
            if pg:
                url = round_stack.enter_context(scratch_postgres(pg, prefix="bench_cuad_process"))
            else:
                db = tmp / "round.sqlite3"
                if not template.exists():
                    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO, check=True,
                                   env={**base_env, "DATABASE_URL": f"sqlite:///{template}"})
                shutil.copyfile(template, db)
                url = f"sqlite:///{db}"
            env = {**base_env, "DATABASE_URL": url}
            if pg:
                subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO, check=True, env=env)
            return env

        # Round 0 (untimed): draw the sample, build the run from it, warm the file cache for both sides.
        with ExitStack() as round_stack:
            ours_round(fresh_env(round_stack), cuad, tmp, None)
        titles = [c["title"] for c in json.loads((tmp / "manifest.json").read_text())["contracts"]]
        run_path = tmp / "run.json"
        run = build_run(json.loads(cuad.read_bytes()), titles)
        run_path.write_text(json.dumps(run))
        print(f"  run: {len(run['extractions'])} extractions on {len(titles)} contracts (gold spans + as many "
              "noise); warm-up: ", end="", flush=True)
        peer_round(cuad, tmp, run_path)
        print("done", flush=True)

        mine, single, theirs, loads = [], [], [], []
        for i in range(REPEATS):
            loads.append(load_average())
            with ExitStack() as round_stack:
                one = one_process_round(fresh_env(round_stack), cuad, run_path)
            with ExitStack() as round_stack:
                steps, wall = ours_round(fresh_env(round_stack), cuad, tmp, run_path)
            peer = peer_round(cuad, tmp, run_path)
            single.append(one)
            mine.append((wall, sum(p.cpu for p in steps), max(p.rss for p in steps), steps))
            theirs.append(peer)
            print(f"  round {i + 1}: one process {one.wall:.2f} s / CPU {one.cpu:.2f} s | three {wall:.2f} s ("
                  + ", ".join(f"{n} {p.wall:.2f} s / CPU {p.cpu:.2f} s" for n, p in zip(("load", "sample", "grade"),
                                                                                        steps, strict=True))
                  + f") | peer {peer.wall:.2f} s / CPU {peer.cpu:.2f} s (load {loads[-1]:.2f})", flush=True)

    for name, ours_json in (("one process", single[-1].stdout), ("three processes", mine[-1][3][2].stdout)):
        worst, compared, count_diffs = agreement(ours_json, theirs[-1].stdout)
        verdict = "agree" if worst <= TOLERANCE and not count_diffs else "DISAGREE"
        print(f"  per clause type F1, ours ({name}) vs peer on the same run: largest difference {worst:.2e} over "
              f"{compared} types, {count_diffs} types with different outcome counts: {verdict} "
              f"(tolerance {TOLERANCE:g})")

    p_wall = statistics.median(p.wall for p in theirs)
    p_cpu = statistics.median(p.cpu for p in theirs)
    p_rss = statistics.median(p.rss for p in theirs)
    peer_text = f"plain-Python grader {p_wall:.2f} s (CPU {p_cpu:.2f} s, peak {p_rss:.0f} MiB)"
    wall, cpu, rss = (statistics.median(getattr(p, k) for p in single) for k in ("wall", "cpu", "rss"))
    ratio = wall / p_wall if p_wall else math.nan
    report(bench=BENCH, what=f"CUAD load + sample + grade, 100 contracts, one process ({engine})",
           ours=f"{wall:.2f} s (CPU {cpu:.2f} s, peak {rss:.0f} MiB)", peer=peer_text,
           ratio=ratio, ratio_text=f"{ratio:.2f}x wall, {cpu / p_cpu:.2f}x CPU", goal_ratio=1.0, goal="<= 1",
           load=statistics.mean(loads))
    wall, cpu, rss = (statistics.median(m[k] for m in mine) for k in range(3))
    ratio = wall / p_wall if p_wall else math.nan
    report(bench=BENCH, what=f"the same as three processes: load_cuad, sample_cuad, grade_cuad ({engine})",
           ours=f"{wall:.2f} s (CPU {cpu:.2f} s, peak {rss:.0f} MiB)", peer=peer_text,
           ratio=ratio, ratio_text=f"{ratio:.2f}x wall, {cpu / p_cpu:.2f}x CPU", load=statistics.mean(loads))


if __name__ == "__main__":
    main()
