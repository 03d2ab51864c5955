"""The firm's own gold labels, the whole path in headless chromium, through the real pages: an admin imports a
PDF, a DOCX and a text contract and starts labelling two categories; two lawyers label them blind (one category
agreed, one disagreed on a contract); the admin adjudicates, freezes, pastes a run on the frozen gold set and reads
its scorecard.

Prints (never asserts) what a lawyer's flow took per contract (clicks, keystrokes, seconds) and how long a 100-page
PDF contract's labelling page took to open.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict

import pytest

from grading.contracts.gold.models import GoldSet
from grading.contracts.models import ContractSet
from reviewapp.review.judgments.models import Judgment, ReviewItem
from tests.browser.conftest import login
from tests.browser.contracts.test_label_spans import _SELECT, _print_timing
from tests.browser.site.test_content_security_policy import Watch
from tests.grading.contracts import files

pytestmark = pytest.mark.browser

LAW, TERMINATION = "Governing Law", "Termination for Convenience"
# What each lawyer highlights (a phrase of the contract) or None (marks the category absent), per contract title.
SUPPLY_LAW = "governed by the laws of the State of Nevada"
SUPPLY_END = "Either party may terminate this Agreement on 30 days notice"
SERVICES_LAW = "governed by the laws of England and Wales"
SERVICES_END = "The Customer may terminate for convenience on 60 days written notice"
LICENCE_LAW = "The laws of the State of New York govern this Agreement"
LAWYER_A = {("supply", LAW): SUPPLY_LAW, ("supply", TERMINATION): SUPPLY_END,
            ("services", LAW): SERVICES_LAW, ("services", TERMINATION): SERVICES_END,
            ("licence", LAW): LICENCE_LAW, ("licence", TERMINATION): None}
# Lawyer B agrees everywhere but one: the services contract's termination right, which B reads as absent.
LAWYER_B = {**LAWYER_A, ("services", TERMINATION): None}

SERVICES_DOCX = ("SERVICES AGREEMENT between Gamma Inc and Delta Ltd.",
                 "Governing Law. This Agreement is governed by the laws of England and Wales.",
                 "Termination. The Customer may terminate for convenience on 60 days written notice.")
LICENCE_TXT = (b"LICENCE AGREEMENT\n\nGoverning Law. The laws of the State of New York govern this Agreement.\n\n"
               b"Term. This licence is perpetual and may not be ended by either party.\n")


def _find(text: str, phrase: str) -> tuple[int, int]:
    """Where ``phrase`` is in the stored text, whatever line breaks the PDF's layout put between its words."""
    found = re.search(r"\s+".join(map(re.escape, phrase.split())), text)
    assert found, f"{phrase!r} not in the stored text"
    return found.start(), found.end()


def _signed_in(browser, live_server, user):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(20_000)
    login(page, live_server, user.username, "pw-" + user.username)
    page.wait_for_selector('[data-testid="roles"]')
    return context, page


def _import(page, live_server, tmp_path, name: str, uploads: dict[str, bytes]) -> ContractSet:
    page.goto(f"{live_server.url}/cuad/contracts/")
    page.fill('input[name="name"]', name)
    page.click('form:has(input[name="name"]) button[type="submit"]')
    page.wait_for_url(re.compile(r"/cuad/contracts/\d+/$"))
    paths = []
    for filename, data in uploads.items():
        path = tmp_path / filename
        path.write_bytes(data)
        paths.append(str(path))
    page.set_input_files("#contract-files", paths)
    page.click('form:has(#contract-files) button[type="submit"]')
    page.wait_for_selector('[data-testid="import-outcomes"]')
    outcomes = page.inner_text('[data-testid="import-outcomes"]')
    for filename in uploads:
        assert f"{filename}: imported as" in outcomes, outcomes
    return ContractSet.objects.get(name=name)


def _start_labelling(page, live_server, contract_set, categories, lawyers) -> None:
    page.goto(f"{live_server.url}/cuad/contracts/{contract_set.pk}/gold/")
    page.select_option("#start-categories", categories)
    for user in lawyers:
        page.check(f'[data-testid="gold-start"] input[name="reviewers"][value="{user.pk}"]')
    page.fill("#start-per-item", str(len(lawyers)))
    page.click('[data-testid="gold-start-submit"]')
    page.wait_for_selector(".messages")
    assert "Labelling started" in page.inner_text(".messages")


def _item_on(page) -> ReviewItem:
    item_id = re.search(r"/review/workspace/items/([^/]+)/", page.url).group(1)
    return ReviewItem.objects.get(public_id=item_id)


def _label_queue(page, live_server, answers, *, others=()) -> dict[str, dict[str, float]]:
    """Label every item of the signed-in lawyer's queue as ``answers`` says, the way a lawyer does: continue from
    the queue, then per item select + ``h`` (or ``a``) and ``c``, which saves and opens the next item. ``others``:
    strings (another lawyer's name, spans) the page must never contain. Per contract: clicks, keys, seconds."""
    cost: dict[str, dict[str, float]] = defaultdict(lambda: {"clicks": 0, "keys": 0, "seconds": 0.0})
    page.goto(f"{live_server.url}/review/workspace/")
    page.click('[data-testid="continue"]')
    cost["(queue)"]["clicks"] += 1
    seen = 0
    while True:
        page.wait_for_load_state()
        if "/review/workspace/items/" not in page.url:  # the queue again: nothing left to label
            break
        started = time.perf_counter()
        page.wait_for_selector("body[data-spans-ready]")
        item = _item_on(page)
        # Blind: nothing of another lawyer's answer is on the page, and the lawyer starts from an empty answer.
        html = page.content()
        for secret in others:
            assert secret not in html, f"{secret!r} on {item.source_heading}/{item.query_id}"
        assert page.locator('[data-testid="span-list"] li[data-start]').count() == 0
        assert page.locator("mark.span-mark").count() == 0
        here = cost[item.source_heading]
        phrase = answers[(item.source_heading, item.query_id)]
        if phrase is None:
            page.keyboard.press("a")
            here["keys"] += 1
        else:
            start, end = _find(item.source_text, phrase)
            page.evaluate(_SELECT, [start, end])  # a drag over the phrase
            here["clicks"] += 1
            page.eval_on_selector("#contract-text", "el => el.focus()")
            page.keyboard.press("h")
            here["keys"] += 1
            page.wait_for_selector(f'[data-testid="span-list"] li[data-start="{start}"]')
        page.keyboard.press("c")
        here["keys"] += 1
        page.wait_for_url(lambda url, gone=item.public_id: gone not in url)
        here["seconds"] += time.perf_counter() - started
        seen += 1
    assert seen == len(answers)
    return cost


def _spans_of(user) -> list[str]:
    """How another page could give away ``user``'s answers: their spans as offsets, in the forms a page uses."""
    out = []
    for judgment in Judgment.objects.filter(reviewer=user).select_related("current"):
        for start, end in judgment.current.spans:
            out += [f'data-start="{start}"', f"[[{start}, {end}]]", f"[[{start},{end}]]"]
    return out


def test_lawyers_build_a_gold_set_blind_and_a_run_is_graded_against_it(
        browser, live_server, tmp_path, admin_user_, reviewer_user, reviewer2_user):
    admin_context, admin = _signed_in(browser, live_server, admin_user_)
    watch = Watch(admin, live_server.url)
    contract_set = _import(admin, live_server, tmp_path, "Firm contracts", {
        "supply.pdf": files.pdf_with_text(), "services.docx": files.docx_bytes(SERVICES_DOCX),
        "licence.txt": LICENCE_TXT})
    assert sorted(contract_set.contracts.values_list("text__kind", flat=True)) == ["docx", "pdf", "text"]
    # The set keeps CUAD's taxonomy (its default); labelling starts on two of its categories, two lawyers each.
    _start_labelling(admin, live_server, contract_set, [LAW, TERMINATION], [reviewer_user, reviewer2_user])
    assert ReviewItem.objects.filter(pool__external_ref__contract_set=contract_set.pk).count() == 6

    a_context, lawyer_a = _signed_in(browser, live_server, reviewer_user)
    cost = _label_queue(lawyer_a, live_server, LAWYER_A, others=[reviewer2_user.username])
    b_context, lawyer_b = _signed_in(browser, live_server, reviewer2_user)
    _label_queue(lawyer_b, live_server, LAWYER_B, others=[reviewer_user.username, *_spans_of(reviewer_user)])
    a_context.close()
    b_context.close()
    for title in ("supply", "services", "licence"):
        c = cost[title]
        print(f"\nlawyer A, contract {title} (2 categories): {c['clicks']} drags + {c['keys']} keystrokes, "
              f"{c['seconds']:.2f} s (each save and the opening of the next item included)")
    print(f"lawyer A, once: {cost['(queue)']['clicks']} click to start the queue")

    # The admin sees one open disagreement, rules for lawyer A's span, and freezes.
    admin.goto(f"{live_server.url}/cuad/contracts/{contract_set.pk}/gold/")
    open_rows = admin.locator('[data-testid="gold-open"] li')
    assert open_rows.count() == 1 and f"services · {TERMINATION}" in open_rows.inner_text()
    open_rows.locator("a").click()
    admin.wait_for_selector('[data-testid="gold-lawyers"]')
    assert SERVICES_END in admin.inner_text('[data-testid="gold-lawyers"]')
    admin.check('input[name="ruling"][value^="lawyer-"]')
    admin.click('[data-testid="gold-rule"]')
    admin.wait_for_url(re.compile(rf"/cuad/contracts/{contract_set.pk}/gold/$"))
    assert "Ruling recorded." in admin.inner_text(".messages")
    assert admin.locator('[data-testid="gold-open"] li').count() == 0
    admin.click('[data-testid="gold-freeze"]')
    admin.wait_for_url(re.compile(rf"/cuad/contracts/{contract_set.pk}/gold/v1/$"))
    summary = admin.inner_text('[data-testid="gold-summary"]')
    assert "3 contracts × 2 categories · 5 spans" in summary
    provenance = admin.inner_text('[data-testid="gold-provenance"]')
    assert "6 answers counted (5 agreed by 2 lawyers" in provenance
    assert f"1 ruled by {admin_user_.username} after the lawyers disagreed (adjudicated)" in provenance
    gold = GoldSet.objects.get(contract_set=contract_set)
    answers = {c["title"]: c["answers"] for c in gold.content["contracts"]}
    assert [s["text"] for s in answers["services"][TERMINATION]["spans"]] == [SERVICES_END]
    assert answers["licence"][TERMINATION] == {"present": False, "spans": []}

    # A run equal to the gold set grades 100%; one that misses the adjudicated span misses exactly that span.
    run = {"model": "equal-to-gold", "extractions": [
        {"contract": title, "category": category, "text": span["text"]}
        for title, by_category in answers.items() for category, answer in by_category.items()
        for span in answer["spans"]]}
    assert len(run["extractions"]) == 5
    scorecard = _paste(admin, live_server, run)
    assert "Firm contracts gold v1" in admin.inner_text('[data-testid="population-dataset"]')
    assert admin.inner_text('[data-testid="headline-f1"]').startswith("100.0%")
    assert _row(admin, TERMINATION)[:5] == ["2", "2", "2", "0", "0"]  # spans, extractions, correct, partial, wrong
    run = {"model": "misses-one", "extractions": [e for e in run["extractions"] if e["text"] != SERVICES_END]}
    _paste(admin, live_server, run, back_to=scorecard)
    assert not admin.inner_text('[data-testid="headline-f1"]').startswith("100.0%")
    assert _row(admin, TERMINATION)[:5] == ["2", "1", "1", "0", "0"]
    assert _row(admin, TERMINATION)[6] == "1"  # missed
    assert _row(admin, LAW)[:3] == ["3", "3", "3"]
    watch.check("the contract gold flow")
    admin_context.close()


def _paste(page, live_server, run: dict, back_to: str = "") -> str:
    """Paste ``run`` on the gold set's runs page (reached from the gold set's link) and open its scorecard."""
    if back_to:
        page.goto(back_to)
    else:
        page.click('[data-testid="gold-dataset"] a[href*="/cuad/runs/"]')
    page.wait_for_selector("#run_text")
    url = page.url
    page.fill("#run_text", json.dumps(run))
    page.click('[data-testid="paste-submit"]')
    page.wait_for_url(re.compile(r"/cuad/runs/\d+/$"))
    run_id = re.search(r"/cuad/runs/(\d+)/$", page.url).group(1)
    page.goto(f"{live_server.url}/cuad/scorecard/?run={run_id}")
    page.wait_for_selector('[data-testid="headline-f1"]')
    return url


def _row(page, category: str) -> list[str]:
    cells = page.locator(f'[data-testid="row"]:has(td a:text-is("{category}")) td')
    return [text.strip() for text in cells.all_inner_texts()[1:]]


def test_a_100_page_pdf_opens_for_labelling_and_names_the_page_of_a_span(
        browser, live_server, tmp_path, admin_user_, reviewer_user):
    clause = "Governing Law. This Agreement is governed by the laws of the Province of Ontario."
    pages = tuple(f"Page {n}. " + (clause if n == 57 else f"The Supplier delivers the goods of Schedule {n} "
                                   f"on the dates agreed in writing between the parties. " * 6)
                  for n in range(1, 101))
    admin_context, admin = _signed_in(browser, live_server, admin_user_)
    contract_set = _import(admin, live_server, tmp_path, "Long contracts",
                           {"long.pdf": files.pdf_with_text(pages)})
    assert contract_set.contracts.get().text.units == 100
    _start_labelling(admin, live_server, contract_set, [LAW], [reviewer_user])
    admin_context.close()
    item = ReviewItem.objects.get(pool__external_ref__contract_set=contract_set.pk)

    context, lawyer = _signed_in(browser, live_server, reviewer_user)
    started = time.perf_counter()
    lawyer.goto(f"{live_server.url}/review/workspace/items/{item.public_id}/")
    lawyer.wait_for_selector("body[data-spans-ready]")
    _print_timing(lawyer, f"100-page PDF ({len(item.source_text)} chars), first open",
                  (time.perf_counter() - started) * 1000)
    start, end = _find(item.source_text, clause)
    lawyer.evaluate(_SELECT, [start, end])
    lawyer.eval_on_selector("#contract-text", "el => el.focus()")
    lawyer.keyboard.press("h")
    span = lawyer.locator(f'[data-testid="span-list"] li[data-start="{start}"]')
    assert "page 57" in span.inner_text()
    context.close()
