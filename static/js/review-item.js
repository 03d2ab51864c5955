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
  let focusBefore = null; // what had focus when the form was posted, to give it back after the redraw
  let helpReturn = null; // what had focus when the "?" dialog opened

  // The reviewer's own setting (account page, WCAG 2.1.4): "single" keys, "modifier" (Alt + key) or "off".
  function shortcutMode() {
    const holder = document.querySelector("[data-shortcuts]");
    return holder ? holder.dataset.shortcuts : "single";
  }

  // Said once by a screen reader: the polite region for what a save did, the assertive one for errors.
  // Both live outside the swapped form, so the node that speaks is never the node that was just replaced.
  function announce(text, kind) {
    const region = document.getElementById(kind === "error" ? "announce-error" : "announce");
    if (!region || !text) return;
    region.textContent = "";
    // emptied first and filled a moment later, so that the same message twice is heard twice
    window.setTimeout(() => { region.textContent = text; }, 30);
  }

  function announceFrom(root) {
    if (!root) return;
    root.querySelectorAll("[data-announce]").forEach((node) => announce(node.textContent.trim(), node.dataset.announce));
  }

  // The radio to focus in a group: its chosen one, else its first (the one Tab reaches).
  function radioOf(group) {
    if (!group) return null;
    return group.querySelector('input[type="radio"]:checked') || group.querySelector('input[type="radio"]');
  }

  // What a grade key did, as a screen reader hears it: "Section grade: 3 highly relevant".
  function gradeWords(group, option) {
    const legend = group.querySelector("legend");
    const label = option.closest("label");
    const meaning = label ? label.textContent.replace(option.dataset.key, "").trim() : option.value;
    return (legend ? legend.textContent.trim() + ": " : "") + option.value + (meaning && meaning !== option.value ? " " + meaning : "");
  }

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
    if (kind === "failed") announce(text, "error");
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

  document.addEventListener("click", (event) => {
    const target = event.target;
    if (!target.closest) return;
    if (target.closest("[data-help-open]")) { help(true); return; }
    if (target.closest("[data-help-close]") || target.id === "keys-help") { help(false); return; }  // the backdrop
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
    if (group) { active = groups().indexOf(group); paint(); }
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

  // The key a shortcut means. With Alt held, event.key is a composed character on some layouts (Alt+j is "∆"
  // on a Mac), so in the "modifier" setting the physical key names it.
  function shortcutKey(event, mode) {
    if (mode === "modifier") {
      const m = /^(?:Digit|Numpad)(\d)$|^Key([A-Z])$/.exec(event.code || "");
      if (m) return (m[1] || m[2]).toLowerCase();
      if (event.code === "Slash" && event.shiftKey) return "?";
    }
    return event.key.length === 1 ? event.key.toLowerCase() : event.key;
  }

  function typing(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
    return target.tagName === "INPUT" && target.type !== "radio" && target.type !== "checkbox";
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.key === "Escape") {
      if (helpOpen()) return; // the dialog closes itself (its "cancel"), and gives focus back
      if (target && target.tagName === "TEXTAREA" && target.closest("#judgment")) {
        // leaving the note goes to the grades (not to the body, where a screen reader loses its place)
        const back = radioOf(groups()[active]);
        if (back) { back.focus(); event.preventDefault(); }
      }
      return;
    }
    if (helpOpen()) {
      if (event.key === "?") { help(false); event.preventDefault(); }
      return; // nothing else acts behind the dialog
    }
    const mode = shortcutMode();
    if (mode === "off" || event.ctrlKey || event.metaKey) return;
    if (mode === "single" ? event.altKey : !event.altKey) return;
    if (typing(target)) return;
    const key = shortcutKey(event, mode);
    if (key === "?") { help(true); event.preventDefault(); return; }
    const onRadio = !!target && target.tagName === "INPUT" && target.type === "radio";
    // On a focused radio the arrow keys are the radio group's own (move the choice); with Alt they are the
    // browser's (back, forward).
    if (key.startsWith("Arrow") && (onRadio || mode === "modifier")) return;
    const all = groups();
    // A grade key acts on the group that has focus; with focus elsewhere, on the group marked active.
    const focused = onRadio ? target.closest("#judgment .grade-group") : null;
    if (focused) active = all.indexOf(focused);
    const group = all[active];
    if (group && !group.disabled && key.length === 1) {
      const option = group.querySelector('input[type="radio"][data-key="' + CSS.escape(key) + '"]');
      if (option) {
        option.checked = true;
        announce(gradeWords(group, option), "status");
        if (active < all.length - 1) active += 1;
        paint();
        changed();
        // focus follows the grade on to the next group, so the next key lands where the outline is
        if (focused) {
          const next = radioOf(all[active]);
          (next && active !== all.indexOf(focused) ? next : option).focus();
        }
        event.preventDefault();
        return;
      }
    }
    let url = null;
    switch (key) {
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

  function ready() {
    paint();
    refresh();
    // A message brought by the page itself ("Marked complete", after the move to the next item): announced
    // through the live region, which a screen reader hears (content already there at load is not announced).
    document.querySelectorAll(".messages .message").forEach((node) => announce(node.textContent.trim(), "status"));
    announceFrom(form());
    const box = document.getElementById("keys-help");
    if (box) box.addEventListener("close", helpClosed);
  }
  document.addEventListener("DOMContentLoaded", ready);
  if (document.readyState !== "loading") ready();
})();
