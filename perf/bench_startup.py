"""Start-up beside a bare Django project made in the same run (``django-admin startproject``, same interpreter).

Issue #38's goals: ``manage.py check`` and a one-shot command at most 1.3x a bare project's CPU and peak memory;
a web server (gunicorn --preload, 4 workers) from start to its first 200 at most 2x. Each figure is the median of
ROUNDS fresh processes, ours and the peer alternating, measured with ``resource.getrusage(RUSAGE_CHILDREN)`` (CPU
seconds, peak RSS). On SQLite, the embedded default. Prints, asserts nothing.

    python perf/bench_startup.py
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from perf.figures import report  # noqa: E402

BENCH = Path(__file__).stem
ROUNDS = int(os.environ.get("BENCH_STARTUP_ROUNDS", "5"))
HEALTHZ_VIEW = '''
from django.http import HttpResponse
from django.urls import path


def healthz(request):
    return HttpResponse("ok")


urlpatterns = [path("healthz", healthz)]
'''


def _bare_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "django", "startproject", "bareproj", str(root)], check=True)
    (root / "bareproj" / "urls.py").write_text(HEALTHZ_VIEW)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=root, check=True)
    return root


def _measured(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Runs ``args`` under a fresh Python wrapper so that the peak RSS is this process's alone."""
    wrapper = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
               "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
               "u = resource.getrusage(resource.RUSAGE_CHILDREN); print(u.ru_utime + u.ru_stime, u.ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", wrapper, *args], cwd=cwd, env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), float(out[1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _web_start(app: str, cwd: Path, env: dict[str, str]) -> float:
    """Seconds from starting gunicorn (--preload, 4 workers) to its first 200 on /healthz."""
    port = _free_port()
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", "--preload", "-w", "4", "-b", f"127.0.0.1:{port}",
                                app], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = started + 120
        while time.perf_counter() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return time.perf_counter() - started
            except OSError:
                time.sleep(0.02)
        raise SystemExit(f"bench_startup: {app} did not answer within 120 s")
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        bare = _bare_project(Path(tmp) / "bare")
        var = Path(tmp) / "var"
        var.mkdir()
        env = {**os.environ, "VAR_DIR": str(var), "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}"}
        env.pop("REDIS_URL", None)
        bare_env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env, check=True)
        figures: dict[str, list[tuple[float, float]]] = {"ours check": [], "bare check": [], "ours cmd": [],
                                                          "bare cmd": []}
        for round_ in range(ROUNDS):
            pairs = [("ours", REPO, env), ("bare", bare, bare_env)]
            for name, cwd, e in pairs if round_ % 2 == 0 else reversed(pairs):
                figures[f"{name} check"].append(_measured([sys.executable, "manage.py", "check"], cwd, e))
                figures[f"{name} cmd"].append(_measured([sys.executable, "manage.py", "showmigrations", "-l"], cwd,
                                                        e))
        for what, key in (("manage.py check", "check"), ("a one-shot command (manage.py showmigrations)", "cmd")):
            cpu_ours = statistics.median(c for c, _ in figures[f"ours {key}"])
            cpu_bare = statistics.median(c for c, _ in figures[f"bare {key}"])
            rss_ours = statistics.median(m for _, m in figures[f"ours {key}"])
            rss_bare = statistics.median(m for _, m in figures[f"bare {key}"])
            report(bench=BENCH, what=f"{what}: CPU", ours=f"{cpu_ours:.2f} s", peer=f"bare Django {cpu_bare:.2f} s",
                   ratio=cpu_ours / cpu_bare, goal_ratio=1.3, goal="<= 1.3x")
            report(bench=BENCH, what=f"{what}: peak memory", ours=f"{rss_ours:.0f} MB",
                   peer=f"bare Django {rss_bare:.0f} MB", ratio=rss_ours / rss_bare, goal_ratio=1.3, goal="<= 1.3x")
        starts: dict[str, list[float]] = {"ours": [], "bare": []}
        for round_ in range(max(3, ROUNDS // 2)):
            web = [("ours", "reviewapp.wsgi", REPO, env), ("bare", "bareproj.wsgi", bare, bare_env)]
            for name, app, cwd, e in web if round_ % 2 == 0 else reversed(web):
                starts[name].append(_web_start(app, cwd, e))
        ours, peer = statistics.median(starts["ours"]), statistics.median(starts["bare"])
        report(bench=BENCH, what="web start (gunicorn --preload -w 4) to the first 200 of /healthz",
               ours=f"{ours:.2f} s", peer=f"bare Django {peer:.2f} s", ratio=ours / peer, goal_ratio=2.0,
               goal="<= 2x")


if __name__ == "__main__":
    main()
