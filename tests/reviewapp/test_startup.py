"""reviewapp.startup: the collector paused while a process starts, on again afterwards, what was made frozen."""

from __future__ import annotations

import gc

import pytest

from reviewapp.startup import starting


@pytest.fixture
def _collector_restored():
    enabled = gc.isenabled()
    yield
    gc.unfreeze()  # the test suite's own objects go back to being collected
    (gc.enable if enabled else gc.disable)()


def test_the_collector_is_off_inside_and_on_after_with_what_was_made_frozen(_collector_restored):
    gc.enable()
    before = gc.get_freeze_count()
    with starting():
        assert not gc.isenabled()
        made = [[n] for n in range(1000)]  # containers the collector tracks
    assert gc.isenabled() and gc.get_freeze_count() >= before + len(made)


def test_a_collector_that_was_off_stays_off_and_a_failed_start_still_restores_it(_collector_restored):
    gc.disable()
    with pytest.raises(RuntimeError), starting():
        raise RuntimeError("settings could not be read")
    assert not gc.isenabled()
    gc.enable()
    with pytest.raises(RuntimeError), starting():
        raise RuntimeError("settings could not be read")
    assert gc.isenabled()
