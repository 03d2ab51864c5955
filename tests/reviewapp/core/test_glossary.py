"""Status words: one glossary (reviewapp/core/glossary.py), shown on hover and on /glossary/ (footer link)."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.template import Context, Template

from reviewapp.core.glossary import GLOSSARY, REPORTS, REVIEW
from tests.conftest import REPO_ROOT
from tests.trust.access.test_blind_crawl import FORBIDDEN_WORDS

pytestmark = pytest.mark.django_db
TAG_USE = re.compile(r"""\{%\s*status_word\s+["']([^"']+)["']""")


def test_every_word_a_template_marks_is_in_the_glossary():
    used = {}
    for path in (REPO_ROOT / "templates").rglob("*.html"):
        for word in TAG_USE.findall(path.read_text()):
            used.setdefault(word, path.relative_to(REPO_ROOT).as_posix())
    assert used, "no template marks a status word"
    missing = {w: where for w, where in used.items() if w.lower() not in GLOSSARY}
    assert not missing, f"status words with no glossary entry (add them to reviewapp/core/glossary.py): {missing}"


def test_the_issue_words_are_explained_in_one_line_each():
    for word in ("fallback", "short", "failed", "unknown", "stale", "provisional", "confirmed", "draft", "complete"):
        assert word in GLOSSARY, word
    for word, meaning in GLOSSARY.items():
        assert word == word.lower() and meaning.strip() and "\n" not in meaning, word


def test_a_status_word_carries_its_explanation_on_hover():
    html = Template('{% load glossary %}{% status_word "fallback" "fallback search" %} | {{ s|status_word }} | '
                    '{{ odd|status_word }}').render(Context({"s": "Stale", "odd": "<b>made-up</b>"}))
    first, second, third = html.split(" | ")
    assert 'href="/glossary/#fallback"' in first and ">fallback search</a>" in first
    assert unescape(re.search(r'title="([^"]*)"', first).group(1)) == GLOSSARY["fallback"]
    assert unescape(re.search(r'title="([^"]*)"', second).group(1)) == GLOSSARY["stale"] and ">Stale</a>" in second
    assert third == "&lt;b&gt;made-up&lt;/b&gt;"  # not a glossary word: shown as it is, escaped, no title


def test_the_glossary_page_lists_the_words_each_reader_may_see(client, reviewer_client, stakeholder_client):
    for c, expected, absent in ((client, REVIEW, REPORTS), (reviewer_client, REVIEW, REPORTS),
                                (stakeholder_client, GLOSSARY, {})):
        response = c.get("/glossary/")
        assert response.status_code == 200
        html = response.content.decode()
        for word, meaning in expected.items():
            assert f'id="{word}"' in html and meaning in unescape(html), word
        for word in absent:
            assert f'id="{word}"' not in html, word
    # Reviewers follow the footer link: nothing on their glossary may name models, judges, ranks or scores.
    text = re.sub(r"<[^>]+>", " ", reviewer_client.get("/glossary/").content.decode().split("<main")[1])
    assert not FORBIDDEN_WORDS.search(unescape(text)), FORBIDDEN_WORDS.search(unescape(text))


def test_every_page_links_the_glossary_from_its_footer(reviewer_client):
    footer = reviewer_client.get("/").content.decode().split('<footer class="site-footer">')[1]
    assert 'href="/glossary/"' in footer


def test_every_job_status_a_page_shows_is_explained():
    from benchmarks.rerank.models import RerankStatus
    from grading.audits.models import Audit
    from grading.runs.models import ConsoleJob

    statuses = {*ConsoleJob.Status.values, *RerankStatus.values, *Audit.Status.values}
    assert not statuses - set(GLOSSARY), statuses - set(GLOSSARY)
