"""Preflight: a provider that is not configured is refused before anything is created or sent."""

from __future__ import annotations

import pytest

from reviewapp.providers.spend.preflight import provider_preflight
from reviewapp.providers.types import ProviderError

NO_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}


@pytest.fixture
def no_keys(settings):
    settings.PROVIDER_KEYS = dict(NO_KEYS)
    settings.OPENAI_COMPATIBLE_BASE_URL = "https://openrouter.ai/api/v1"
    settings.ANTHROPIC_BASE_URL = "https://api.anthropic.com"


def test_openrouter_without_its_key_is_refused_naming_the_variable(no_keys):
    with pytest.raises(ProviderError, match=r"^OPENROUTER_API_KEY is not set") as error:
        provider_preflight(provider="openai_compatible", model_id="openai/gpt-4o-mini")
    assert "Nothing was sent" in str(error.value)


def test_anthropic_without_its_key_is_refused_naming_the_variable(no_keys):
    with pytest.raises(ProviderError, match=r"^ANTHROPIC_API_KEY is not set"):
        provider_preflight(provider="anthropic", model_id="claude-sonnet-4-5")


def test_a_self_hosted_openai_compatible_server_needs_no_key(no_keys):
    setup = provider_preflight(provider="openai_compatible", model_id="qwen", base_url="http://127.0.0.1:8000/v1")
    assert setup.base_url == "http://127.0.0.1:8000/v1" and setup.key_variable == ""


def test_a_present_key_passes_and_names_where_it_came_from(no_keys, settings):
    settings.PROVIDER_KEYS = {**NO_KEYS, "openrouter": "sk-or-v1-" + "x" * 20}
    setup = provider_preflight(provider="openai_compatible", model_id="openai/gpt-4o-mini")
    assert setup.key_variable == "OPENROUTER_API_KEY" and setup.base_url == "https://openrouter.ai/api/v1"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"provider": "openai_compatible", "model_id": ""}, "model id: a pinned model id is required"),
    ({"provider": "anthropic", "model_id": "  "}, "model id: a pinned model id is required"),
    ({"provider": "local", "model_id": "bert"}, "runs 'all-MiniLM-L6-v2-onnx-int8' only"),
    ({"provider": "openai", "model_id": "m"}, "provider: unknown provider 'openai'"),
    ({"provider": "openai_compatible", "model_id": "m", "base_url": "ftp://x"}, "base URL: .* the base URL given"),
    ({"provider": "openai_compatible", "model_id": "m", "base_url": "http://u:p@h/v1"}, "must not carry credentials"),
])
def test_bad_settings_are_refused_with_the_field_named(no_keys, kwargs, message):
    with pytest.raises(ProviderError, match=message):
        provider_preflight(**kwargs)


def test_a_malformed_default_base_url_names_its_variable(no_keys, settings):
    settings.OPENAI_COMPATIBLE_BASE_URL = "openrouter.ai/api/v1"
    with pytest.raises(ProviderError, match="OPENAI_COMPATIBLE_BASE_URL"):
        provider_preflight(provider="openai_compatible", model_id="m")


def test_the_local_model_passes_without_any_key(no_keys):
    assert provider_preflight(provider="local", model_id="all-MiniLM-L6-v2-onnx-int8").key_variable == ""
