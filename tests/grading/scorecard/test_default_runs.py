"""The leaderboard's default selection leaves the demo's synthetic run out while a real run exists."""

from __future__ import annotations

import pytest

from grading.runs.models import ExtractionRun
from grading.scorecard.leaderboard import runs_complete


@pytest.mark.django_db
def test_a_synthetic_run_is_left_out_of_the_default_board_unless_it_is_all_there_is(loaded):
    assert {r.pk for r in runs_complete(sample=loaded.sample)} == {loaded.gold.pk, loaded.noisy.pk}
    ExtractionRun.objects.filter(pk=loaded.gold.pk).update(synthetic=True)
    assert [r.pk for r in runs_complete(sample=loaded.sample)] == [loaded.noisy.pk]
    ExtractionRun.objects.filter(pk=loaded.noisy.pk).update(synthetic=True)
    assert {r.pk for r in runs_complete(sample=loaded.sample)} == {loaded.gold.pk, loaded.noisy.pk}
