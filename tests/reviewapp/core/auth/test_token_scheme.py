"""The API schema names the token scheme although the auth module no longer imports drf-spectacular.

The extension lives in reviewapp.core.auth.schema, loaded with the URL config, so that processes which never build
a schema (management commands, the admin) skip drf-spectacular's plumbing. ``manage.py spectacular`` in a
fresh process must still describe the token header.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT as ROOT


@pytest.mark.slow  # runs manage.py in a fresh process
def test_a_schema_generated_in_a_fresh_process_declares_the_token_scheme(tmp_path):
    out = tmp_path / "schema.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run([sys.executable, "manage.py", "spectacular", "--format", "openapi-json", "--file",
                             str(out)], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    schema = json.loads(out.read_text())
    scheme = schema["components"]["securitySchemes"]["tokenAuth"]
    assert scheme == {"type": "apiKey", "in": "header", "name": "Authorization",
                      "description": scheme["description"]}
    assert "Token <key>" in scheme["description"]
    assert any({"tokenAuth": []} in operation.get("security", [])
               for path in schema["paths"].values() for operation in path.values())
