"""A small race harness: a real gunicorn with threads on the test database, and requests released together.

What one request at a time keeps can break when the same requests arrive at once: a check that reads state
before a lock wait decides on old state. The harness runs the app as it is deployed (gunicorn, gthread workers,
PostgreSQL, Redis) so that requests really overlap in separate workers and threads, and releases them from a
``threading.Barrier`` after each client has opened its connection, so they reach the server within a millisecond
or two of each other.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
# The race server's sign-in limits (per address, per account): small, so that the login trials hash few passwords
# (each costs ~0.3 s of CPU) and a burst far exceeds them.
LOGIN_LIMIT = 3
ACCOUNT_LIMIT = 5
LISTENING = re.compile(rb"Listening at: http://127\.0\.0\.1:(\d+)")


@dataclass(frozen=True)
class Server:
    base_url: str
    process: subprocess.Popen

    def client(self, *, session_key: str = "", token: str = "", headers: dict[str, str] | None = None) -> httpx.Client:
        """A client with its connection already open (a GET was answered), as a browser tab would be."""
        # Django accepts a CSRF cookie the client chose, as long as the header (or form field) repeats it.
        csrf = secrets.token_hex(16)
        cookies = {"csrftoken": csrf, **({"sessionid": session_key} if session_key else {})}
        all_headers = {"X-CSRFToken": csrf, **({"Authorization": f"Token {token}"} if token else {})}
        all_headers.update(headers or {})
        client = httpx.Client(base_url=self.base_url, cookies=cookies, headers=all_headers, timeout=60)
        client.get("/favicon.ico")  # opens the connection, so that the released request is sent at once
        return client


@contextmanager
def gunicorn(*, database_url: str, env: dict[str, str] | None = None, workers: int = 2,
             threads: int = 4) -> Iterator[Server]:
    """gunicorn (gthread) on 127.0.0.1, a port the kernel picks, serving ``database_url``; stopped on exit."""
    full_env = {**os.environ, "DATABASE_URL": database_url, "DEBUG": "0", "LOG_LEVEL": "WARNING", **(env or {})}
    executable = Path(sys.executable).parent / "gunicorn"
    process = subprocess.Popen(
        [str(executable), "reviewapp.wsgi:application", "--bind", "127.0.0.1:0", "--workers", str(workers),
         "--worker-class", "gthread", "--threads", str(threads), "--timeout", "60", "--log-level", "info",
         # Clients open their connection, then wait at the barrier: keep it open longer than gunicorn's 2 s.
         "--keep-alive", "60"],
        cwd=REPO, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        port = _port_of(process)
        server = Server(base_url=f"http://127.0.0.1:{port}", process=process)
        _wait_until_answering(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _port_of(process: subprocess.Popen) -> int:
    """The port gunicorn bound (it logs it once listening; port 0 leaves the choice to the kernel)."""
    seen = b""
    assert process.stderr is not None
    while True:
        line = process.stderr.readline()
        if not line:
            raise RuntimeError("gunicorn exited before listening:\n" + seen.decode(errors="replace")[-3000:])
        seen += line
        match = LISTENING.search(line)
        if match:
            # Keep draining its log so that gunicorn never blocks on a full pipe.
            threading.Thread(target=_drain, args=(process,), daemon=True).start()
            return int(match.group(1))


def _drain(process: subprocess.Popen) -> None:
    assert process.stderr is not None
    for _line in process.stderr:
        pass


def _wait_until_answering(server: Server) -> None:
    for _ in range(200):
        if server.process.poll() is not None:
            raise RuntimeError("gunicorn exited")
        try:
            if httpx.get(f"{server.base_url}/accounts/login/", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("gunicorn did not answer")


def release_together(calls: Sequence[Callable[[], httpx.Response]]) -> list[httpx.Response]:
    """Runs every call in its own thread, all released by one barrier; the responses, in the calls' order."""
    barrier = threading.Barrier(len(calls))
    responses: list[httpx.Response | BaseException | None] = [None] * len(calls)

    def run(index: int, call: Callable[[], httpx.Response]) -> None:
        barrier.wait()
        try:
            responses[index] = call()
        except BaseException as error:  # re-raised in the caller's thread below
            responses[index] = error

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for response in responses:
        if isinstance(response, BaseException):
            raise response
    return responses  # type: ignore[return-value]
