"""Importing the URL config loads no module that only a request handler needs.

Each gunicorn worker (or the --preload master) imports the URL config before its
first request; scipy.optimize, bm25s, httpx and the model runtimes belong to the
handlers that use them. Checked in a fresh interpreter, where nothing was imported before.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HANDLER_ONLY = ("scipy", "scipy.optimize", "scipy.stats", "scipy.sparse", "bm25s", "httpx",
                "onnxruntime", "tokenizers")

PROBE = (
    "import json, os, sys\n"
    "os.environ['DJANGO_SETTINGS_MODULE'] = 'reviewapp.settings'\n"
    "import django\n"
    "django.setup()\n"
    "import reviewapp.urls\n"
    "from django.urls import get_resolver\n"
    "get_resolver().url_patterns\n"
    f"print(json.dumps(sorted(m for m in {HANDLER_ONLY!r} if m in sys.modules)))\n"
)


def test_importing_the_url_config_loads_no_handler_only_module():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == [], f"imported with the URL config: {', '.join(loaded)}"
