// The reviewer's item page: keyboard grading, autosave, never leaving with an unsaved change, undo, the "?" list.
// The page works without it: every action is a plain radio button, submit button or link, and a draft is saved
// by "Save draft". Autosave posts to the reviewer's judgment API, which saves through the same service (and the
// same append-only, hash-bound revisions) as the buttons.
(function () {
  "use strict";
  const AUTOSAVE_DELAY_MS = 1200;
  let active = 0;
  let timer = null;
  let inflight = null; // the running autosave, a Promise<boolean>
  let submitting = false; // an htmx post of this form carries the current values
  let leaving = false;

  function form() {
    return document.getElementById("judgment");
  }

  function groups() {
    return Array.from(document.querySelectorAll("#judgment .grade-group"));
  }

  function locked() {
    const f = form();
    return !f || f.dataset.status === "complete";
  }

  function current() {
    const grades = {};
    groups().forEach((group) => {
      const chosen = group.querySelector('input[type="radio"]:checked');
      grades[group.dataset.gradeType] = chosen ? chosen.value : "";
    });
    const note = form() ? form().querySelector('textarea[name="note"]') : null;
    return { grades: grades, note: note ? note.value : "" };
  }

  function saved() {
    const grades = {};
    groups().forEach((group) => { grades[group.dataset.gradeType] = group.dataset.saved || ""; });
    const note = form() ? form().querySelector('textarea[name="note"]') : null;
    return { grades: grades, note: note ? (note.dataset.saved || "") : "" };
  }

  function same(a, b) {
    // The server strips the note before saving, so white space at its ends is not a change.
    if (a.note.trim() !== b.note.trim()) return false;
    return Object.keys(a.grades).every((key) => a.grades[key] === b.grades[key]);
  }

  function dirty() {
    return !locked() && !same(current(), saved());
  }

  function status(text, kind) {
    const line = document.querySelector('#judgment [data-testid="status"]');
    if (!line) return;
    line.textContent = text;
    line.classList.toggle("dirty", kind === "dirty");
    line.classList.toggle("failed", kind === "failed");
  }

  function refresh() {
    const line = document.querySelector('#judgment [data-testid="status"]');
    if (!line) return;
    if (dirty()) status("Unsaved changes", "dirty");
    else status(line.dataset.clean, "");
  }

  function paint() {
    const all = groups();
    if (active >= all.length) active = Math.max(0, all.length - 1);
    all.forEach((group, i) => group.classList.toggle("active", i === active));
  }

  function changed() {
    refresh();
    if (timer) clearTimeout(timer);
    timer = dirty() ? setTimeout(autosave, AUTOSAVE_DELAY_MS) : null;
  }

  function hhmm(iso) {
    // The server's own clock reading, as the page prints it ("2026-12-01T05:30:12Z" -> "05:30").
    return typeof iso === "string" && iso.length >= 16 ? iso.slice(11, 16) : "";
  }

  // Save the current state as a draft; resolves true when nothing is left unsaved.
  function autosave() {
    if (timer) { clearTimeout(timer); timer = null; }
    if (inflight) return inflight.then(() => autosave());
    const f = form();
    if (!f || !dirty() || submitting) return Promise.resolve(true);
    const sent = current();
    const body = { grades: {}, complete: false, note: sent.note };
    Object.keys(sent.grades).forEach((key) => { body.grades[key] = sent.grades[key] === "" ? null : sent.grades[key]; });
    ["query_hash", "source_hash", "passage_hash"].forEach((name) => {
      const input = f.querySelector('input[name="' + name + '"]');
      body[name] = input ? input.value : "";
    });
    const token = f.querySelector('input[name="csrfmiddlewaretoken"]');
    status("Saving…", "dirty");
    inflight = fetch(f.dataset.autosaveUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": token ? token.value : "" },
      body: JSON.stringify(body),
    }).then((response) => response.json().catch(() => ({})).then((data) => ({ response: response, data: data })))
      .then(({ response, data }) => {
        if (response.status === 409) {
          // The texts changed since the page was loaded: nothing was saved; show the new texts.
          leaving = true;
          window.location.reload();
          return false;
        }
        if (!response.ok || !data.revision) {
          status("Not saved: " + (data.detail || ("the server answered " + response.status)), "failed");
          return false;
        }
        if (form() !== f) return true; // the form was replaced meanwhile (an explicit save answered first)
        groups().forEach((group) => { group.dataset.saved = sent.grades[group.dataset.gradeType] || ""; });
        const note = f.querySelector('textarea[name="note"]');
        if (note) note.dataset.saved = sent.note.trim();
        f.dataset.revision = String(data.revision.number);
        f.dataset.status = data.revision.status;
        const line = f.querySelector('[data-testid="status"]');
        if (line) line.dataset.clean = "Saved at " + hhmm(data.revision.created_at) + ", revision " +
          data.revision.number + " (draft)";
        refresh();
        if (dirty()) changed(); // typed on while the save was in flight
        return !dirty();
      })
      .catch(() => { status("Not saved: the server could not be reached", "failed"); return false; })
      .finally(() => { inflight = null; });
    return inflight;
  }

  function go(url) {
    leaving = true;
    window.location.href = url;
  }

  // Leave for ``url``: save first; if the save fails, ask.
  function leave(url) {
    if (!dirty() && !inflight) { go(url); return; }
    autosave().then((ok) => {
      if (ok || window.confirm("Your last change could not be saved. Leave this item anyway and lose it?")) go(url);
    });
  }

  function submit(action) {
    const f = form();
    if (!f) return;
    const button = f.querySelector('button[data-action="' + action + '"]');
    if (!button || button.disabled) return;
    if (timer) { clearTimeout(timer); timer = null; }
    // A click (not requestSubmit) so that htmx records which button was used and sends its action.
    if (inflight) inflight.then(() => button.click());
    else button.click();
  }

  function undo() {
    if (dirty()) {
      // The last change is not saved yet: undoing it is going back to what is saved (no new revision needed).
      const before = saved();
      groups().forEach((group) => {
        group.querySelectorAll('input[type="radio"]').forEach((input) => {
          input.checked = input.value === before.grades[group.dataset.gradeType];
        });
      });
      const note = form().querySelector('textarea[name="note"]');
      if (note) note.value = before.note;
      if (timer) { clearTimeout(timer); timer = null; }
      refresh();
      return;
    }
    submit("undo");
  }

  function help(show) {
    const box = document.getElementById("keys-help");
    if (!box) return;
    box.hidden = show === undefined ? !box.hidden : !show;
    if (!box.hidden) {
      const close = box.querySelector("[data-help-close]");
      if (close) close.focus();
    }
  }

  function helpOpen() {
    const box = document.getElementById("keys-help");
    return !!box && !box.hidden;
  }

  function linkTo(which) {
    const link = document.querySelector('a[data-nav="' + which + '"]');
    return link ? link.href : null;
  }

  document.addEventListener("click", (event) => {
    const target = event.target;
    if (!target.closest) return;
    if (target.closest("[data-help-open]")) { help(true); return; }
    if (target.closest("[data-help-close]") || target.id === "keys-help") { help(false); return; }
    const group = target.closest("#judgment .grade-group");
    if (group) { active = groups().indexOf(group); paint(); }
    const link = target.closest("a[href]");
    if (link && !link.target && link.origin === window.location.origin && !link.hasAttribute("data-jump") &&
        !event.defaultPrevented && event.button === 0 && !event.ctrlKey && !event.metaKey && !event.shiftKey &&
        (dirty() || inflight)) {
      event.preventDefault();
      leave(link.href);
    }
  });

  document.addEventListener("change", (event) => {
    if (event.target.closest && event.target.closest("#judgment")) changed();
  });
  document.addEventListener("input", (event) => {
    if (event.target.name === "note" && event.target.closest("#judgment")) changed();
  });

  document.addEventListener("submit", (event) => {
    // The "skip for later" form leaves the page: save an unsaved change first.
    const f = event.target;
    if (f.id === "judgment") return;
    if (leaving || !dirty()) { leaving = true; return; }
    event.preventDefault();
    const submitter = event.submitter;
    autosave().then((ok) => {
      if (ok || window.confirm("Your last change could not be saved. Leave this item anyway and lose it?")) {
        leaving = true;
        f.requestSubmit(submitter);
      }
    });
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (event.key === "Escape") {
      if (helpOpen()) { help(false); event.preventDefault(); return; }
      if (target && target.tagName === "TEXTAREA") target.blur();
      return;
    }
    if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type !== "radio"))) return;
    if (event.key === "?") { help(); event.preventDefault(); return; }
    if (helpOpen()) return;
    const key = event.key.toLowerCase();
    const all = groups();
    const group = all[active];
    if (group && !group.disabled) {
      const option = group.querySelector('input[type="radio"][data-key="' + CSS.escape(key) + '"]');
      if (option) {
        option.checked = true;
        if (active < all.length - 1) active += 1;
        paint();
        changed();
        event.preventDefault();
        return;
      }
    }
    let url = null;
    switch (event.key) {
      case "ArrowDown": active = Math.min(all.length - 1, active + 1); paint(); event.preventDefault(); return;
      case "ArrowUp": active = Math.max(0, active - 1); paint(); event.preventDefault(); return;
      case "ArrowRight": case "j": url = linkTo("next"); break;
      case "ArrowLeft": case "k": url = linkTo("previous"); break;
      case "q": url = linkTo("queue"); break;
      case "d": submit("save"); return;
      case "c": submit("complete"); return;
      case "r": submit("reopen"); return;
      case "z": undo(); event.preventDefault(); return;
      case "s": {
        const skip = document.querySelector('.skip-form button[data-action="skip"]');
        if (skip) skip.click();
        return;
      }
      default: return;
    }
    if (url) { event.preventDefault(); leave(url); }
  });

  window.addEventListener("beforeunload", (event) => {
    if (leaving || submitting || !dirty()) return;
    event.preventDefault();
    event.returnValue = "";
  });

  document.addEventListener("htmx:beforeRequest", (event) => {
    if (event.target === form()) {
      if (timer) { clearTimeout(timer); timer = null; }
      submitting = true;
    }
  });
  ["htmx:responseError", "htmx:sendError"].forEach((name) => {
    document.addEventListener(name, () => { submitting = false; refresh(); });
  });
  document.addEventListener("htmx:afterSwap", () => {
    submitting = false;
    active = 0;
    paint();
    refresh();
  });

  function ready() {
    paint();
    refresh();
  }
  document.addEventListener("DOMContentLoaded", ready);
  if (document.readyState !== "loading") ready();
})();
