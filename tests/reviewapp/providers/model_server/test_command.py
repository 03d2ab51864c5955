"""``manage.py model_server``: the documented llama.cpp command on the bundled, sha256-checked GGUF."""

from __future__ import annotations

import shlex
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviewapp.providers.model_server import GGUF_NAME, GGUF_SHA256, gguf_checked, served_model_id


def test_print_shows_the_llama_cpp_server_command_on_the_bundled_model():
    out = StringIO()
    call_command("model_server", "--port", "8123", "--context", "4096", "--print", stdout=out)
    argv = shlex.split(out.getvalue().strip())
    assert argv[1:3] == ["-m", "llama_cpp.server"]
    options = dict(zip(argv[3::2], argv[4::2], strict=True))
    assert options["--model"].endswith(GGUF_NAME) and options["--model"] == str(gguf_checked())
    assert options["--host"] == "127.0.0.1" and options["--port"] == "8123" and options["--n_ctx"] == "4096"
    assert options["--model_alias"] == served_model_id(context=4096)
    assert "Q4_1" in options["--model_alias"] and "context 4096 tokens" in options["--model_alias"]


def test_the_bundled_weights_are_the_pinned_file():
    import hashlib

    assert hashlib.sha256(gguf_checked().read_bytes()).hexdigest() == GGUF_SHA256


@pytest.mark.parametrize(("args", "problem"), [
    (["--port", "0"], "port 0"), (["--context", "100000"], "context 100000"), (["--threads", "0"], "threads 0"),
])
def test_settings_out_of_range_are_refused_by_name(args, problem):
    with pytest.raises(CommandError, match=problem):
        call_command("model_server", *args, "--print", stdout=StringIO())


def test_the_server_starts_without_the_web_servers_host_and_port():
    # llama_cpp.server binds $PORT and $HOST before its own --port and --host; `make demo` exports PORT for the
    # web server, and the model server took the web server's port.
    from reviewapp.providers.model_server import server_environment

    env = server_environment({"PORT": "8123", "HOST": "192.0.2.1", "PATH": "/usr/bin", "DATA_DIR": "/d"})
    assert env == {"PATH": "/usr/bin", "DATA_DIR": "/d"}
