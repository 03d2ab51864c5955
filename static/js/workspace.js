// The reviewer's workspace, for every item kind: autosave, never leaving with an unsaved change, submit, undo,
// the shortcut keys (and the reviewer's shortcut setting), the "?" list, and what a screen reader is told.
// An item kind plugs in with ReviewWorkspace.register({...}) (workspace-passage.js, label-spans.js): it adds what
// its answer holds beside the grades and the note (the spans of a clause), and keys of its own.
//
// The page works without it: every action is a plain radio button, submit button or link, and a draft is saved by
// "Save draft". Autosave posts to the reviewer's judgment API, which saves through the same service (and the same
// append-only, hash-bound revisions) as the buttons.
(function () {
  "use strict";
  const AUTOSAVE_DELAY_MS = 1000;
  const LEAVE_ANYWAY = "Your last change could not be saved. Leave this item anyway and lose it?";
  // The kind's hooks; every one is optional.
  //   extra() / extraSaved(): what the answer holds besides grades and note (compared as JSON)
  //   body(extra): fields the autosave sends for it; accept(data, sent): the server stored it (data.revision)
  //   restore(savedExtra): undo an unsaved change of it; graded(group, option): a grade was chosen by key or
  //   click, returns what to announce ("" to stay quiet, null for the default); first(event): keys the kind's
  //   own controls take before any shortcut (true when taken); key(key, event): its shortcut keys;
  //   click(event): its buttons; ready(): set itself up; arrowsNavigate: the arrow keys move between items
  let kind = {};
  let active = 0;
  let timer = null;
  let inflight = null; // the running autosave, a Promise<boolean>
  let submitting = false; // an htmx post of this form carries the current values
  let leaving = false;
  let focusBefore = null; // what had focus when the form was posted, to give it back after the redraw
  let helpReturn = null; // what had focus when the "?" dialog opened

  // ------------------------------------------------------------------ what a screen reader is told
  // The polite region for what a change did, the assertive one for errors. Both live outside the swapped form,
  // so the node that speaks is never the node that was just replaced.
  function announce(text, level) {
    const region = document.getElementById(level === "error" ? "announce-error" : "announce");
    if (!region || !text) return;
    region.textContent = "";
    // emptied first and filled a moment later, so that the same message twice is heard twice
    window.setTimeout(() => { region.textContent = text; }, 30);
  }

  function announceFrom(root) {
    if (!root) return;
    root.querySelectorAll("[data-announce]").forEach((node) => announce(node.textContent.trim(), node.dataset.announce));
  }

  // ------------------------------------------------------------------ the answer: grades, note, the kind's part
  const form = () => document.getElementById("judgment");
  const groups = () => Array.from(document.querySelectorAll("#judgment .grade-group"));
  const noteField = () => (form() ? form().querySelector('textarea[name="note"]') : null);
  const locked = () => !form() || form().dataset.status === "complete";

  // The radio to focus in a group: its chosen one, else its first (the one Tab reaches).
  function radioOf(group) {
    if (!group) return null;
    return group.querySelector('input[type="radio"]:checked') || group.querySelector('input[type="radio"]');
  }

  function current() {
    const grades = {};
    groups().forEach((group) => {
      const chosen = group.querySelector('input[type="radio"]:checked');
      grades[group.dataset.gradeType] = chosen ? chosen.value : "";
    });
    const note = noteField();
    return { grades: grades, note: note ? note.value : "", extra: kind.extra ? kind.extra() : null };
  }

  function saved() {
    const grades = {};
    groups().forEach((group) => { grades[group.dataset.gradeType] = group.dataset.saved || ""; });
    const note = noteField();
    return { grades: grades, note: note ? (note.dataset.saved || "") : "", extra: kind.extraSaved ? kind.extraSaved() : null };
  }

  function same(a, b) {
    // The server strips the note before saving, so white space at its ends is not a change.
    if (a.note.trim() !== b.note.trim()) return false;
    if (JSON.stringify(a.extra) !== JSON.stringify(b.extra)) return false;
    return Object.keys(a.grades).every((key) => a.grades[key] === b.grades[key]);
  }

  function dirty() {
    return !locked() && !same(current(), saved());
  }

  // ------------------------------------------------------------------ the status line and autosave
  function status(text, level) {
    const line = document.querySelector('#judgment [data-testid="status"]');
    if (!line) return;
    line.textContent = text;
    line.classList.toggle("dirty", level === "dirty");
    line.classList.toggle("failed", level === "failed");
    if (level === "failed") announce(text, "error");
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
    const body = Object.assign({ grades: {}, complete: false, note: sent.note }, kind.body ? kind.body(sent.extra) : {});
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
        const note = noteField();
        if (note) note.dataset.saved = sent.note.trim();
        if (kind.accept) kind.accept(data, sent.extra);
        f.dataset.revision = String(data.revision.number);
        f.dataset.status = data.revision.status;
        const line = f.querySelector('[data-testid="status"]');
        if (line) line.dataset.clean = "Saved at " + hhmm(data.revision.created_at) + ", revision " +
          data.revision.number + " (draft)";
        // Undo is there from now on (the first save too), and the save is said.
        const undoButton = f.querySelector('button[data-action="undo"]');
        if (undoButton) undoButton.hidden = false;
        announce("Draft saved (revision " + data.revision.number + ").", "status");
        refresh();
        if (dirty()) changed(); // typed on while the save was in flight
        return !dirty();
      })
      .catch(() => { status("Not saved: the server could not be reached", "failed"); return false; })
      .finally(() => { inflight = null; });
    return inflight;
  }

  // ------------------------------------------------------------------ leaving, submitting, undo
  function go(url) {
    leaving = true;
    window.location.href = url;
  }

  // Leave for ``url``: save first; if the save fails, ask.
  function leave(url) {
    if (!dirty() && !inflight) { go(url); return; }
    autosave().then((ok) => { if (ok || window.confirm(LEAVE_ANYWAY)) go(url); });
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
      const note = noteField();
      if (note) note.value = before.note;
      if (kind.restore) kind.restore(before.extra);
      if (timer) { clearTimeout(timer); timer = null; }
      refresh();
      announce("Undone: back to what was saved" + (form().dataset.revision !== "0" ? " (revision " +
               form().dataset.revision + ")" : "") + ".", "status");
      return;
    }
    submit("undo");
  }

  // ------------------------------------------------------------------ the "?" list
  // A real modal <dialog>: showModal() keeps Tab inside it and makes the page behind it inert; Escape closes it
  // (the browser's own "cancel"), and focus goes back to where it was.
  function help(show) {
    const box = document.getElementById("keys-help");
    if (!box || typeof box.showModal !== "function") return;
    const open = show === undefined ? !box.open : show;
    if (open && !box.open) {
      helpReturn = document.activeElement;
      box.showModal();
      const close = box.querySelector("[data-help-close]");
      if (close) close.focus();
    } else if (!open && box.open) {
      box.close();
    }
  }

  function helpOpen() {
    const box = document.getElementById("keys-help");
    return !!box && box.open;
  }

  function helpClosed() {
    const back = helpReturn;
    helpReturn = null;
    if (back && back.isConnected && back !== document.body) back.focus();
    else {
      const opener = document.querySelector("[data-help-open]");
      if (opener) opener.focus();
    }
  }

  function linkTo(which) {
    const link = document.querySelector('a[data-nav="' + which + '"]');
    return link ? link.href : null;
  }

  // ------------------------------------------------------------------ grades
  // What choosing a grade says: the kind's words, else "Section grade: 3 highly relevant".
  function gradeWords(group, option) {
    const legend = group.querySelector("legend");
    const label = option.closest("label");
    const meaning = label ? label.textContent.replace(option.dataset.key, "").trim() : option.value;
    return (legend ? legend.textContent.trim() + ": " : "") + option.value +
      (meaning && meaning !== option.value ? " " + meaning : "");
  }

  function graded(group, option) {
    const said = kind.graded ? kind.graded(group, option) : null;
    announce(said === null || said === undefined ? gradeWords(group, option) : said, "status");
  }

  // ------------------------------------------------------------------ events
  document.addEventListener("click", (event) => {
    const target = event.target;
    if (!target.closest) return;
    if (target.closest("[data-help-open]")) { help(true); return; }
    if (target.closest("[data-help-close]") || target.id === "keys-help") { help(false); return; }  // the backdrop
    if (kind.click && kind.click(event)) return;
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
    if (!event.target.closest || !event.target.closest("#judgment")) return;
    const group = event.target.closest(".grade-group");
    if (group) {
      active = groups().indexOf(group);
      paint();
      // A click or an arrow key on a choice (a grade key sends no change event: it announces itself)
      if (event.target.type === "radio") graded(group, event.target);
    }
    changed();
  });
  document.addEventListener("focusin", (event) => {
    const group = event.target.closest && event.target.closest("#judgment .grade-group");
    if (group) { active = groups().indexOf(group); paint(); }
  });
  document.addEventListener("input", (event) => {
    if (event.target.name === "note" && event.target.closest("#judgment")) changed();
  });

  document.addEventListener("submit", (event) => {
    const f = event.target;
    if (f.id === "judgment") { leaving = !f.hasAttribute("hx-post"); return; }  // a plain post leaves the page
    // Another form (skip for later) leaves the page: save an unsaved change first.
    if (leaving || !dirty()) { leaving = true; return; }
    event.preventDefault();
    const submitter = event.submitter;
    autosave().then((ok) => {
      if (ok || window.confirm(LEAVE_ANYWAY)) {
        leaving = true;
        f.requestSubmit(submitter);
      }
    });
  });

  // The reviewer's own setting (account page, WCAG 2.1.4): "single" keys, "modifier" (Alt + key) or "off".
  function shortcutMode() {
    const holder = document.querySelector("[data-shortcuts]");
    return holder ? holder.dataset.shortcuts : "single";
  }

  // The key a shortcut means (case kept: "N" and "X" are keys of their own). With Alt held, event.key is a
  // composed character on some layouts (Alt+j is "∆" on a Mac), so in the "modifier" setting the physical key
  // names it.
  function shortcutKey(event, mode) {
    if (mode === "modifier") {
      const m = /^(?:Digit|Numpad)(\d)$|^Key([A-Z])$/.exec(event.code || "");
      if (m) return m[1] || (event.shiftKey ? m[2] : m[2].toLowerCase());
      if (event.code === "Slash" && event.shiftKey) return "?";
    }
    return event.key;
  }

  function typing(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
    return target.tagName === "INPUT" && target.type !== "radio" && target.type !== "checkbox";
  }

  // A grade key acts on the group that has focus; with focus elsewhere, on the group marked active; focus (and
  // the outline) then moves on to the next group.
  function gradeKey(key, target) {
    const all = groups();
    const onRadio = !!target && target.tagName === "INPUT" && target.type === "radio";
    const focused = onRadio ? target.closest("#judgment .grade-group") : null;
    if (focused) active = all.indexOf(focused);
    const group = all[active];
    if (!group || group.disabled || key.length !== 1) return false;
    const option = group.querySelector('input[type="radio"][data-key="' + CSS.escape(key) + '"]');
    if (!option) return false;
    option.checked = true;
    graded(group, option);
    if (active < all.length - 1) active += 1;
    paint();
    changed();
    if (focused) {
      const next = radioOf(all[active]);
      (next && active !== all.indexOf(focused) ? next : option).focus();
    }
    return true;
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.key === "Escape" && helpOpen()) return; // the dialog closes itself (its "cancel"), and gives focus back
    if (helpOpen()) {
      if (event.key === "?") { help(false); event.preventDefault(); }
      return; // nothing else acts behind the dialog
    }
    if (event.key === "Escape" && target && target.tagName === "TEXTAREA" && target.closest("#judgment")) {
      // leaving the note goes to the grades (not to the body, where a screen reader loses its place)
      const back = radioOf(groups()[active]);
      if (back) { back.focus(); event.preventDefault(); }
      return;
    }
    // The kind's own controls first (a text cursor, a search box): their keys are theirs in every setting.
    if (kind.first && kind.first(event)) { event.preventDefault(); return; }
    const mode = shortcutMode();
    if (mode === "off" || event.ctrlKey || event.metaKey) return;
    if (mode === "single" ? event.altKey : !event.altKey) return;
    if (typing(target)) return;
    const key = shortcutKey(event, mode);
    if (key === "?") { help(true); event.preventDefault(); return; }
    if (kind.key && kind.key(key, event)) { event.preventDefault(); return; }
    const onRadio = !!target && target.tagName === "INPUT" && target.type === "radio";
    // On a focused radio the arrow keys are the radio group's own (move the choice); with Alt they are the
    // browser's (back, forward).
    if (key.startsWith("Arrow") && (onRadio || mode === "modifier")) return;
    const lower = key.length === 1 ? key.toLowerCase() : key;
    if (!locked() && gradeKey(lower, target)) { event.preventDefault(); return; }
    const all = groups();
    let url = null;
    switch (kind.arrowsNavigate || !lower.startsWith("Arrow") ? lower : "") {
      case "ArrowDown": active = Math.min(all.length - 1, active + 1); paint(); event.preventDefault(); return;
      case "ArrowUp": active = Math.max(0, active - 1); paint(); event.preventDefault(); return;
      case "ArrowRight": case "j": url = linkTo("next"); break;
      case "ArrowLeft": case "k": url = linkTo("previous"); break;
      case "q": url = linkTo("queue"); break;
      case "d": submit("save"); event.preventDefault(); return;
      case "c": submit("complete"); event.preventDefault(); return;
      case "r": submit("reopen"); event.preventDefault(); return;
      case "z": undo(); event.preventDefault(); return;
      case "s": {
        const skip = document.querySelector('.skip-form button[data-action="skip"]');
        if (skip) { skip.click(); event.preventDefault(); }
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

  // ------------------------------------------------------------------ an htmx form (the passage workspace)
  document.addEventListener("htmx:beforeRequest", (event) => {
    if (event.target === form()) {
      if (timer) { clearTimeout(timer); timer = null; }
      submitting = true;
      focusBefore = focusKey(document.activeElement);
    }
  });
  ["htmx:responseError", "htmx:sendError"].forEach((name) => {
    document.addEventListener(name, () => { submitting = false; refresh(); });
  });
  // A selector for the same control in the redrawn form: a button by its action, a radio by name and value.
  function focusKey(el) {
    if (!el || !el.closest || !el.closest("#judgment")) return null;
    if (el.dataset.action) return 'button[data-action="' + CSS.escape(el.dataset.action) + '"]';
    if (el.type === "radio") return 'input[name="' + CSS.escape(el.name) + '"][value="' + CSS.escape(el.value) + '"]';
    if (el.name) return '[name="' + CSS.escape(el.name) + '"]';
    return null;
  }

  document.addEventListener("htmx:afterSwap", () => {
    const f = form();
    submitting = false;
    const wanted = focusBefore;
    focusBefore = null;
    // the group that was in use stays active (a grade key after "Save draft" lands where it did before)
    paint();
    refresh();
    announceFrom(f);
    // Focus goes back to the control used, or to its twin in the new form; if that is gone (Mark complete
    // turned into Reopen) or disabled, to the new status line, never to the body.
    let next = wanted && f ? f.querySelector(wanted) : null;
    if (next && (next.disabled || next.closest("fieldset:disabled"))) next = null;
    if (!next && f) next = f.querySelector('[data-testid="status"]');
    if (next && (wanted || document.activeElement === document.body || !document.activeElement)) next.focus();
  });

  // ------------------------------------------------------------------ start
  let started = false;
  function ready() {
    if (started) return;
    started = true;
    if (kind.ready) kind.ready();
    paint();
    refresh();
    // A message brought by the page itself ("Marked complete", after the move to the next item): announced
    // through the live region, which a screen reader hears (content already there at load is not announced).
    document.querySelectorAll(".messages .message").forEach((node) => announce(node.textContent.trim(), "status"));
    announceFrom(form());
    const box = document.getElementById("keys-help");
    if (box) box.addEventListener("close", helpClosed);
  }

  // What a kind may use of the core.
  window.ReviewWorkspace = {
    register(plugin) { kind = plugin || {}; },
    announce: announce,
    status: status,
    changed: changed,
    locked: locked,
    form: form,
    dirty: dirty,
  };
  // Deferred kind scripts run after this one and before DOMContentLoaded (while readyState is already
  // "interactive"): they have registered by then. Only a script added after the page loaded starts at once.
  document.addEventListener("DOMContentLoaded", ready);
  if (document.readyState === "complete") window.setTimeout(ready, 0);
})();
