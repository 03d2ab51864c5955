"""A statute review item shows where its section comes from (jurisdiction, code, chapter, section, heading, the
official URL and the date the text was retrieved), and highlights the passage in the section, without naming the
run the pool came from."""

from __future__ import annotations

import html

import pytest

from benchmarks.corpus.models import Provision
from benchmarks.labels.kinds import statute_source_context
from benchmarks.labels.pools import review_pool_declare
from reviewapp.review.pools.refs import pool_model
from tests.benchmarks.labels.fixtures import rerank_world
from tests.reviewapp.review.conftest import assert_blind

pytestmark = pytest.mark.django_db


def test_a_statute_item_page_carries_its_citation_context_and_the_highlighted_passage(reviewer_user,
                                                                                      reviewer_client):
    run = rerank_world(seed=5, queries=3)
    pool = review_pool_declare(rerank_run=run, reviewers=[reviewer_user], reviewers_per_item=1).pool
    item = pool_model(pool).items.order_by("id").first()
    provision = Provision.objects.select_related("snapshot").get(pk=item.external_ref["provision"])
    page = reviewer_client.get(f"/review/workspace/items/{item.public_id}/").content.decode()

    for text in ("Nevada", "Nevada Revised Statutes", f"Chapter {provision.chapter}: {provision.chapter_title}",
                 provision.citation, provision.heading, provision.snapshot.official_url,
                 f"text as of {provision.snapshot.retrieved_at:%-d %B %Y}"):
        assert html.escape(text) in page, text
    mark = page.split('data-testid="passage-mark"')[1].split(">", 1)[1].split("</mark>")[0]
    assert html.unescape(mark) == item.passage_text  # the whole section text is short: no cut mark
    assert f">{html.escape(item.passage_text)}</div>" not in page  # no separate passage panel
    assert_blind(page, where="statute item page")
    assert f"#{run.pk}" not in page and f"run {run.pk}" not in page


def test_an_item_without_a_provision_reference_has_no_citation_header():
    assert statute_source_context({}) is None
    assert statute_source_context({"provision": 987654321}) is None
