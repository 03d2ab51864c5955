"""Fixtures of the CUAD grader tests."""

from __future__ import annotations

import pytest

from tests.grading.anthropic_support import KEY
from tests.grading.console_support import load


@pytest.fixture
def loaded(db, tmp_path):
    """The fixture CUAD loaded, a sample of its four contracts, a gold run and a noisy run."""
    return load(tmp_path)


@pytest.fixture
def anthropic_key(settings):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "anthropic": KEY}
