"""Fixtures of the runs tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def low_threshold(monkeypatch):
    """The fixture contracts are a few sentences with one-word type descriptions: any cosine passes."""
    monkeypatch.setattr("grading.runs.local_extractor.THRESHOLD", -1.0)
