"""Fixtures for the provider layer: planted keys, a real loopback HTTP server, recorded response shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewapp.providers.loopback import LoopbackServer, Reply

FIXTURES = Path(__file__).parent / "fixtures"
# Split so the committed text does not look like a real key to secret scanners.
PLANTED = {
    "openrouter": "sk-or-v1-" + "PLANTED0openrouter0key0do0not0leak0000000000",
    "openai_compatible": "sk-" + "PLANTED0compatible0key0do0not0leak00000000000",
    "anthropic": "sk-ant-api03-" + "PLANTED0anthropic0key0do0not0leak0000000",
}


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def fixture_json(name: str) -> dict:
    return json.loads(fixture_bytes(name))


@pytest.fixture
def planted_keys(settings):
    settings.PROVIDER_KEYS = dict(PLANTED)
    return PLANTED


@pytest.fixture
def loopback():
    """A real HTTP server on 127.0.0.1 (random port) with deterministic answers; ``.requests`` records them."""
    with LoopbackServer() as server:
        yield server


def serve(replies):
    """A responder answering from a list (one Reply per request, in order), then repeating the last."""
    queue = list(replies)

    def responder(path, headers, body):
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return responder


def fixture_reply(name: str, status: int = 200, **kwargs) -> Reply:
    return Reply(status=status, body=fixture_bytes(name), **kwargs)
