"""A planted provider key never appears in a dump of the whole database, receipts, exports, logs, or any page or
API answer an admin can crawl. (tests/reviewapp/providers/test_secrets.py covers the ledger alone; this one is
global.)"""

from __future__ import annotations

import io
import logging
import re
from collections import deque
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
from django.core.management import call_command

from benchmarks.rerank import services as rerank
from benchmarks.retrieval.models import RetrievalRun
from reviewapp.providers import selectors as provider_selectors
from reviewapp.providers.loopback import LoopbackServer, Reply, default_responder
from reviewapp.providers.models import Ledger
from tests.trust.fixtures import PLANTED_KEYS, body_of, client_for
from tests.trust.matrix import MATRIX, admin_model_urls

pytestmark = pytest.mark.django_db

ENV_NAMES = {"openrouter": "OPENROUTER_API_KEY", "openai_compatible": "OPENAI_COMPATIBLE_API_KEY",
             "anthropic": "ANTHROPIC_API_KEY"}
LINK = re.compile(r"""(?<![\w-])(?:href|hx-get)\s*=\s*["']([^"']+)["']""", re.I)
# Pages that only do something on POST or sign the admin out; everything else an admin can GET is read.
SKIP = re.compile(r"^/(accounts/logout/|admin/logout/)")


def _echoing(path, headers, body):
    """A hostile provider that echoes the credentials it received, in an error and in a 'successful' answer."""
    echoed = (headers.get("authorization", "") + " " + headers.get("x-api-key", "")).strip()
    if b"echo-error" in body:
        return Reply(status=401, body=f"bad key {echoed}".encode())
    return default_responder(path, headers, body)


def _leaks(text: str) -> list[str]:
    found = []
    for provider, key in PLANTED_KEYS.items():
        for fragment in (key, key[10:42]):
            if fragment in text:
                found.append(f"{provider} key ({fragment[:14]}...)")
    return found


def _admin_crawl(client, starts: list[str], limit: int = 700) -> dict[str, str]:
    seen: dict[str, str] = {}
    todo = deque(starts)
    while todo and len(seen) < limit:
        url = todo.popleft()
        if url in seen or SKIP.match(url):
            continue
        response = client.get(url)
        text = body_of(response).decode("utf-8", errors="replace")
        seen[url] = text
        assert response.status_code < 500, f"{url} answered {response.status_code}"
        if "html" in response.get("Content-Type", ""):
            for raw in LINK.findall(text):
                target = urldefrag(urljoin(url, raw.replace("&amp;", "&")))[0]
                parts = urlsplit(target)
                if parts.netloc in ("", "testserver") and not parts.path.startswith("/static/"):
                    path = parts.path + (f"?{parts.query}" if parts.query else "")
                    if path not in seen:
                        todo.append(path)
    return seen


def test_a_planted_provider_key_appears_nowhere(world, settings, monkeypatch, caplog):
    for provider, name in ENV_NAMES.items():
        monkeypatch.setenv(name, PLANTED_KEYS[provider])
    settings.PROVIDER_KEYS = dict(PLANTED_KEYS)
    caplog.set_level(logging.DEBUG)  # the root logger, hence every logger, at DEBUG
    for name in ("httpx", "httpcore", "django", "django.request", "django.db.backends", "celery", "benchmarks",
                 "grading", "reviewapp"):
        logging.getLogger(name).setLevel(logging.DEBUG)

    retrieval = RetrievalRun.objects.get(pk=world.retrieval_pk)
    with LoopbackServer(_echoing) as server:
        settings.OPENAI_COMPATIBLE_KEY_ORIGINS = [server.url]  # the key goes to its configured origins only
        # A rerank run through each LLM provider with the planted keys (the key is really sent).
        for provider, base in (("openai_compatible", server.url + "/v1"), ("anthropic", server.url)):
            run = rerank.rerank_run_create(retrieval_run=retrieval, provider=provider, model_id="loop/m",
                                           base_url=base, max_requests=6, enqueue=False)
            rerank.rerank_run_execute(run_id=run.pk)
        # Requests whose answer echoes the key back (an error body) go through the ledger too.
        from reviewapp.providers import services
        from reviewapp.providers.clients import client_for_ledger
        from reviewapp.providers.types import GradeSpec

        for provider, base in (("openai_compatible", server.url + "/v1"), ("anthropic", server.url)):
            ledger = services.ledger_create(purpose="trust secrets", provider=provider, model_id="m", base_url=base,
                                            max_requests=4, max_input_tokens=100_000)
            client = client_for_ledger(ledger)
            services.ledger_execute(ledger=ledger, client=client, requests=[
                client.prepare_grades(GradeSpec(system="s", user="echo-error", query="q", items=("a",)))])
        sent = server.requests
    assert any(PLANTED_KEYS["openai_compatible"] in r["headers"].get("authorization", "") for r in sent)
    assert any(PLANTED_KEYS["anthropic"] == r["headers"].get("x-api-key") for r in sent)

    where: dict[str, str] = {}
    dump = io.StringIO()
    call_command("dumpdata", stdout=dump)  # every app, every table
    where["dumpdata (all apps)"] = dump.getvalue()
    where["receipts JSONL"] = "".join("".join(provider_selectors.receipts_jsonl(ledger=ledger))
                                      for ledger in Ledger.objects.all())

    admin = client_for(world.users["admin"])
    starts = [world.fmt(e.url) for e in MATRIX.values() if e.get["admin"] == 200]
    starts += [url for _, url, _ in admin_model_urls()]
    for ledger in Ledger.objects.all():
        starts += [f"/providers/ledgers/{ledger.pk}/receipts.jsonl", f"/api/v1/providers/ledgers/{ledger.pk}/",
                   f"/admin/providers/ledger/{ledger.pk}/change/"]
    for run_pk in rerank.RerankRun.objects.values_list("pk", flat=True):
        starts += [f"/benchmarks/rerank/{run_pk}/", f"/benchmarks/rerank/{run_pk}/receipts.jsonl",
                   f"/api/v1/benchmarks/rerank-runs/{run_pk}/"]
    for fmt in ("json", "csv"):
        starts += [f"/cuad/runs/{world.cuad_run_pk}/?format={fmt}", f"/cuad/audits/{world.audit_pk}/?format={fmt}",
                   f"/cuad/scorecard/?format={fmt}", f"/cuad/runs/jobs/{world.cuad_job_pk}/?format={fmt}"]
    pages = _admin_crawl(admin, starts)
    assert len(pages) > 150  # the crawl really read the site
    where["pages, exports and API answers crawled as admin"] = "\n".join(pages.values())
    where["logs (all loggers at DEBUG)"] = caplog.text

    problems = [f"{leak} in {place}" for place, text in where.items() for leak in _leaks(text)]
    assert not problems, problems
