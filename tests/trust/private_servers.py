"""Servers of a test's own, to stop, restart and fill: the machine's PostgreSQL (5432) and Redis (6379) serve other
test runs and engineers at the same time and are never stopped.

- ``PrivatePostgres``: a cluster made by ``initdb`` into a temporary folder, on a free port, trust authentication,
  run as the ``postgres`` OS user when this process is root (initdb refuses root). Its databases are copies of
  the test database (schema and rows, by pg_dump), so the code under test and this process use it as they use
  the test database, and ``restart()`` is a real ``pg_ctl restart -m fast``: every connection is cut, the
  server is down for a moment, and comes back with the data.
- ``PrivateRedis``: a redis-server with no persistence (a restart loses every message: a broker outage's worst
  case).
- ``full_folder``: a folder on a filesystem with no space and no inode left (a tmpfs of a few pages, filled).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tests.helpers import wait_until


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _postgres_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError(f"no PostgreSQL server binaries found (/usr/lib/postgresql/*/bin/{name})")
    return found[-1]


class PrivatePostgres:
    """A PostgreSQL cluster of this test alone; ``restart()`` restarts it for real (``pg_ctl restart -m fast``)."""

    def __init__(self) -> None:
        self.port = free_port()
        # Not under pytest's tmp_path: its parents are private to root, and the server runs as ``postgres``.
        self.folder = Path(tempfile.mkdtemp(prefix="private-pg-"))
        self.data = self.folder / "data"
        self.user = "postgres" if os.geteuid() == 0 else ""
        self.restarts: list[float] = []  # seconds each restart took (down to accepting connections)

    def _run(self, *argv: str) -> None:
        command = list(argv)
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        # Not captured: the server pg_ctl starts would hold a captured pipe open, and the call would never return.
        with open(self.folder / "pg_ctl.log", "a") as log:
            subprocess.run(command, check=True, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                           cwd=self.folder)

    def start(self) -> PrivatePostgres:
        if self.user:
            shutil.chown(self.folder, self.user, self.user)
        self._run(_postgres_bin("initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync",
                  "-E", "UTF8", "--locale=C.UTF-8")
        # Durability is not under test (a restart is -m fast: a clean shutdown); fsync off spares the shared disk.
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60")
        self._run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "server.log"),
                  "-o", options, "-w", "-t", "60", "start")
        return self

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def copy_database(self, source_url: str, name: str) -> str:
        """A database named ``name`` here holding what ``source_url`` holds now (pg_dump | pg_restore)."""
        self._psql("postgres", f'CREATE DATABASE "{name}"')
        dump = subprocess.run([_postgres_bin("pg_dump"), "-Fc", "--no-owner", "-d", source_url],
                              check=True, capture_output=True)
        subprocess.run([_postgres_bin("pg_restore"), "--no-owner", "-d", self.url(name)], input=dump.stdout,
                       check=True, capture_output=True)
        return self.url(name)

    def clone(self, template: str, name: str) -> str:
        """A fresh database from ``template`` (a file copy on the server: a fraction of a second)."""
        self._psql("postgres", f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return self.url(name)

    def _psql(self, database: str, sql: str) -> None:
        subprocess.run([_postgres_bin("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url(database),
                        "-c", sql], check=True, capture_output=True)

    def restart(self) -> float:
        """``pg_ctl restart -m fast``: every session is ended, the server stops and starts. Seconds it took."""
        began = time.monotonic()
        self._run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "restart")
        self.restarts.append(time.monotonic() - began)
        return self.restarts[-1]

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    cluster = PrivatePostgres().start()
    try:
        yield cluster
    finally:
        cluster.stop()


class PrivateRedis:
    """A redis-server of this test alone, with no persistence: a restart loses every message, the worst case of a
    broker outage."""

    def __init__(self, folder) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.folder = folder
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        wait_until(lambda: _pings(client), timeout=20, interval=0.05)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=20)
            self.process = None


def _pings(client) -> bool:
    import redis

    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False


@contextlib.contextmanager
def full_folder() -> Iterator[tuple[Path, str]]:
    """(a folder where every write fails for lack of space, how it was made).

    A tmpfs of 64 KiB and 64 inodes, filled with one file until ENOSPC and then with empty files until no inode is
    left: a new file, a new directory and a longer file all fail with ENOSPC, as on a full disk. Where mounting is
    not permitted (an unprivileged container), the folder is a regular file instead: every write under it fails
    (ENOTDIR), which is what a process whose var/ is unusable meets.
    """
    root = Path(tempfile.mkdtemp(prefix="full-var-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,nr_inodes=64,mode=0777", "tmpfs", str(root)],
                             capture_output=True).returncode == 0
    try:
        if mounted:
            with contextlib.suppress(OSError), open(root / "filler", "wb") as filler:
                while True:
                    filler.write(b"\0" * 4096)
                    filler.flush()
            for n in range(1000):
                try:
                    (root / f"inode-{n}").touch()
                except OSError:
                    break
            yield root, "a full 64 KiB tmpfs (no space, no inode left)"
        else:
            blocked = root / "var"
            blocked.write_text("a file where var/ should be")
            yield blocked, "a file in place of the var/ folder (mount not permitted here)"
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(root)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
