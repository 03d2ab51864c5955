"""Start the bundled model server as a child process, wait until it answers, stop it.

For the demo, the CI test and the measurements: ``with ModelServer(port=0) as server: server.base_url``. The
server is a real ``python -m llama_cpp.server`` process on 127.0.0.1; only this process's own child is ever
stopped (by its pid), and its log goes to a file so a failed start can say why.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TypedDict

from reviewapp.providers.model_server import (
    BundledModelMissing,
    ServerSettings,
    server_command,
    server_environment,
    server_version,
)

READY_SECONDS = 180.0  # loading the 98 MB GGUF takes a few seconds; a loaded 2-core machine may take longer


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_ready(base_url: str, *, timeout: float = 2.0) -> bool:
    """Does a server at ``base_url`` list a model on ``/models`` (the OpenAI-compatible readiness check)?"""
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as response:  # noqa: S310 - http only
            data = json.loads(response.read())
    except (OSError, ValueError, urllib.error.URLError):
        return False
    return isinstance(data, dict) and bool(data.get("data"))


DEMO_VARIABLE = "DEMO_MODEL_SERVER_URL"  # set by scripts/demo.sh to the model server it started


def demo_server(*, stdout, what: str, wait: float = READY_SECONDS) -> str:
    """The demo's model server base URL once it answers, or '' (said on ``stdout``) when there is none."""
    base_url = os.environ.get(DEMO_VARIABLE, "").strip().rstrip("/")
    if not base_url:
        stdout.write(f"{what}: no model server ({DEMO_VARIABLE} unset; `make demo` starts one); skipped\n")
        return ""
    try:
        server_version()
    except BundledModelMissing as error:
        stdout.write(f"{what}: {error}; skipped\n")
        return ""
    deadline = time.monotonic() + wait
    while not server_ready(base_url):
        if time.monotonic() > deadline:
            stdout.write(f"{what}: the model server at {base_url} did not answer within {wait:.0f} s; skipped\n")
            return ""
        time.sleep(1)
    return base_url


class _ServerOptions(TypedDict, total=False):
    """The ServerSettings a caller chose; the others keep their defaults."""

    context: int
    threads: int


class ModelServer:
    """The bundled model served on loopback for the life of a ``with`` block."""

    def __init__(self, *, port: int = 0, context: int | None = None, threads: int | None = None,
                 log_path: Path | None = None) -> None:
        server_version()  # BundledModelMissing before anything starts
        options: _ServerOptions = {}
        if context is not None:
            options["context"] = context
        if threads is not None:
            options["threads"] = threads
        self.settings = ServerSettings(port=port or free_port(), **options)
        self.command = server_command(self.settings)
        self.log_path = log_path or Path(tempfile.mkstemp(prefix="model-server-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None
        self.ready_seconds = 0.0

    @property
    def base_url(self) -> str:
        return self.settings.base_url

    @property
    def model_id(self) -> str:
        return self.settings.model_id

    def start(self, *, wait: float = READY_SECONDS) -> ModelServer:
        started = time.perf_counter()
        with open(self.log_path, "ab") as log:
            environment = {**server_environment(os.environ), "PYTHONUNBUFFERED": "1"}
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=environment)
        deadline = started + wait
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise BundledModelMissing(f"the model server exited with code {self.process.returncode} before it "
                                          f"answered: {self.log_tail()}")
            if server_ready(self.base_url):
                self.ready_seconds = time.perf_counter() - started
                return self
            time.sleep(0.25)
        self.stop()
        raise BundledModelMissing(f"the model server did not answer on {self.base_url} within {wait:.0f} s: "
                                  f"{self.log_tail()}")

    def log_tail(self, chars: int = 1500) -> str:
        try:
            return " ".join(self.log_path.read_text(errors="replace")[-chars:].split())
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
