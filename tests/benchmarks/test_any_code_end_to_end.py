"""Done-when of "any statute or regulation corpus": a code the project never saw (1 CFR, GPO's eCFR bulk XML)
imports through its standard's importer and, as a corpus file, through the file format, to the same passages; a
suite pasted in the workbench on it freezes to the hash ``import_suite`` gives the same file, is retrieved,
reranked by the local model and reported; GPO's next edition of the title then shows what changed, and the suite
and its report say which targets changed."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from benchmarks.corpus.formats import ecfr_xml
from benchmarks.corpus.models import Passage, SourceSnapshot
from benchmarks.rerank.models import RerankRun
from benchmarks.retrieval.models import RetrievalRun
from benchmarks.suites.models import Suite, SuiteDraft
from tests.factories import client_for, make_user

ECFR = Path(__file__).parent / "corpus" / "data" / "ecfr"
CURRENT, UPDATED = ECFR / "current" / "ECFR-title1.xml", ECFR / "updated" / "ECFR-title1.xml"
FAMILIES = [{"id": "office", "split": "dev"}, {"id": "filing", "split": "dev"},
            {"id": "incorporation", "split": "heldout"}, {"id": "conference", "split": "heldout"}]
QUERIES = [
    ("q1", "office", "Where is the Office of the Federal Register located and what is its mailing address?",
     ["1 CFR 2.3"]),
    ("q2", "filing", "When is a document received by the Office filed for public inspection on the regular schedule?",
     ["1 C.F.R. § 17.2(b)"]),
    ("q3", "incorporation", "How does an agency ask the Director to approve a publication for incorporation by "
                            "reference?", ["1 cfr §51.5"]),
    ("q4", "conference", "Who at the Administrative Conference answers a request for records under the Freedom of "
                         "Information Act?", ["1 CFR 304.4"]),
]
SUITE = {
    "name": "cfr1_end_to_end", "version": 1, "corpus": "cfr1", "description": "1 CFR, General Provisions",
    "nominated_by": "tests", "families": FAMILIES,
    "queries": [{"id": qid, "kind": "ranking", "split": next(f["split"] for f in FAMILIES if f["id"] == fam),
                 "family": fam, "text": text, "targets": targets} for qid, fam, text, targets in QUERIES]
    + [{"id": "ec1", "kind": "exact_citation", "text": "1 C.F.R. § 3.3(b)", "expected_citation": "1 CFR 3.3"}],
}


def _as_corpus_file(path: Path) -> bytes:
    """The same title as a corpus file (docs/corpus-format.md), one line per section."""
    source = ecfr_xml.parse(path.read_bytes(), filename=path.name)
    lines = []
    for p in source.provisions:
        levels = dict(p.hierarchy)
        lines.append({"citation": p.citation, "heading": p.heading, "text": p.body, "url": p.official_url,
                      "as_of": p.as_of, "jurisdiction": source.jurisdiction, "code": source.code_name,
                      "title": levels["title"], "part": levels["part"], "chapter_title": p.chapter_title,
                      "history": p.history, "notes": p.notes, "repealed": p.repealed})
    return ("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n").encode()


# About 9 s (three imports, a local rerank, a dozen pages): in the slow lane, which CI runs on PostgreSQL.
@pytest.mark.slow
@pytest.mark.django_db
def test_a_code_never_seen_is_imported_benchmarked_reported_and_compared(django_user_model, tmp_path):
    out = io.StringIO()
    # 1. The standard's importer, and the same sections through the corpus file format: the same passages.
    call_command("import_corpus", str(CURRENT), stdout=out)
    as_file = tmp_path / "cfr1.jsonl"
    as_file.write_bytes(_as_corpus_file(CURRENT))
    call_command("import_corpus", str(as_file), "--code", "cfr1-file", stdout=out)
    assert "imported: cfr1 ECFR-title1.xml" in out.getvalue() and "imported: cfr1-file cfr1.jsonl" in out.getvalue()
    by_code = {code: dict(Passage.objects.filter(provision__corpus=code).values_list("provision__citation", "sha256"))
               for code in ("cfr1", "cfr1-file")}
    assert len(by_code["cfr1"]) == 288 and by_code["cfr1"] == by_code["cfr1-file"]

    # 2. The suite file pasted in the workbench freezes to the hash import_suite gives the same file.
    admin = client_for(make_user(django_user_model, "e2e_admin", "admin"))
    text = yaml.safe_dump(SUITE, sort_keys=False, allow_unicode=True)
    assert admin.post("/benchmarks/suites/workbench/import/", {"text": text, "format": "yaml"}).status_code == 302
    draft = SuiteDraft.objects.get()
    assert admin.post(f"/benchmarks/suites/workbench/{draft.pk}/freeze/").status_code == 302
    suite = Suite.objects.get()
    assert suite.queries.get(qid="q2").targets.get().citation == "1 CFR 17.2"
    assert suite.queries.get(qid="ec1").expected_citation == "1 CFR 3.3"
    path = tmp_path / "cfr1_end_to_end.yaml"
    path.write_text(text)
    call_command("import_suite", str(path), stdout=out)
    assert f"sha256={suite.sha256}" in out.getvalue() and "already frozen (no-op)" in out.getvalue()

    # 3. Retrieved (BM25 over the pinned snapshot), reranked by the local model, reported.
    call_command("retrieve", "--suite", suite.name, "--k", "10", stdout=out)
    retrieval = RetrievalRun.objects.get(suite=suite)
    assert retrieval.status == "done", out.getvalue()
    assert re.search(r"target coverage=[1-4]/4", out.getvalue())
    call_command("rerank", "--retrieval-run", str(retrieval.pk), "--provider", "local", "--sync", stdout=out)
    rerank = RerankRun.objects.get(retrieval_run=retrieval)
    assert rerank.status == "done" and "failed 0" in out.getvalue()
    report = admin.get(f"/benchmarks/reports/rerank/{rerank.pk}/")
    page = report.content.decode()
    assert report.status_code == 200 and "cfr1_end_to_end" in page and "Hit@5" in page
    assert "A newer snapshot" not in page

    # 4. GPO's next edition: what changed, and which of the suite's targets.
    call_command("import_corpus", str(UPDATED), stdout=out)
    old, new = SourceSnapshot.objects.filter(corpus="cfr1").order_by("id")
    changes = admin.get(f"/api/v1/benchmarks/snapshots/{new.pk}/changes/").json()
    assert changes["counts"]["amended"] == 35 and changes["old"]["id"] == old.pk
    suite_page = admin.get(f"/benchmarks/suites/{suite.pk}/").content.decode()
    assert "q1" in suite_page and suite_page.count('data-testid="target-changed"') == 2  # 2.3 text; 17.2 notes
    caveats = admin.get(f"/api/v1/benchmarks/reports/rerank/{rerank.pk}/").json()["caveats"]
    (drift,) = [c for c in caveats if c.startswith("A newer snapshot of ECFR-title1.xml")]
    assert ("changes 2 of its 4 targets there (q1: 1 CFR 2.3 (text amended); q2: 1 CFR 17.2 (notes amended "
            "only))") in drift
