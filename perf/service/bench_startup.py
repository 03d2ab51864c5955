"""Start-up beside a bare Django project made in the same run (``django-admin startproject``, same interpreter).

The goals: ``manage.py check`` and a one-shot command at most 1.3x a bare project's CPU and peak memory;
a web server (gunicorn --preload, 4 workers) from start to its first 200 at most 2x. Each figure is the median of
ROUNDS fresh processes, ours and the peer alternating, measured with ``resource.getrusage(RUSAGE_CHILDREN)`` (CPU
seconds, peak RSS). On SQLite, the embedded default. Both trees are compiled to bytecode first, as an installed
package is and as the Docker image does (``compileall``): under PYTHONDONTWRITEBYTECODE (set on these machines and in
the image) a tree never compiled would be compiled again by every process, which measures the machine, not the
start-up. Then the goal the web start must keep: the first request of each page within 100 ms of a warm one (one
gunicorn worker, signed in as a superuser, every page of the URL configuration that takes no argument). Prints,
asserts nothing.

    python perf/service/bench_startup.py
"""

from __future__ import annotations

import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
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


def _compiled(*trees: Path) -> None:
    """Bytecode for every module of these trees, written once before anything is measured (see the docstring)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", "-x", r"(^|/)(node_modules|\.venv)/",
                        str(tree)], env=env, check=True, stdout=subprocess.DEVNULL)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _web_start(app: str, cwd: Path, env: dict[str, str], workers: int = 4,
               then: Callable[[int], None] | None = None) -> float:
    """Seconds from starting gunicorn (--preload, 4 workers) to its first 200 on /healthz; ``then(port)`` runs
    before the server stops."""
    port = _free_port()
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", "--preload", "-w", str(workers), "-b",
                                f"127.0.0.1:{port}", app], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline, elapsed = started + 120, 0.0
        while not elapsed and time.perf_counter() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                    if response.status == 200:
                        elapsed = time.perf_counter() - started
            except OSError:
                time.sleep(0.02)
        if not elapsed:
            raise SystemExit(f"bench_startup: {app} did not answer within 120 s")
        if then is not None:  # outside the polling: a failure here is the measurement's, not a slow start
            then(port)
        return elapsed
    finally:
        process.terminate()
        process.wait(timeout=30)


# Every page the URL configuration names without an argument (a page with one needs rows to show): not the API,
# not the admin (Django's own), not what only redirects or streams (sign-out, the OIDC hand-offs, the favicon,
# the old paths of moved pages).
PAGES_SCRIPT = """
import json, django
django.setup()
from django.urls import URLPattern, URLResolver, get_resolver
from reviewapp.core.http.moved import is_moved
def walk(patterns, prefix):
    for p in patterns:
        route = prefix + str(p.pattern)
        if isinstance(p, URLResolver):
            yield from walk(p.url_patterns, route)
        elif isinstance(p, URLPattern) and "<" not in route and "(?P" not in route and not is_moved(p.callback):
            yield "/" + route.lstrip("^").rstrip("$")
skip = ("/api/", "/admin/", "/healthz", "/favicon.ico", "/accounts/logout/", "/accounts/oidc/")
print(json.dumps(sorted({u for u in walk(get_resolver().url_patterns, "") if not u.startswith(skip)})))
"""
BENCH_USER = "bench-startup"
BENCH_PASSWORD = "bench-startup-password-not-secret"  # noqa: S105 -- a throwaway account of a temporary database


def _page_urls(env: dict[str, str]) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PAGES_SCRIPT], cwd=REPO, check=True, capture_output=True, text=True,
                         env={"DJANGO_SETTINGS_MODULE": "reviewapp.settings", **env}).stdout
    return json.loads(out.strip().splitlines()[-1])


def _signed_in_opener(port: int) -> urllib.request.OpenerDirector:
    """A client signed in through the login form (the form's CSRF token and cookie, then the session cookie)."""
    import http.cookiejar

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # a 302 is an answer here, not a hop
            return None

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    base = f"http://127.0.0.1:{port}"
    with opener.open(f"{base}/accounts/login/", timeout=30) as page:
        found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
    if found is None:
        raise SystemExit("bench_startup: the login page has no CSRF token")
    token = found.group(1)
    form = urllib.parse.urlencode({"username": BENCH_USER, "password": BENCH_PASSWORD,
                                   "csrfmiddlewaretoken": token}).encode()
    request = urllib.request.Request(f"{base}/accounts/login/", data=form, headers={"Referer": base + "/"})
    try:
        opener.open(request, timeout=30)
    except urllib.error.HTTPError as answer:
        if answer.code != 302:
            raise SystemExit(f"bench_startup: sign-in answered {answer.code}") from None
    if not any(cookie.name == "sessionid" for cookie in jar):
        raise SystemExit("bench_startup: sign-in set no session")
    return opener


def _timed_get(opener: urllib.request.OpenerDirector, url: str) -> tuple[int, float]:
    started = time.perf_counter()
    try:
        with opener.open(url, timeout=60) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as answer:
        status = answer.code
    return status, (time.perf_counter() - started) * 1000


def _first_page_requests(urls: list[str], warm_repeats: int
                         ) -> tuple[Callable[[int], None], dict[str, tuple[int, float, float]]]:
    """After the start: each page's status, first request (ms) and the median of ``warm_repeats`` more."""
    results: dict[str, tuple[int, float, float]] = {}

    def measure(port: int) -> None:
        base = f"http://127.0.0.1:{port}"
        opener = _signed_in_opener(port)
        for url in urls:
            status, first = _timed_get(opener, base + url)
            warm = [_timed_get(opener, base + url)[1] for _ in range(warm_repeats)]
            results[url] = (status, first, statistics.median(warm))

    return measure, results


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        bare = _bare_project(Path(tmp) / "bare")
        var = Path(tmp) / "var"
        var.mkdir()
        env = {**os.environ, "VAR_DIR": str(var), "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}"}
        env.pop("REDIS_URL", None)
        bare_env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env, check=True)
        _compiled(REPO / "manage.py", *(REPO / name for name in ("reviewapp", "benchmarks", "grading", "scoring")),
                  bare)
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
        _report_first_pages(env)


def _report_first_pages(env: dict[str, str]) -> None:
    """The web start's condition: a fresh worker's first request of each page within 100 ms of a warm one."""
    subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", BENCH_USER,
                    "--email", "bench@example.invalid"], cwd=REPO, check=True, stdout=subprocess.DEVNULL,
                   env={**env, "DJANGO_SUPERUSER_PASSWORD": BENCH_PASSWORD})
    urls = _page_urls(env)
    measure, results = _first_page_requests(urls, warm_repeats=5)
    _web_start("reviewapp.wsgi", REPO, env, workers=1, then=measure)
    served = {url: r for url, r in results.items() if r[0] == 200}
    if not served:
        raise SystemExit(f"bench_startup: no page answered 200 ({results})")
    extra = {url: first - warm for url, (_, first, warm) in served.items()}
    worst = max(extra, key=extra.__getitem__)
    _, worst_first, worst_warm = served[worst]
    others = sorted(set(results) - set(served))
    print("    first request beyond warm, ms: " + ", ".join(f"{u} {extra[u]:+.0f}" for u in sorted(served)))
    if others:
        print(f"    not 200 (left out): {', '.join(f'{u} {results[u][0]}' for u in others)}")
    report(bench=BENCH, what=f"first request of each page after the web start, {len(served)} pages (one worker, "
           "signed in as a superuser)", ours=f"worst {extra[worst]:+.0f} ms: {worst} first {worst_first:.0f} ms",
           peer=f"its warm median {worst_warm:.0f} ms", value=extra[worst], goal_value=100,
           goal="first < warm + 100 ms")


if __name__ == "__main__":
    main()
