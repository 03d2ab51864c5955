"""Blindness audit: crawl everything a reviewer can reach and find nothing about the model, the judges, the
systems, ranks or another reviewer's grades, in any byte received.

The world (tests/trust/fixtures.py) plants distinctive markers in job-side data: a model id, a provider name,
judge reasons, P(useful) and probabilities with unusual digits, rank markers in external_ref, the other
reviewer's notes. The crawler starts at / and /review/, follows every same-site link, form action and htmx
hx-get/hx-post target, reads the reviewer's API, saves a judgment through the page (htmx and plain) and the
API, and checks every response, refusals included.
"""

from __future__ import annotations

import html
import json
import re
from collections import deque
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

from reviewapp.review.assignment.models import Assignment
from reviewapp.review.assignment.services import assignment_sort_key
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.models import ReviewPool
from tests.helpers import shown_hashes
from tests.trust.fixtures import BLIND_MARKERS, MODEL_MARKER, OTHER_NOTE_MARKER, body_of, client_for

pytestmark = pytest.mark.django_db

# Words that would betray model information if they reached a reviewer (as in tests/reviewapp/review/conftest.py).
FORBIDDEN_WORDS = re.compile(
    r"\b(rank\w*|scor\w*|probab\w*|p_useful|proposed|confidence|system|bm25|rerank\w*|model\w*|provider\w*|"
    r"judge\w*|verdict\w*|heuristic|minilm|openai|anthropic|openrouter|logprob\w*)\b", re.I)
# JSON keys a reviewer-facing API must never carry.
FORBIDDEN_KEYS = re.compile(r"rank|score|prob|p_useful|model|provider|system|judge|verdict|proposed|"
                            r"external|reviewer|query_id|doc_id|confidence|run", re.I)
LINK = re.compile(r"""(?<![\w-])(?:href|src|action|hx-get|hx-post|hx-put|hx-patch|hx-delete)\s*=\s*["']([^"']+)["']""",
                  re.I)
# Sentences that name what is hidden without revealing any of it (the reviewer's home page says so).
BENIGN = ("You will not see how any system ranked or scored them.",)
ID_ATTR = re.compile(r"""\b(?:id|data-[\w-]+|name|value|for)\s*=\s*["']([^"']*)["']""", re.I)


def _same_site_paths(html: str, base: str) -> set[str]:
    out = set()
    for raw in LINK.findall(html):
        url = urldefrag(urljoin(base, raw.replace("&amp;", "&")))[0]
        parts = urlsplit(url)
        if parts.scheme not in ("", "http") or parts.netloc not in ("", "testserver"):
            continue
        if parts.path.startswith("/static/"):
            continue
        out.add(parts.path + (f"?{parts.query}" if parts.query else ""))
    return out


def _content_lines(world) -> list[str]:
    """The texts a reviewer must read (query, source, passage, instructions), in every encoding a page uses.

    They are the legal content itself (a statute may well say "judge"); the word check runs on everything
    else. Planted markers are looked for in every byte, content included.
    """
    from reviewapp.review.workspace.selectors import reviewer_item

    lines = set(BENIGN)
    items = ReviewItem.objects.filter(assignments__reviewer=world.users["reviewer"]).select_related("pool")
    for item in items:
        # The item page also cuts the section around the highlighted passage and heads it with its citation
        # (jurisdiction, code, chapter title: legal content too).
        view = reviewer_item(reviewer=world.users["reviewer"], item_id=item.public_id)
        cut = (view.segments.before, view.segments.passage, view.segments.after) if view.segments else ()
        cited = tuple(value for _, value in view.context.facts) if view.context else ()
        for text in (item.query_text, item.source_heading, item.source_text, item.passage_caption, item.passage_text,
                     item.pool.instructions, item.pool.reviewer_title, *cut, *cited):
            for line in (text or "").splitlines():
                if line.strip():
                    lines |= {line, html.escape(line), json.dumps(line, ensure_ascii=False)[1:-1],
                              json.dumps(line)[1:-1]}
    return sorted(lines, key=len, reverse=True)


def _assert_blind(text: str, *, where: str, content: list[str]) -> None:
    for marker in BLIND_MARKERS:
        assert marker not in text, f"planted marker {marker!r} reached the reviewer in {where}"
    for line in content:
        text = text.replace(line, "")
    match = FORBIDDEN_WORDS.search(text)
    if match is not None:
        context = text[max(0, match.start() - 100): match.end() + 100]
        raise AssertionError(f"{match.group(0)!r} reached the reviewer in {where}: ...{context}...")


def _json_keys(value, path="$"):
    if isinstance(value, dict):
        for key, child in value.items():
            yield f"{path}.{key}", key
            yield from _json_keys(child, f"{path}.{key}")
    elif isinstance(value, list):
        for n, child in enumerate(value):
            yield from _json_keys(child, f"{path}[{n}]")


def _crawl(client, starts: list[str]) -> dict[str, tuple[int, str]]:
    """Breadth-first over same-site links; returns url -> (status, body text)."""
    seen: dict[str, tuple[int, str]] = {}
    todo = deque(starts)
    while todo:
        url = todo.popleft()
        if url in seen or len(seen) > 400:
            continue
        response = client.get(url)
        text = body_of(response).decode("utf-8", errors="replace")
        seen[url] = (response.status_code, text)
        if response.status_code in (301, 302) and response.get("Location"):
            todo.append(urlsplit(response["Location"]).path)
        if "html" in response.get("Content-Type", ""):
            todo.extend(_same_site_paths(text, url) - set(seen))
    return seen


def _reviewer_item_ids(world) -> list[str]:
    return list(Assignment.objects.filter(reviewer=world.users["reviewer"])
                .values_list("item__public_id", flat=True))


def test_nothing_a_reviewer_can_reach_reveals_the_model_the_judges_ranks_or_another_reviewers_grades(world):
    client = client_for(world.users["reviewer"])
    item_ids = _reviewer_item_ids(world)
    assert len(item_ids) >= 15  # three pools: declared from a rerank run, planted refs, the CUAD audit

    starts = ["/", "/review/workspace/", "/api/v1/me/", "/api/v1/review/queue/"]
    for item_id in item_ids:
        starts += [f"/review/workspace/items/{item_id}/", f"/review/workspace/items/{item_id}/history/",
                   f"/api/v1/review/items/{item_id}/", f"/api/v1/review/items/{item_id}/history/"]
    pages = _crawl(client, starts)
    content = _content_lines(world)
    reached = {url for url, (status, _) in pages.items() if status == 200}
    assert {f"/review/workspace/items/{i}/" for i in item_ids} <= reached  # the crawl really read every item
    # ...including those of the pool of several rerank runs, whose items record the systems that pooled them
    multi = set(ReviewItem.objects.filter(pool__public_id=world.multi_pool_id, assignments__reviewer=world.users[
        "reviewer"]).values_list("public_id", flat=True))
    assert multi and {f"/review/workspace/items/{i}/" for i in multi} <= reached
    contributors = {system for item in ReviewItem.objects.filter(pool__public_id=world.multi_pool_id)
                    for system in item.external_ref["contributed_by"]}
    assert {s for s in contributors if s.startswith("rerank-")}  # recorded job-side, as the metrics need

    # Saves: through the page (plain and htmx) and the API; their answers are checked too.
    pool_item = item_ids[0]
    shown, shown_api = shown_hashes(pool_item), shown_hashes(item_ids[1])
    pages["POST page save"] = _post(client, f"/review/workspace/items/{pool_item}/",
                                    {"section": "2", "passage": "1", "action": "save", "note": "n", **shown})
    pages["POST htmx save"] = _post(client, f"/review/workspace/items/{pool_item}/",
                                    {"section": "2", "passage": "2", "action": "save", **shown}, HTTP_HX_REQUEST="true")
    pages["POST htmx refused"] = _post(client, f"/review/workspace/items/{pool_item}/",
                                       {"section": "9", "action": "complete", **shown}, HTTP_HX_REQUEST="true")
    pages["POST api save"] = _post_json(client, f"/api/v1/review/items/{item_ids[1]}/judgment/",
                                        {"grades": {"section": 1, "passage": 0}, "complete": False, **shown_api})
    pages["POST api refused"] = _post_json(client, f"/api/v1/review/items/{item_ids[1]}/judgment/",
                                           {"grades": {"passage": 9}, **shown_api})
    history = f"/review/workspace/items/{pool_item}/history/"
    pages[f"{history} after saves"] = _get(client, history)
    # The workspace's other actions and the queue's filters and search answer blind too.
    pages["POST htmx undo"] = _post(client, f"/review/workspace/items/{pool_item}/", {"action": "undo"},
                                    HTTP_HX_REQUEST="true")
    pages["POST skip"] = _post(client, f"/review/workspace/items/{item_ids[2]}/", {"action": "skip"})
    for query in ("?status=skipped", "?status=draft", "?status=todo", "?status=complete", "?q=the", "?end=1"):
        pages[f"/review/workspace/{query} after saves"] = _get(client, f"/review/workspace/{query}")
    pages["POST unskip"] = _post(client, f"/review/workspace/items/{item_ids[2]}/", {"action": "unskip"})

    for url, (status, text) in pages.items():
        assert status < 500, f"{url} answered {status}"
        _assert_blind(text, where=f"{url} ({status})", content=content)
        for system in contributors:
            assert system not in text, f"contributing system {system!r} reached the reviewer in {url}"
        assert "contributed_by" not in text, url
        if url.startswith("/api/") and status == 200 and text.strip().startswith(("{", "[")):
            for path, key in _json_keys(json.loads(text)):
                if url.startswith("/api/v1/me/"):
                    continue
                assert not FORBIDDEN_KEYS.search(key), f"{url}: key {path} is not for a reviewer"

    # Nothing beyond the review (and the reviewer's own identity) answered 200.
    allowed = re.compile(
        r"^/($|review/|api/v1/review/(queue|items)/|api/v1/me/|api/v1/schema/|api/v1/docs/|accounts/|glossary/)")
    assert all(allowed.match(url) for url in reached), sorted(u for u in reached if not allowed.match(u))


NOMINATOR_MARKER = "planted-nominator-NMX"


def test_target_confirmation_items_show_the_query_and_provision_and_nothing_of_the_nominator_or_a_model(world):
    """A suite whose targets were nominated by a planted name (with a planted model in a note) goes to confirmation:
    the reviewer's pages, API and proposal answers carry neither, nor any model word."""
    from benchmarks.corpus.models import Provision
    from benchmarks.suites.confirmation import confirmation_pool_declare
    from benchmarks.suites.models import Suite
    from benchmarks.suites.services import suite_import
    from reviewapp.core.records.hashing import canonical_json
    from reviewapp.review.pools.selectors import pool_item_keys

    base = Suite.objects.get(pk=world.suite_pk)
    document = json.loads(base.definition)
    document.update(name="trust confirmation", version=1, nominated_by=NOMINATOR_MARKER)
    for query in document["queries"]:
        query["targets"] = [{**t, "nominated_by": NOMINATOR_MARKER, "note": f"{MODEL_MARKER} rank 1"}
                            for t in query["targets"]]
    suite, _ = suite_import(raw=canonical_json(document), filename="trust-confirmation.json")
    reviewers = [world.users["reviewer"], world.users["reviewer2"]]
    pool = confirmation_pool_declare(suite=suite, reviewers=reviewers, reviewers_per_item=2)[0]
    client = client_for(world.users["reviewer"])
    item_ids = list(Assignment.objects.filter(reviewer=world.users["reviewer"], pool_id=pool.pk)
                    .values_list("item__public_id", flat=True))
    assert len(item_ids) == len(pool_item_keys(pool=pool)) >= 1
    starts = ["/review/workspace/"]
    for item_id in item_ids:
        starts += [f"/review/workspace/items/{item_id}/", f"/api/v1/review/items/{item_id}/"]
    pages = _crawl(client, starts)
    shown = {u for u, (status, _) in pages.items() if status == 200}
    assert {f"/review/workspace/items/{i}/" for i in item_ids} <= shown
    propose = f"/benchmarks/suites/confirmation/items/{item_ids[0]}/propose/"
    pages["POST propose refused"] = _post(client, propose, {"citation": "NRS 0.000"}, follow=True)
    item = ReviewItem.objects.get(public_id=item_ids[0])
    other = (Provision.objects.filter(snapshot__in=suite.snapshots.all())
             .exclude(citation__in=suite.queries.get(qid=item.query_id).targets.values("citation")).first())
    pages["POST propose"] = _post(client, propose, {"citation": other.citation}, follow=True)
    assert "is recorded" in pages["POST propose"][1]
    pages["POST grade"] = _post(client, f"/review/workspace/items/{item_ids[0]}/",
                                {"target": "y", "action": "complete", **shown_hashes(item_ids[0])})
    content = _content_lines(world)
    for url, (status, text) in pages.items():
        assert status < 500, f"{url} answered {status}"
        _assert_blind(text, where=f"{url} ({status})", content=content)
        for word in (NOMINATOR_MARKER, "nominat", "assistant", "provisional"):
            assert word not in text, f"{word!r} reached the reviewer in {url}"


def _get(client, url, **extra):
    response = client.get(url, **extra)
    return response.status_code, body_of(response).decode()


def _post(client, url, data, **extra):
    response = client.post(url, data, **extra)
    return response.status_code, body_of(response).decode()


def _post_json(client, url, data):
    response = client.post(url, json.dumps(data), content_type="application/json")
    return response.status_code, body_of(response).decode()


def test_the_other_reviewers_grades_and_notes_never_show(world):
    """Reviewer 2 graded every shared item 3/3 with a planted note; the reviewer's untouched items show nothing."""
    client = client_for(world.users["reviewer"])
    own_items = set(ReviewItem.objects.filter(judgments__reviewer=world.users["reviewer"])
                    .values_list("public_id", flat=True))
    checked = 0
    for item_id in _reviewer_item_ids(world):
        page = client.get(f"/review/workspace/items/{item_id}/").content.decode()
        api = client.get(f"/api/v1/review/items/{item_id}/").json()
        history = client.get(f"/api/v1/review/items/{item_id}/history/").json()
        assert OTHER_NOTE_MARKER not in page
        if item_id in own_items:
            continue
        checked += 1
        assert " checked" not in page, f"item {item_id}: a grade is pre-selected that the reviewer never gave"
        assert api["current"] is None and history == []
    assert checked >= 10


def test_ids_and_urls_a_reviewer_sees_are_opaque(world):
    client = client_for(world.users["reviewer"])
    job_ids = set()
    for item in ReviewItem.objects.filter(assignments__reviewer=world.users["reviewer"]):
        job_ids |= {item.query_id, item.doc_id, str(item.pk)}
        job_ids |= {str(v) for v in (item.external_ref or {}).values() if not isinstance(v, (dict, list))}
    job_ids |= {str(pk) for pk in ReviewPool.objects.values_list("pk", flat=True)}
    attributes: set[str] = set()
    urls: set[str] = set()
    for url in ["/review/workspace/", *[f"/review/workspace/items/{i}/" for i in _reviewer_item_ids(world)]]:
        html = client.get(url).content.decode()
        attributes |= set(ID_ATTR.findall(html))
        urls |= _same_site_paths(html, url)
    for public_id in _reviewer_item_ids(world):
        assert re.fullmatch(r"[A-Za-z0-9_-]{16,}", public_id), f"item id {public_id!r} is not opaque"
    for value in attributes | urls:
        for token in re.split(r"[/?&=#:\s.-]+", value):
            if token and not token.isdigit():
                assert token not in job_ids or len(token) < 3, f"job-side id {token!r} in {value!r}"
    # no URL segment a reviewer sees is a database id (ids are random strings)
    for url in urls:
        assert not re.search(r"/\d+/", url), f"{url} carries a sequential id"


def test_the_queue_order_does_not_follow_rank_or_insertion_order(world):
    client = client_for(world.users["reviewer"])
    queues = client.get("/api/v1/review/queue/").json()
    by_id = {i.public_id: i for i in ReviewItem.objects.filter(assignments__reviewer=world.users["reviewer"])}
    reviewer = world.users["reviewer"]
    for queue in queues:
        ids = [entry["item"] for entry in queue["items"]]
        items = [by_id[i] for i in ids]
        # The order is the pool's tiers, each a set of whole queries (the same for every reviewer, in a keyed order
        # of query ids), and within a tier the reviewer's own keyed shuffle: a hash of pool, reviewer and opaque
        # item id, which carries nothing of rank, top-k membership, insertion order or database ids.
        keys = [(by_id[i].priority, assignment_sort_key(pool_public_id=queue["pool"], reviewer_id=reviewer.pk,
                                                        item_public_id=i)) for i in ids]
        assert keys == sorted(keys), "queue is not in tier order, then the reviewer's keyed-shuffle order"
        tier_of_query: dict[str, set[int]] = {}
        for item in items:
            tier_of_query.setdefault(item.query_id, set()).add(item.priority)
        assert all(len(tiers) == 1 for tiers in tier_of_query.values()), "a tier splits a query"
        # A short queue can come out in insertion order by chance (4 items: 1 in 24), so the
        # "not rank order" check is only meaningful, and only made, on a queue long enough.
        if len(items) >= 8:
            assert [i.pk for i in items] != sorted(i.pk for i in items), "queue follows insertion (rank) order"
            ranked = [(i.query_id, i.external_ref.get("rank")) for i in items if "rank" in (i.external_ref or {})]
            if len(ranked) >= 8:
                assert ranked != sorted(ranked), "queue follows rank order"
    # the reviewer's page lists the same order as the API, by position only
    html = client.get("/review/workspace/").content.decode()
    first_queue = [e["item"] for e in queues[0]["items"]]
    positions = [html.index(f"/review/workspace/items/{i}/") for i in first_queue]
    assert positions == sorted(positions)


# --- known-answer items (reviewapp/review/pools/known_answers.py) ---------------------------------------------------


def _normalised(text: str, opaque_ids: list[str]) -> str:
    """A page or API answer with what differs between any two items of a pool made uniform: opaque ids, tokens
    and hashes, nonces, and digits (positions, section numbers)."""
    for opaque in sorted(opaque_ids, key=len, reverse=True):
        text = text.replace(opaque, "ID")
    text = re.sub(r'nonce="[^"]*"', 'nonce="N"', text)
    text = re.sub(r"[A-Za-z0-9]{32,}", "TOKEN", text)
    return re.sub(r"\d+", "#", text)


def test_a_known_answer_item_is_indistinguishable_from_the_others_in_html_and_api(world):
    from reviewapp.review.pools.guidelines import guidelines_publish
    from reviewapp.review.pools.known_answers import known_answer_item_pks, known_answer_set

    reviewer, admin = world.users["reviewer"], world.users["admin"]
    pool = ReviewPool.objects.get(public_id=world.marker_pool_id)
    untouched = [a.item for a in Assignment.objects.filter(reviewer=reviewer, pool=pool)
                 .select_related("item").order_by("sort_key") if a.item.public_id != world.marker_item_id]
    known, plain = untouched[1], untouched[2]
    known_answer_set(item=known, expected={"section": 2, "passage": 1}, by=admin)
    guidelines_publish(pool=pool, text="Read the whole section before grading.", by=admin)
    assert known.pk in known_answer_item_pks(pool=pool)
    client = client_for(reviewer)
    opaque = [*_reviewer_item_ids(world), pool.public_id]
    content = _content_lines(world)

    for template in ("/review/workspace/items/{}/", "/api/v1/review/items/{}/", "/review/workspace/items/{}/history/",
                     "/api/v1/review/items/{}/history/"):
        known_text = body_of(client.get(template.format(known.public_id))).decode()
        plain_text = body_of(client.get(template.format(plain.public_id))).decode()
        _assert_blind(known_text, where=template.format("<known-answer item>"), content=content)
        assert re.search(r"known.answer|\bgold\b|\bexpected\b|reliab|accura", _strip(known_text, content),
                         re.I) is None
        assert _normalised(known_text, opaque) == _normalised(plain_text, opaque), template
    # The queue: the same fields for every entry, ids of one format, the reviewer's keyed-shuffle order.
    queues = client.get("/api/v1/review/queue/").json()
    entries = [e for q in queues if q["pool"] == pool.public_id for e in q["items"]]
    assert len({tuple(sorted(e)) for e in entries}) == 1
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", known.public_id) and re.fullmatch(r"[A-Za-z0-9_-]{22}", plain.public_id)
    keys = [assignment_sort_key(pool_public_id=pool.public_id, reviewer_id=reviewer.pk, item_public_id=e["item"])
            for e in entries]
    assert keys == sorted(keys)
    assert known.public_id in {e["item"] for e in entries}


def _strip(text: str, content: list[str]) -> str:
    for line in content:
        text = text.replace(line, "")
    return text
