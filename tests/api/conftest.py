"""A Python client generated from the live server's schema, and a token per role to drive it.

The client is generated at test time (``openapi-python-client``) into a temporary folder and never committed:
what is tested is that the published schema is enough for a generator to build a client whose requests the
server accepts and whose parsing of the server's answers does not break.
"""

from __future__ import annotations

import hashlib
import importlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.factories import make_user

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
# One generated package per schema digest and test session: the schema is fetched live every time, generated
# again only when it changed.
_GENERATED: dict[str, str] = {}


@dataclass(frozen=True)
class Api:
    """The generated package, and a client for it signed in as a role (``Authorization: Token <key>``)."""

    package: str
    base_url: str
    tokens: dict[str, str]

    def module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.{name}")

    def client(self, role: str) -> Any:
        client_module = self.module("client")
        return client_module.AuthenticatedClient(base_url=self.base_url, token=self.tokens[role], prefix="Token",
                                                 raise_on_unexpected_status=True, timeout=httpx.Timeout(120.0))

    def call(self, role: str, operation: str, **kwargs: Any) -> Any:
        """``sync_detailed`` of one operation (``"benchmarks.benchmarks_rerank_runs_create"``): status and parsed."""
        return self.module(f"api.{operation}").sync_detailed(client=self.client(role), **kwargs)


def _generate(schema: bytes, workdir: Path) -> str:
    digest = hashlib.sha256(schema).hexdigest()[:16]
    if digest in _GENERATED:
        return _GENERATED[digest]
    package = f"generated_api_{digest}"
    schema_path = workdir / "schema.json"
    schema_path.write_bytes(schema)
    config = workdir / "generator.yaml"
    # No post-generation hooks: the formatter is not needed to run the code.
    config.write_text("post_hooks: []\n")
    result = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(schema_path), "--meta", "none",
         "--output-path", str(workdir / package), "--config", str(config)],
        capture_output=True, text=True, cwd=workdir, timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # A warning means an endpoint or a model was left out of the client.
    assert "Warning" not in output, output
    sys.path.insert(0, str(workdir))
    importlib.invalidate_caches()
    _GENERATED[digest] = package
    return package


@pytest.fixture
def api(live_server, django_user_model, tmp_path_factory) -> Api:
    from reviewapp.core.auth.credentials import api_token_create

    users = {
        "admin": make_user(django_user_model, "api_admin", "admin"),
        "stakeholder": make_user(django_user_model, "api_stakeholder", "stakeholder"),
        "reviewer": make_user(django_user_model, "api_reviewer", "reviewer"),
    }
    tokens = {role: api_token_create(user=user, name="generated client").key for role, user in users.items()}
    response = httpx.get(f"{live_server.url}/api/v1/schema/?format=json",
                         headers={"Authorization": f"Token {tokens['admin']}"}, timeout=60)
    assert response.status_code == 200, response.text[:500]
    package = _generate(response.content, tmp_path_factory.mktemp("generated_client"))
    return Api(package=package, base_url=live_server.url, tokens=tokens)
