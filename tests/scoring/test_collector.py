"""scoring.collector: the cycle collector off inside, and left as it was found on leaving, an error included."""

from __future__ import annotations

import gc

import pytest

from scoring.collector import collector_paused


@pytest.fixture
def _collector_restored():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_collector_is_off_inside_and_as_it_was_after_a_success_or_an_error(_collector_restored, enabled_before):
    (gc.enable if enabled_before else gc.disable)()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled_before
    with pytest.raises(ZeroDivisionError), collector_paused():
        assert not gc.isenabled()
        1 / 0  # noqa: B018 - a failure inside the pause
    assert gc.isenabled() is enabled_before
