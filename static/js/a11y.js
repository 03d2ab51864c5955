// Two things every page needs after htmx redraws part of it (WCAG 2.4.3 focus order, 4.1.3 status messages):
// 1. Focus goes back to the control that was used, or to its twin in the new content, never to the body.
// 2. A polled progress fragment (data-live-summary) is replaced every second or two, so it cannot speak for
//    itself: a live region outside it (data-live-for="<its id>") says its summary when the summary changes
//    (the templates keep it to the status word, so a running job is not read out every second).
(function () {
  "use strict";
  let wanted = null;

  function selectorOf(el) {
    if (!el || el === document.body || !el.getAttribute) return null;
    if (el.id) return "#" + CSS.escape(el.id);
    const testid = el.getAttribute("data-testid");
    if (testid) return '[data-testid="' + CSS.escape(testid) + '"]';
    if (el.name) {
      return '[name="' + CSS.escape(el.name) + '"]' + (el.type === "radio" || el.type === "checkbox"
        ? '[value="' + CSS.escape(el.value) + '"]' : "");
    }
    return null;
  }

  document.addEventListener("htmx:beforeRequest", () => {
    const el = document.activeElement;
    wanted = el && el !== document.body ? { el: el, selector: selectorOf(el) } : null;
  });

  document.addEventListener("htmx:afterSettle", (event) => {
    const was = wanted;
    wanted = null;
    const now = document.activeElement;
    if (!was || (now && now !== document.body && now.isConnected)) return; // focus stayed (or a page script placed it)
    let next = was.selector ? document.querySelector(was.selector) : null;
    if (!next || next.disabled) {
      const target = event.detail && event.detail.target;
      next = target && target.isConnected ? target : null;
      if (next && !next.hasAttribute("tabindex")) next.setAttribute("tabindex", "-1");
    }
    if (next) next.focus();
  });

  // the summary of each polled fragment, as last said
  const said = {};
  function speak(fragment) {
    if (!fragment || !fragment.id) return;
    const live = document.querySelector('[data-live-for="' + CSS.escape(fragment.id) + '"]');
    const text = fragment.getAttribute("data-live-summary");
    if (!live || !text || said[fragment.id] === text) return;
    const first = !(fragment.id in said);
    said[fragment.id] = text;
    if (!first) live.textContent = text; // not at load: the page itself says it then
  }
  document.addEventListener("htmx:load", (event) => speak(event.target.closest && event.target.closest("[data-live-summary]")));
  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("[data-live-summary]").forEach(speak);
  });
})();

// A box that scrolls sideways (a wide table on a phone) must be reachable from the keyboard to be scrolled
// (WCAG 2.1.1): one that holds no focusable control gets a tab stop and a name (its caption or the heading
// above it). Tables keep their role; other boxes become named regions.
(function () {
  "use strict";
  const FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";

  function nameOf(box) {
    const caption = box.querySelector("caption");
    if (caption && caption.textContent.trim()) return caption.textContent.trim();
    for (let el = box; el && el !== document.body; el = el.parentElement) {
      for (let prev = el.previousElementSibling; prev; prev = prev.previousElementSibling) {
        if (/^H[1-6]$/.test(prev.tagName)) return prev.textContent.trim();
        const inner = prev.querySelector && prev.querySelector("h1, h2, h3, h4, h5, h6");
        if (inner) return inner.textContent.trim();
      }
    }
    return "Table";
  }

  function mark() {
    document.querySelectorAll("main *").forEach((box) => {
      if (box.hasAttribute("data-scroll-tabstop") || box.scrollWidth <= box.clientWidth + 1 &&
          box.scrollHeight <= box.clientHeight + 1) return;
      const style = getComputedStyle(box);
      if (!/(auto|scroll)/.test(style.overflowX + style.overflowY) || box.hasAttribute("tabindex")) return;
      if (box.querySelector(FOCUSABLE)) return;
      box.setAttribute("tabindex", "0");
      box.setAttribute("data-scroll-tabstop", "");
      if (!box.hasAttribute("aria-label") && !box.hasAttribute("aria-labelledby")) {
        box.setAttribute("aria-label", nameOf(box) + " (scrolls)");
      }
      if (box.tagName !== "TABLE" && !box.hasAttribute("role")) box.setAttribute("role", "region");
    });
  }
  document.addEventListener("DOMContentLoaded", mark);
  document.addEventListener("htmx:load", mark);
  let pending = 0;
  window.addEventListener("resize", () => { clearTimeout(pending); pending = setTimeout(mark, 150); });
})();
