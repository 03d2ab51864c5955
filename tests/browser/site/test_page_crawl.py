"""Every HTML page of every role, in chromium at a phone width (390x844), a desktop width (1440x900) and a desktop
at 400% zoom (1280x1024 / 4 = 320x256 CSS px).

The pages come from the role matrix (tests/trust/matrix.py): every URL pattern whose example URL a role may
GET (200) is visited as that role, so a page added to the matrix is crawled without editing this test. The
data is the trust tests' world (tests/trust/fixtures.py): real objects of every job, built once.

A page fails on: a 5xx (the page or anything it loads), a console error or an uncaught exception, a document
wider than the viewport (wide tables scroll inside their own container), text of a visible SVG plot drawn
smaller than 11 px, template syntax shown as text, and htmx polling (``hx-trigger="every ..."``) on an element
that does not declare an unfinished job (``data-job-finished="no"``): a finished job's page must not poll.
It also fails on any serious or critical axe-core violation of WCAG 2.1 A/AA (axe runs in every page at both
widths, the Swagger UI of /api/v1/docs/ included; the rest of /api/ answers JSON only, no browsable API).
AXE_REPORT=<file> writes every violation, any impact, by rule as JSON; AXE_RECORD_ONLY=1 records them without
failing.

Non-HTML answers (JSON, CSV, JSONL, YAML, downloads) are skipped by their content type.
With SCREENSHOT_DIR set, the scorecard, the statute report and the audit page are saved there at 390 px.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.trust.fixtures import ROLES, build_world
from tests.trust.matrix import MATRIX

pytestmark = pytest.mark.browser

# 1280 x 1024 at 400% zoom is a 320 x 256 CSS px viewport (WCAG 1.4.10 reflow); axe runs at the first two only.
WIDTHS = {"phone": (390, 844), "desktop": (1440, 900), "zoom 400%": (320, 256)}
AXE_WIDTHS = {"phone", "desktop"}
MID_WIDTH = (640, 844)  # pages with a narrow redraw of a plot are measured here too (in the phone pass)
MIN_SVG_TEXT_PX = 11.0
QUIET_MS, STEP_MS = 100, 20  # a page has settled when none of its requests is in flight for QUIET_MS
# Pages saved as screenshots when SCREENSHOT_DIR is set: matrix route -> file name.
SCREENSHOTS = {
    "cuad/scorecard/": "scorecard-390.png",
    "benchmarks/reports/rerank/<int:pk>/": "report-390.png",
    "cuad/audits/<int:pk>/": "audit-390.png",
}

# axe-core (an npm dev package, pinned in package-lock.json) checks every page against WCAG 2.1 A and AA.
AXE_JS = REPO_ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
AXE_FAILING = {"serious", "critical"}
# Not checked: a fragment (no doctype: a polled progress partial opened on its own) is not a document.
# AXE_REPORT=path writes every violation (any impact) by rule as JSON; AXE_RECORD_ONLY=1 does not fail on them.
_AXE_RUN = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
                                      targets: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""

# Measured in the page once it has loaded: overflow, SVG text sizes, polling elements.
_MEASURE = """(minPx) => {
  const FINISHED = ['done', 'failed', 'stopped', 'stopped by budget', 'cancelled'];
  const out = {viewport: window.innerWidth, docWidth: document.documentElement.scrollWidth,
               bodyWidth: document.body ? document.body.scrollWidth : 0, wide: [], smallText: [], polling: []};
  if (out.docWidth > out.viewport) {
    // name the widest elements that stick out, so the failure says what to fix
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.right > out.viewport + 1 && el.offsetParent !== null) {
        let scrolls = false;
        for (let p = el.parentElement; p; p = p.parentElement) {
          const ox = getComputedStyle(p).overflowX;
          if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') { scrolls = true; break; }
        }
        if (!scrolls) out.wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
          (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') +
          ' right=' + Math.round(r.right));
      }
      if (out.wide.length >= 5) break;
    }
  }
  for (const t of document.querySelectorAll('svg text')) {
    if (!t.textContent.trim()) continue;
    const r = t.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;  // not rendered (hidden plot, the table is shown)
    const m = t.getScreenCTM();
    if (!m) continue;
    const scale = Math.hypot(m.a, m.b);
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (px < minPx - 0.01) out.smallText.push(t.textContent.trim().slice(0, 40) + ' at ' + px.toFixed(1) + ' px');
  }
  for (const el of document.querySelectorAll('[hx-trigger]')) {
    if (!/\\bevery\\b/.test(el.getAttribute('hx-trigger'))) continue;
    if (el.getAttribute('data-job-finished') !== 'no')
      out.polling.push((el.id || el.tagName.toLowerCase()) + ' polls with data-job-finished=' +
                       el.getAttribute('data-job-finished'));
  }
  // A job that says it is unfinished must not show a finished status word (the declaration must be true).
  for (const el of document.querySelectorAll('[data-job-finished="no"]')) {
    const words = Array.from(el.querySelectorAll('.badge')).map(b => b.textContent.trim().toLowerCase());
    const over = words.filter(w => FINISHED.includes(w));
    if (over.length)
      out.polling.push((el.id || el.tagName.toLowerCase()) + ' declares an unfinished job but shows ' + over);
  }
  // template syntax shown as text (a multi-line {# #} comment is not a comment in Django)
  const leaked = (document.body.innerText.match(/\\{[#%{][^\\n]{0,40}/g) || []);
  out.leaked = leaked.slice(0, 3);
  return out;
}"""


def _pages_for(role: str, world) -> list[tuple[str, str]]:
    """(route, URL) of every matrix entry this role may GET with a 200."""
    out = []
    for route, entry in MATRIX.items():
        expected = entry.get.get(role)
        allowed = {expected} if isinstance(expected, int) else set(expected) if isinstance(expected, (set, frozenset)) \
            else set()
        if 200 in allowed:
            out.append((route, world.fmt(entry.url)))
    return out


def _session_cookie(user, live_server) -> list[dict]:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    value = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [{"name": settings.SESSION_COOKIE_NAME, "value": value, "url": live_server.url}]


def _axe(page, url: str, found: list[dict], spent: list[float]) -> list[str]:
    """Run axe on the loaded page; record every violation in ``found``; name the serious and critical ones."""
    if not page.evaluate("() => document.doctype !== null"):
        return []
    began = time.monotonic()
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # evaluated through the debugging protocol, so the page's CSP (no inline script) does not apply
        page.evaluate(AXE_JS.read_text())
    problems = []
    for v in page.evaluate(_AXE_RUN, AXE_TAGS):
        found.append({"url": url, **v})
        if v["impact"] in AXE_FAILING:
            problems.append(f"{url}: axe {v['impact']} {v['id']} on {v['nodes']} node(s): {'; '.join(v['targets'])}")
    spent.append(time.monotonic() - began)
    return problems


def _crawl_one(page, url: str, live_server, shot: Path | None, axe: list[dict] | None = None,
               axe_seconds: list[float] | None = None) -> list[str]:
    problems: list[str] = []
    errors: list[str] = []
    server_errors: list[str] = []
    on_console = lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None  # noqa: E731
    on_pageerror = lambda exc: errors.append(f"uncaught: {exc}")  # noqa: E731
    on_response = lambda r: server_errors.append(f"{r.status} {r.url}") if r.status >= 500 else None  # noqa: E731
    in_flight: set = set()
    on_request = lambda r: in_flight.add(r)  # noqa: E731
    on_request_done = lambda r: in_flight.discard(r)  # noqa: E731
    page.on("console", on_console)
    page.on("pageerror", on_pageerror)
    page.on("response", on_response)
    page.on("request", on_request)
    page.on("requestfinished", on_request_done)
    page.on("requestfailed", on_request_done)
    try:
        try:
            response = page.goto(live_server.url + url, wait_until="load")
        except Exception as exc:  # a download (attachment) aborts the navigation: not a page
            if "Download is starting" in str(exc) or "net::ERR_ABORTED" in str(exc):
                return []
            raise
        if response is None:
            return [f"{url}: no response"]
        if response.status >= 500:
            return [f"{url}: HTTP {response.status}"]
        if not response.headers.get("content-type", "").startswith("text/html"):
            return [f"{url}: {e}" for e in errors + server_errors]  # JSON, text: only what the browser logged
        _settle(page, in_flight)  # what the page asks for next (icon, fragments) is its own
        problems += _measure(page, url)
        if axe is not None:
            problems += _axe(page, url, axe, axe_seconds if axe_seconds is not None else [])
        compact = page.query_selector(".plot-compact")
        if compact is not None and page.viewport_size["width"] == WIDTHS["phone"][0]:
            # the plots' narrow redraw shows between 480 and 800 px: measured there too, then back
            phone = page.viewport_size
            page.set_viewport_size({"width": MID_WIDTH[0], "height": MID_WIDTH[1]})
            if not compact.is_visible():
                problems.append(f"{url}: the narrow redraw of its plot is not shown at {MID_WIDTH[0]} px")
            problems += [f"{p} (at {MID_WIDTH[0]} px)" for p in _measure(page, url)]
            page.set_viewport_size(phone)
        if shot is not None:
            page.screenshot(path=str(shot), full_page=True)
    finally:
        page.remove_listener("console", on_console)
        page.remove_listener("pageerror", on_pageerror)
        page.remove_listener("response", on_response)
        page.remove_listener("request", on_request)
        page.remove_listener("requestfinished", on_request_done)
        page.remove_listener("requestfailed", on_request_done)
    problems += [f"{url}: {e}" for e in errors + server_errors]
    return problems


def _settle(page, in_flight: set, quiet_ms: int = QUIET_MS, limit_ms: int = 15_000) -> None:
    """Wait until nothing the page asked for is in flight and nothing new was asked for QUIET_MS.

    Playwright's "networkidle" waits 500 ms of quiet after every visit, most of the crawl's time; the page's
    own requests (htmx fragments fired on load, the icon) start within a few milliseconds of the load event,
    so a short quiet window after the last one ends sees them all. A polling page (every 2 s or more) is
    quiet between its polls.
    """
    quiet = waited = 0
    while quiet < quiet_ms and waited < limit_ms:
        page.wait_for_timeout(STEP_MS)  # lets Playwright deliver the request events
        waited += STEP_MS
        quiet = 0 if in_flight else quiet + STEP_MS


def _measure(page, url: str) -> list[str]:
    problems = []
    m = page.evaluate(_MEASURE, MIN_SVG_TEXT_PX)
    if m["docWidth"] > m["viewport"]:
        problems.append(f"{url}: page is {m['docWidth']} px wide in a {m['viewport']} px viewport "
                        f"(sticking out: {', '.join(m['wide']) or 'unknown'})")
    if m["smallText"]:
        problems.append(f"{url}: SVG text under {MIN_SVG_TEXT_PX:g} px: {'; '.join(m['smallText'][:5])}")
    if m["leaked"]:
        problems.append(f"{url}: template syntax shown as text: {m['leaked']}")
    if m["polling"]:
        problems.append(f"{url}: htmx polling without an unfinished job: {'; '.join(m['polling'])}")
    return problems


def test_every_page_of_every_role_at_phone_and_desktop_width(browser, live_server, transactional_db, tmp_path):
    world = build_world(tmp_path)
    shots = os.environ.get("SCREENSHOT_DIR")
    failures: list[str] = []
    visited = 0
    axe_found: list[dict] = []
    axe_failures: list[str] = []
    axe_seconds: list[float] = []
    began = time.monotonic()
    for role in ROLES:
        pages = _pages_for(role, world)
        assert pages or role == "anonymous", f"the matrix gives {role} no page"
        for width_name, (width, height) in WIDTHS.items():
            context = browser.new_context(viewport={"width": width, "height": height})
            try:
                user = world.users.get(role)
                if user is not None:
                    context.add_cookies(_session_cookie(user, live_server))
                page = context.new_page()
                page.set_default_timeout(30_000)
                for route, url in pages:
                    shot = None
                    if shots and width == 390 and role == "stakeholder" and route in SCREENSHOTS:
                        Path(shots).mkdir(parents=True, exist_ok=True)
                        shot = Path(shots) / SCREENSHOTS[route]
                    axe = axe_found if width_name in AXE_WIDTHS else None
                    found = _crawl_one(page, url, live_server, shot, axe=axe, axe_seconds=axe_seconds)
                    failures += [f"[{role} {width_name}] {p}" for p in found if ": axe " not in p]
                    axe_failures += [f"[{role} {width_name}] {p}" for p in found if ": axe " in p]
                    for v in axe_found:
                        v.setdefault("where", f"{role} {width_name}")
                    visited += 1
            finally:
                context.close()
    _axe_report(axe_found, visited, time.monotonic() - began, axe_seconds)
    if not os.environ.get("AXE_RECORD_ONLY"):
        failures += axe_failures
    # the crawl must actually have covered the report pages of every reading role at both widths
    assert visited >= 4 * len(WIDTHS), visited
    assert not failures, f"{len(failures)} problems in {visited} page visits:\n" + "\n".join(failures)


def _axe_report(found: list[dict], visited: int, seconds: float, axe_seconds: list[float]) -> None:
    out = os.environ.get("AXE_REPORT")
    if not out:
        return
    nodes = Counter()
    visits = Counter()
    impact = {}
    for v in found:
        nodes[v["id"]] += v["nodes"]
        visits[v["id"]] += 1
        impact[v["id"]] = v["impact"]
    dirty = len({f"{v['where']} {v['url']}" for v in found})
    Path(out).write_text(json.dumps({
        "visits": dict(visits), "nodes": dict(nodes), "impact": impact, "page_visits": visited,
        "page_visits_with_violations": dirty, "seconds": round(seconds, 1),
        "axe_runs": len(axe_seconds), "axe_seconds": round(sum(axe_seconds), 1), "violations": found,
    }, indent=1))
