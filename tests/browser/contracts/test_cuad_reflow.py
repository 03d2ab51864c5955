"""CUAD pages that widened the page or lost text: the label audit with long judges' reasons at 1440 px, the
scorecard's run select with a long model name at 390 px, and the explorer's quotes under WCAG 1.4.12 text spacing
(line height 1.5, paragraph spacing 2, letter spacing 0.12, word spacing 0.16 of the font size)."""

from __future__ import annotations

import pytest

from grading.audits.models import Audit, AuditCandidate, AuditJudge, AuditVerdict
from grading.runs.models import Extraction, ExtractionRun
from tests.browser.site.test_page_crawl import _session_cookie
from tests.factories import make_user
from tests.grading.audit_support import audited_run, local_audit

pytestmark = pytest.mark.browser

TEXT_SPACING = ("* { line-height: 1.5 !important; letter-spacing: 0.12em !important; word-spacing: 0.16em !important; }"
                " p { margin-bottom: 2em !important; }")
REASON = ("The quote names the assignee, the consent requirement and the carve-out for affiliates, which is what the "
          "category describes; the excerpt around it confirms that it is an operative clause and not a definition. ")


def _width(page) -> list[int]:
    return page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")


@pytest.fixture
def audited(transactional_db, tmp_path, django_user_model):
    _, run = audited_run(tmp_path, extra=4)
    ExtractionRun.objects.filter(pk=run.pk).update(model="a-provider/a-very-long-model-name-of-a-fine-tuned-extractor-v2-2026")
    # one long quote (CUAD spans run to 3,884 characters): the explorer must show all of it
    first = Extraction.objects.filter(run=run).order_by("pk").first()
    Extraction.objects.filter(pk=first.pk).update(text=REASON * 6)
    audit = local_audit(run)
    for judge in AuditJudge.objects.filter(audit=audit):
        for candidate in AuditCandidate.objects.filter(audit=audit):
            AuditVerdict(candidate=candidate, judge=judge, verdict=True, reason=REASON * 2).save()
    Audit.objects.filter(pk=audit.pk).update(status="done", stage="done")
    return run, audit, make_user(django_user_model, "reader", "stakeholder")


def test_cuad_pages_fit_the_screen_and_lose_no_text_under_text_spacing(browser, live_server, audited):
    run, audit, reader = audited
    for size, path in (((1440, 900), f"/cuad/audits/{audit.pk}/"), ((390, 844), f"/cuad/scorecard/?run={run.pk}"),
                       ((320, 256), f"/cuad/scorecard/?run={run.pk}"), ((320, 256), f"/cuad/audits/{audit.pk}/")):
        ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
        ctx.add_cookies(_session_cookie(reader, live_server))
        page = ctx.new_page()
        try:
            page.goto(live_server.url + path)
            width = _width(page)
            assert width[0] <= width[1], (path, size, width)
        finally:
            ctx.close()

    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.add_cookies(_session_cookie(reader, live_server))
    page = ctx.new_page()
    try:
        page.goto(f"{live_server.url}/cuad/scorecard/explorer/?run={run.pk}")
        page.add_style_tag(content=TEXT_SPACING)
        clipped = page.evaluate("""() => Array.from(document.querySelectorAll('.quote, .quote .body'))
            .filter((el) => el.scrollHeight > el.clientHeight + 1).map((el) => el.textContent.trim().slice(0, 40))""")
        assert page.locator(".quote .body").count() > 0
        assert clipped == []
    finally:
        ctx.close()
