"""Run the loopback OpenAI-compatible + Anthropic server in the foreground (demos, manual checks)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from reviewapp.providers.loopback import LoopbackServer


class Command(BaseCommand):
    help = "Serve deterministic OpenAI-compatible (/v1/chat/completions) and Anthropic (/v1/messages) answers."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument("--latency-ms", type=int, default=0)

    def handle(self, *args, port: int, latency_ms: int, **options) -> None:
        server = LoopbackServer(port=port, latency=latency_ms / 1000).start()
        self.stdout.write(
            f"loopback on {server.url}: OPENAI_COMPATIBLE_BASE_URL={server.url}/v1 ANTHROPIC_BASE_URL={server.url}"
        )
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            server.stop()
