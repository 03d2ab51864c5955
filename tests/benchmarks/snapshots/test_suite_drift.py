"""Suites pinned to an older snapshot say which of their targets a newer snapshot of the source changed: on the
suite page and in the caveats of every report on them."""

from __future__ import annotations

import io
import json
from pathlib import Path

from django.core.management import call_command

from benchmarks.snapshots.selectors import suite_drift_caveats, suite_source_drift
from benchmarks.suites.services import suite_import

ECFR = Path(__file__).parents[1] / "corpus" / "data" / "ecfr"
CURRENT, UPDATED = ECFR / "current" / "ECFR-title1.xml", ECFR / "updated" / "ECFR-title1.xml"
SUITE = {
    "name": "cfr1_drift", "version": 1, "corpus": "cfr1", "families": [{"id": "office", "split": "dev"}],
    "queries": [
        {"id": "q1", "kind": "ranking", "split": "dev", "family": "office",
         "text": "Where is the Office of the Federal Register located?", "targets": ["1 CFR 2.3"]},
        {"id": "q2", "kind": "ranking", "split": "dev", "family": "office",
         "text": "What does the word document mean in the Federal Register rules?", "targets": ["1 C.F.R. § 1.1"]},
        {"id": "q3", "kind": "ranking", "split": "dev", "family": "office",
         "text": "How does an agency ask the Director to approve incorporation by reference?",
         "targets": ["1 CFR 51.5"]},
    ],
}


def test_a_newer_snapshot_names_the_amended_targets_on_the_suite_page(db, stakeholder_client):
    call_command("import_corpus", str(CURRENT), stdout=io.StringIO())
    suite, _ = suite_import(raw=json.dumps(SUITE).encode(), filename="cfr1_drift.json", frozen_by="tests")
    assert suite_source_drift(suite=suite) == [] and suite_drift_caveats(suite=suite) == ()
    page = stakeholder_client.get(f"/benchmarks/suites/{suite.pk}/").content.decode()
    assert 'data-testid="source-drift"' not in page

    call_command("import_corpus", str(UPDATED), stdout=io.StringIO())
    (drift,) = suite_source_drift(suite=suite)
    assert drift.targets == 3
    assert [(c.qid, c.citation, c.kind) for c in drift.changed] == [("q1", "1 CFR 2.3", "amended"),
                                                                     ("q2", "1 CFR 1.1", "notes")]
    (caveat,) = suite_drift_caveats(suite=suite)
    assert "changes 2 of its 3 targets there (q1: 1 CFR 2.3 (text amended); q2: 1 CFR 1.1 (notes amended only))" \
        in caveat
    page = stakeholder_client.get(f"/benchmarks/suites/{suite.pk}/").content.decode()
    assert 'data-testid="source-drift"' in page and page.count('data-testid="target-changed"') == 2
    assert f"/benchmarks/snapshots/{drift.latest.pk}/changes/?against={drift.pinned.pk}" in page
