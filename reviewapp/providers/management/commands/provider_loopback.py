"""Run the loopback TEST AND DEMO server in the foreground: simulated answers, never a model's."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from reviewapp.providers.loopback import SHAPES, LoopbackServer


class Command(BaseCommand):
    help = (
        "A test and demo server on 127.0.0.1 that answers rerank, CUAD extraction and label-audit requests in the "
        "OpenAI-compatible (/v1/chat/completions) and Anthropic (/v1/messages) shapes. Its answers are SIMULATED "
        "(not a model's): every run made against it is labelled 'simulated provider'. Choose it per run with the "
        "base URL it prints; no key and no restart are needed."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=0,
                            help="port on 127.0.0.1; 0 (the default) picks a free one and prints it")
        parser.add_argument("--latency-ms", type=int, default=0, help="delay every answer by this much")
        parser.add_argument("--shape", choices=SHAPES, default="auto",
                            help="auto: honour logprobs and JSON schemas; no-logprobs: a server that ignores "
                                 "logprobs; ignore-schema: a model that ignores the JSON schema")

    def handle(self, *args, port: int, latency_ms: int, shape: str, **options) -> None:
        if not 0 <= port <= 65535:
            raise CommandError(f"--port {port}: use 0 (a free port) or 1..65535")
        try:
            server = LoopbackServer(port=port, latency=latency_ms / 1000, shape=shape).start()
        except OSError as error:
            raise CommandError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({error.strerror}); "
                               "use --port 0 for a free port") from None
        chosen = server.url.rsplit(":", 1)[1]
        self.stdout.write(f"port {chosen}")
        self.stdout.write(
            f"simulated provider (test and demo server, shape {shape}) on {server.url}\n"
            f"  OpenAI-compatible base URL: {server.url}/v1   Anthropic base URL: {server.url}\n"
            "  choose it per run: the 'base URL' field of a launch page, base_url in the API, or --base-url;\n"
            "  any model id, no key. Every run made against it is labelled 'simulated provider'."
        )
        self.stdout.flush()
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            server.stop()
