// The clause spans item kind of the reviewer's workspace (workspace.js): one category over the whole contract. The
// core saves, submits, undoes and announces; this adds the spans. The text comes from the stored text itself
// (a JSON copy on the page), cut into chunks whose text is exactly one slice of it, so an offset in the page is an
// offset in the stored text. Chunks are laid out by the browser only near the screen (content-visibility), and a
// change re-renders only the chunks it touches: opening and highlighting cost the same on a 300-page contract.
// The spans travel in the form's hidden "spans" field and in the autosave's body, beside the core's grades and note.
(function () {
  "use strict";
  const CHUNK = 2000; // characters a chunk aims at, cut at the next line end
  let text = "", map = { unit: "", starts: [] }; // the stored text, and where its pages/paragraphs start
  let chunks = []; // [{start, end, node}]
  let spans = []; // [[start, end], ...] sorted, merged, trimmed: as the server stores them
  let hits = [], hit = -1, hitLength = 0; // the search's match offsets, the one shown and its length
  let lastSelection = null; // [start, end] of the latest mouse selection inside the text
  // The text cursor of the keyboard (WCAG 2.1.1): ``caret`` is an offset into the stored text; with ``anchor`` set
  // (and different) the characters between them are selected. Painted in the chunks like the marks, so it works
  // without the browser's caret browsing; ``grown`` remembers the selections "x" grew from, for "X".
  let caret = 0, anchor = null, grown = [];
  const core = window.ReviewWorkspace;
  const announce = (message, level) => core.announce(message, level);
  const status = (message, level) => core.status(message, level);
  const changed = () => core.changed();

  const $ = (selector) => document.querySelector(selector);
  const field = () => $('#judgment input[name="spans"]');
  const presence = () => $("#judgment fieldset.presence");
  const locked = () => core.locked();

  // ------------------------------------------------------------------ the text, in chunks
  function cuts() {
    // Page starts (a PDF) are chunk boundaries, so each page begins a chunk labelled with its number.
    const forced = map.unit === "page" ? map.starts.map((pair) => pair[0]).filter((o) => o > 0) : [];
    const out = [];
    let start = 0;
    let f = 0;
    while (start < text.length) {
      while (f < forced.length && forced[f] <= start) f += 1;
      let end = Math.min(text.length, start + CHUNK);
      if (end < text.length) {
        const nl = text.indexOf("\n", end);
        end = nl === -1 || nl - start > 2 * CHUNK ? Math.min(text.length, start + 2 * CHUNK) : nl + 1;
      }
      if (f < forced.length && forced[f] < end) end = forced[f];
      out.push([start, end]);
      start = end;
    }
    return out;
  }

  function unitAt(offset) {
    const starts = map.starts;
    let lo = 0;
    let hi = starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= offset) { found = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return found === -1 ? null : starts[found][1];
  }

  function where(start, end) {
    if (!map.unit || !map.starts.length) return "";
    const a = unitAt(start);
    const b = unitAt(Math.max(start, end - 1));
    return a === b ? map.unit + " " + a : map.unit + "s " + a + "–" + b;
  }

  function build() {
    const box = document.getElementById("contract-text");
    const frag = document.createDocumentFragment();
    chunks = cuts().map(([start, end]) => {
      const node = document.createElement("div");
      node.className = "chunk";
      node.dataset.offset = String(start);
      if (map.unit === "page" && map.starts.some((pair) => pair[0] === start)) {
        node.dataset.unitLabel = "page " + unitAt(start);
      }
      node.textContent = text.slice(start, end);
      frag.appendChild(node);
      return { start: start, end: end, node: node };
    });
    box.replaceChildren(frag);
    chunks.forEach((chunk) => { if (overlaps(chunk)) paintChunk(chunk); });
  }

  function overlaps(chunk) {
    const sel = selected();
    return spans.some(([s, e]) => s < chunk.end && e > chunk.start) ||
      (hit >= 0 && hits[hit] < chunk.end && hits[hit] + hitLength > chunk.start) ||
      (sel && sel[0] < chunk.end && sel[1] > chunk.start) || caretIn(chunk);
  }

  // The chunk that shows the caret: the one it stands in, or the last one when it is at the very end.
  const caretIn = (chunk) => (caret >= chunk.start && caret < chunk.end) || (caret === text.length && chunk.end === text.length);

  function selected() {
    if (anchor === null || anchor === caret) return null;
    return [Math.min(anchor, caret), Math.max(anchor, caret)];
  }

  function chunkOf(offset) {
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (chunks[mid].start <= offset) lo = mid; else hi = mid - 1;
    }
    return chunks[lo];
  }

  // A chunk's text with its marks: span highlights (with start and end cues), the current search match, the
  // keyboard's selection and its caret. The cues are CSS generated content, so the chunk's text stays the stored
  // text (an offset in the page is an offset in the stored text).
  function paintChunk(chunk) {
    const marks = [];
    spans.forEach(([s, e], i) => {
      if (s < chunk.end && e > chunk.start) marks.push({ s: Math.max(s, chunk.start), e: Math.min(e, chunk.end), from: s, to: e, i: i });
    });
    const bounds = new Set([chunk.start, chunk.end]);
    marks.forEach((m) => { bounds.add(m.s); bounds.add(m.e); });
    let current = null;
    if (hit >= 0) {
      const hs = hits[hit];
      const he = hs + hitLength;
      if (hs < chunk.end && he > chunk.start) {
        current = [Math.max(hs, chunk.start), Math.min(he, chunk.end), hs, he];
        bounds.add(current[0]); bounds.add(current[1]);
      }
    }
    const sel = selected();
    if (sel && sel[0] < chunk.end && sel[1] > chunk.start) { bounds.add(Math.max(sel[0], chunk.start)); bounds.add(Math.min(sel[1], chunk.end)); }
    const showCaret = caretIn(chunk);
    if (showCaret) bounds.add(caret);
    const points = Array.from(bounds).sort((a, b) => a - b);
    const frag = document.createDocumentFragment();
    for (let k = 0; k < points.length; k += 1) {
      const a = points[k];
      if (showCaret && a === caret) {
        const mark = document.createElement("span");
        mark.className = "caret";
        mark.setAttribute("aria-hidden", "true");
        frag.appendChild(mark);
      }
      if (k + 1 >= points.length) break;
      const b = points[k + 1];
      const piece = text.slice(a, b);
      const inSpan = marks.find((m) => m.s <= a && m.e >= b);
      const inHit = current && current[0] <= a && current[1] >= b;
      const inSel = sel && sel[0] <= a && sel[1] >= b;
      if (!inSpan && !inHit && !inSel) { frag.appendChild(document.createTextNode(piece)); continue; }
      const mark = document.createElement(inSpan || inHit ? "mark" : "span");
      if (inSpan) {
        mark.className = "span-mark";
        mark.dataset.span = String(inSpan.i);
        if (a === inSpan.from) mark.dataset.cueStart = "Start of highlight " + (inSpan.i + 1) + ".";
        if (b === inSpan.to) mark.dataset.cueEnd = "End of highlight " + (inSpan.i + 1) + ".";
      }
      if (inHit) {
        mark.classList.add("hit");
        if (a === current[2]) mark.dataset.hitStart = "Search match.";
        if (b === current[3]) mark.dataset.hitEnd = "End of match.";
      }
      if (inSel) mark.classList.add("kbd-sel");
      mark.textContent = piece;
      frag.appendChild(mark);
    }
    chunk.node.replaceChildren(frag);
  }

  function repaint(ranges) {
    const touched = new Set();
    ranges.forEach(([s, e]) => {
      if (e <= s) e = s + 1;
      let c = chunkOf(s);
      let index = chunks.indexOf(c);
      while (c && c.start < e) { touched.add(c); index += 1; c = chunks[index]; }
    });
    touched.forEach(paintChunk);
  }

  // ------------------------------------------------------------------ selection -> offsets
  function pointOffset(node, offset) {
    const element = node.nodeType === Node.TEXT_NODE ? node.parentNode : node;
    const chunkNode = element && element.closest ? element.closest(".chunk") : null;
    if (!chunkNode) return null;
    const range = document.createRange();
    range.setStart(chunkNode, 0);
    range.setEnd(node, offset);
    // toString() is the text nodes' data: exactly the stored characters, never a normalised copy.
    return Number(chunkNode.dataset.offset) + range.toString().length;
  }

  function selectionOffsets() {
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
    const range = selection.getRangeAt(0);
    const start = pointOffset(range.startContainer, range.startOffset);
    const end = pointOffset(range.endContainer, range.endOffset);
    if (start === null || end === null || end <= start) return null;
    return [start, end];
  }

  const isSpace = (ch) => /\s/.test(ch);
  // On a touch screen (no hover, a coarse pointer) the words name touches, not keys.
  const touch = () => window.matchMedia("(hover: none) and (pointer: coarse)").matches;
  const howToHighlight = () => (touch() ? "touch and hold the text to select it, then tap Highlight the selection"
    : "select it (Shift and the arrow keys, or x), then press h");

  // The server's normal form (reviewapp.review.spans.offsets.spans_clean): sort, merge what overlaps or touches,
  // then trim white space at both ends (a span of white space only is dropped).
  function normalise(list) {
    const sorted = list.map(([s, e]) => [s, e]).filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const merged = [];
    sorted.forEach(([s, e]) => {
      const last = merged[merged.length - 1];
      if (last && s <= last[1]) last[1] = Math.max(last[1], e); else merged.push([s, e]);
    });
    const out = [];
    merged.forEach(([s, e]) => {
      while (s < e && isSpace(text[s])) s += 1;
      while (e > s && isSpace(text[e - 1])) e -= 1;
      if (e > s) out.push([s, e]);
    });
    return out;
  }

  // ------------------------------------------------------------------ the answer
  const chosen = () => ((presence() && presence().querySelector('input[type="radio"]:checked')) || { value: "" }).value;

  function choose(value) {
    if (!presence()) return;
    presence().querySelectorAll('input[type="radio"]').forEach((input) => { input.checked = input.value === value; });
  }

  function valueOf(key, fallback) {
    const input = presence() ? presence().querySelector('input[data-key="' + key + '"]') : null;
    return input ? input.value : fallback;
  }
  const presentValue = () => valueOf("p", "1");
  function answerWord(value) {
    const input = presence() ? presence().querySelector('input[value="' + CSS.escape(value) + '"]') : null;
    const label = input ? input.closest("label") : null;
    return label ? label.textContent.replace(input.dataset.key, "").trim() : value;
  }

  function setSpans(next, message) {
    const before = spans;
    spans = normalise(next);
    field().value = JSON.stringify(spans);
    repaint(before.concat(spans));
    list();
    if (message) announce(message, "status");
    changed();
  }

  function addSelection() {
    if (locked()) return;
    const offsets = selectionOffsets() || selected() || lastSelection;
    if (!offsets) { status("Nothing is selected in the contract: " + howToHighlight() + ".", "failed"); return; }
    const added = normalise([offsets]);
    if (!added.length) { status("The selection is only white space.", "failed"); return; }
    if (chosen() !== presentValue()) choose(presentValue());
    lastSelection = null;
    const selection = window.getSelection();
    if (selection) selection.removeAllRanges();
    grown = [];
    if (anchor !== null) place(caret, null);
    const next = normalise(spans.concat(added));
    setSpans(next, "Highlighted" + (where(added[0][0], added[0][1]) ? " (" + where(added[0][0], added[0][1]) + ")" : "") +
             ": " + quote(added[0][0], added[0][1]) + ". " + next.length + (next.length === 1 ? " highlight" : " highlights") +
             ", marked present.");
  }

  function removeSpan(index) {
    if (locked()) return;
    const gone = spans[index];
    setSpans(spans.filter((_, i) => i !== index), "Removed the span" + (gone ? " on " + where(gone[0], gone[1]) : "") + ".");
  }

  function list() {
    const box = $('#judgment [data-testid="span-list"]');
    const count = $('#judgment [data-testid="span-count"]');
    if (count) count.textContent = "(" + spans.length + ")";
    if (!box) return;
    const frag = document.createDocumentFragment();
    if (!spans.length) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = "None yet: " + howToHighlight() + ".";
      frag.appendChild(li);
    }
    spans.forEach(([s, e], i) => {
      const li = document.createElement("li");
      li.dataset.start = String(s);
      li.dataset.end = String(e);
      const go = document.createElement("button");
      go.type = "button";
      go.className = "link span-go";
      go.dataset.go = String(i);
      const piece = text.slice(s, e).replace(/\s+/g, " ");
      go.textContent = (where(s, e) ? where(s, e) + ": " : "") + (piece.length > 90 ? piece.slice(0, 89) + "…" : piece);
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "secondary span-remove";
      remove.dataset.remove = String(i);
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove the span on " + (where(s, e) || "the text") + ": " + piece.slice(0, 40));
      remove.disabled = locked();
      li.append(go, " ", remove);
      frag.appendChild(li);
    });
    box.replaceChildren(frag);
  }

  function reveal(offset) {
    const chunk = chunkOf(offset);
    if (!chunk) return;
    const mark = chunk.node.querySelector("mark.hit") || chunk.node.querySelector('mark[data-span]');
    (mark || chunk.node).scrollIntoView({ block: "center" });
  }

  // ------------------------------------------------------------------ the keyboard's text cursor
  const WORD = /[\p{L}\p{N}_'’-]/u;
  const isWord = (ch) => ch !== undefined && WORD.test(ch);

  function lineStart(at) { return text.lastIndexOf("\n", at - 1) + 1; }
  function lineEnd(at) { const nl = text.indexOf("\n", at); return nl === -1 ? text.length : nl; }

  function wordRight(at) {
    while (at < text.length && !isWord(text[at])) at += 1;
    while (at < text.length && isWord(text[at])) at += 1;
    return at;
  }
  function wordLeft(at) {
    while (at > 0 && !isWord(text[at - 1])) at -= 1;
    while (at > 0 && isWord(text[at - 1])) at -= 1;
    return at;
  }

  // A paragraph is a line of the stored text (contracts keep one paragraph a line); a sentence ends at . ; ? or !
  // before white space, or at the paragraph's end.
  function paragraphAround([s, e]) {
    return trimmed([lineStart(s), lineEnd(Math.max(s, e - 1))]);
  }
  function sentenceAround([s, e]) {
    const [ps, pe] = [lineStart(s), lineEnd(Math.max(s, e - 1))];
    let a = s;
    while (a > ps && !(/[.;?!]/.test(text[a - 1]) && isSpace(text[a]))) a -= 1;
    let b = Math.max(e, s + 1);
    while (b < pe && !(/[.;?!]/.test(text[b - 1]) && isSpace(text[b]))) b += 1;
    return trimmed([a, Math.min(b, pe)]);
  }
  function wordAround(at) {
    let a = at, b = at;
    while (a > 0 && isWord(text[a - 1])) a -= 1;
    while (b < text.length && isWord(text[b])) b += 1;
    return b > a ? [a, b] : null;
  }
  function trimmed([s, e]) {
    while (s < e && isSpace(text[s])) s += 1;
    while (e > s && isSpace(text[e - 1])) e -= 1;
    return [s, e];
  }

  function place(nextCaret, nextAnchor) {
    const before = [[caret, caret + 1]];
    const old = selected();
    if (old) before.push(old);
    caret = Math.max(0, Math.min(text.length, nextCaret));
    anchor = nextAnchor === null || nextAnchor === undefined ? null : Math.max(0, Math.min(text.length, nextAnchor));
    const now = selected();
    repaint(before.concat([[caret, caret + 1]], now ? [now] : []));
    const shown = document.querySelector("#contract-text .caret");
    if (shown) shown.scrollIntoView({ block: "nearest" });
  }

  function quote(s, e) {
    const piece = text.slice(s, e).replace(/\s+/g, " ").trim();
    return piece.length > 160 ? piece.slice(0, 150) + "… (" + (e - s) + " characters)" : piece;
  }

  function sayCaret(how) {
    const sel = selected();
    if (sel) {
      announce("Selected" + (where(sel[0], sel[1]) ? " (" + where(sel[0], sel[1]) + ")" : "") + ": " + quote(sel[0], sel[1]), "status");
      return;
    }
    let said;
    if (how === "char") {
      const ch = text[caret];
      said = ch === undefined ? "end of the text" : ch === "\n" ? "line break" : /\s/.test(ch) ? "space" : ch;
    } else if (how === "word") {
      const w = wordAround(caret) || wordAround(wordRight(caret));
      said = w ? text.slice(w[0], w[1]) : "end of the text";
    } else {
      said = quote(lineStart(caret), lineEnd(caret)) || "blank line";
    }
    announce(said + (how === "line" && where(caret, caret + 1) ? " (" + where(caret, caret + 1) + ")" : ""), "status");
  }

  // The keys of the text cursor, on the focused contract text. They are the text's own keys, as in any text field,
  // so they work whatever the shortcut setting; letters stay shortcuts.
  function cursorKey(event) {
    const key = event.key;
    const extend = event.shiftKey;
    const byWord = event.ctrlKey || event.altKey;
    const sel = selected();
    let next = null;
    let how = "char";
    switch (key) {
      case "ArrowRight":
        if (byWord) { next = wordRight(caret); how = "word"; }
        else next = !extend && sel ? sel[1] : caret + 1;
        break;
      case "ArrowLeft":
        if (byWord) { next = wordLeft(caret); how = "word"; }
        else next = !extend && sel ? sel[0] : caret - 1;
        break;
      case "ArrowDown": case "ArrowUp": {
        const column = caret - lineStart(caret);
        const target = key === "ArrowDown" ? lineEnd(caret) + 1 : lineStart(caret) - 1;
        if (target < 0) next = 0;
        else if (target > text.length) next = text.length;
        else { const ls = lineStart(target); next = Math.min(ls + column, lineEnd(ls)); }
        how = "line";
        break;
      }
      case "Home": next = event.ctrlKey ? 0 : lineStart(caret); how = "line"; break;
      case "End": next = event.ctrlKey ? text.length : lineEnd(caret); how = "line"; break;
      case "Enter":
        if (hit < 0) return false;
        grown = [];
        place(hits[hit] + hitLength, hits[hit]);
        sayCaret();
        return true;
      case "Escape":
        if (!sel) return false;
        grown = [];
        place(caret, null);
        announce("Selection cleared.", "status");
        return true;
      default:
        return false;
    }
    grown = [];
    place(next, extend ? (anchor === null ? caret : anchor) : null);
    sayCaret(how);
    return true;
  }

  // "x" grows the selection to the word, then the sentence, then the paragraph around it; "X" goes back a step.
  function grow() {
    const sel = selected() || [caret, caret];
    const steps = [wordAround(sel[0]), sentenceAround(sel), paragraphAround(sel)];
    const next = steps.find((r) => r && r[1] > r[0] && r[0] <= sel[0] && r[1] >= sel[1] && (r[0] < sel[0] || r[1] > sel[1]));
    if (!next) { announce("The whole paragraph is selected; select on with Shift and the arrow keys.", "status"); return; }
    grown.push([anchor, caret]);
    place(next[1], next[0]);
    sayCaret();
  }

  function shrink() {
    if (!grown.length) { announce(selected() ? "Nothing to shrink back to." : "Nothing is selected.", "status"); return; }
    const [a, c] = grown.pop();
    place(c, a);
    if (selected()) sayCaret(); else announce("Selection cleared.", "status");
  }

  // ------------------------------------------------------------------ search in the document
  const searchLength = () => document.getElementById("doc-search").value.length;

  let folded = null;
  function search() {
    const box = document.getElementById("doc-search");
    const query = box.value;
    const before = hit >= 0 ? [[hits[hit], hits[hit] + hitLength]] : [];
    hits = [];
    hit = -1;
    if (query.length >= 2) {
      if (folded === null) folded = text.toLowerCase().length === text.length ? text.toLowerCase() : text;
      const needle = folded === text ? query : query.toLowerCase();
      let at = folded.indexOf(needle);
      while (at !== -1 && hits.length < 10000) { hits.push(at); at = folded.indexOf(needle, at + Math.max(1, needle.length)); }
    }
    repaint(before);
    count();
  }

  function count() {
    const out = $('[data-testid="search-count"]');
    if (!out) return;
    const box = document.getElementById("doc-search");
    if (!box.value || (!hits.length && box.value.length < 2)) out.textContent = "";
    else if (!hits.length) out.textContent = "no match";
    else out.textContent = (hit >= 0 ? hit + 1 : 0) + " of " + hits.length + (where(hits[Math.max(hit, 0)], hits[Math.max(hit, 0)] + 1) && hit >= 0 ? " (" + where(hits[hit], hits[hit] + 1) + ")" : "");
  }

  function step(direction) {
    if (!hits.length) return;
    const old = hit >= 0 ? [[hits[hit], hits[hit] + hitLength]] : [];
    hit = hit < 0 ? (direction > 0 ? 0 : hits.length - 1) : (hit + direction + hits.length) % hits.length;
    hitLength = searchLength();
    repaint(old.concat([[hits[hit], hits[hit] + hitLength]]));
    // The match is selected, so that "h" (or "x" to grow it to its sentence first) needs no other key.
    grown = [];
    place(hits[hit] + hitLength, hits[hit]);
    reveal(hits[hit]);
    count();
    const at = where(hits[hit], hits[hit] + hitLength);
    announce("Match " + (hit + 1) + " of " + hits.length + (at ? ", " + at : "") + ", selected: " +
             quote(lineStart(hits[hit]), lineEnd(hits[hit])), "status");
  }


  // ------------------------------------------------------------------ the kind's part of the workspace
  function mouseup(event) {
    // A click puts the text cursor where it landed; a drag becomes the cursor's selection (so Shift and the arrow
    // keys go on from it, and it looks the same as one made with the keys).
    if (!event.target.closest || !event.target.closest("#contract-text")) return;
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0) return;
    const range = selection.getRangeAt(0);
    const end = pointOffset(range.endContainer, range.endOffset);
    if (end === null) return;
    const start = selection.isCollapsed ? null : pointOffset(range.startContainer, range.startOffset);
    grown = [];
    if (start === null) place(end, null);
    else { selection.removeAllRanges(); lastSelection = null; place(end, start); sayCaret(); }
  }

  function ready() {
    if (chunks.length || !document.getElementById("contract-source")) return;
    const began = window.performance.now();
    text = JSON.parse(document.getElementById("contract-source").textContent);
    const locations = document.getElementById("contract-locations");
    if (locations) map = JSON.parse(locations.textContent);
    try { spans = normalise(JSON.parse(field().value || "[]")); } catch (error) { spans = []; }
    build();
    list();
    document.addEventListener("input", (event) => { if (event.target.id === "doc-search") search(); });
    document.addEventListener("selectionchange", () => {
      const offsets = selectionOffsets();
      if (offsets) lastSelection = offsets;
    });
    document.addEventListener("mouseup", mouseup);
    // When the text was laid out and ready to label, in ms since navigation began (the browser test prints it).
    document.body.dataset.spansReady = String(Math.round(window.performance.now()));
    document.body.dataset.spansBuildMs = String(Math.round(window.performance.now() - began));
  }

  core.register({
    ready: ready,
    extra: () => spans,
    extraSaved: () => JSON.parse(field().dataset.saved || "[]"),
    body: (sent) => ({ spans: sent }),
    accept(data, sent) {
      const stored = data.revision.spans || [];
      field().dataset.saved = JSON.stringify(stored);
      if (JSON.stringify(stored) !== JSON.stringify(sent) && JSON.stringify(spans) === JSON.stringify(sent)) {
        // The server's form wins (it is what was stored), so that the page never saves the same answer again.
        const before = spans;
        spans = stored;
        field().value = JSON.stringify(spans);
        repaint(before.concat(spans));
        list();
      }
    },
    restore(savedSpans) { setSpans(savedSpans); },
    // Spans answer "present": absent or unknown with spans would be refused by the server, so they go (z brings
    // them back before the draft is saved, and the saved revision after).
    graded(group, option) {
      if (!group.classList.contains("presence")) return null;
      const meaning = answerWord(option.value);
      if (option.value !== presentValue() && spans.length) {
        setSpans([]);
        return "Marked " + meaning + ": the highlights were removed (z brings them back).";
      }
      return "Marked " + meaning + ".";
    },
    first(event) {
      const target = event.target;
      if (target && target.id === "doc-search") {
        if (event.key === "Enter") { step(event.shiftKey ? -1 : 1); return true; }
        if (event.key === "Escape") { document.getElementById("contract-text").focus(); return true; }
        return false;
      }
      return !!target && target.id === "contract-text" && !event.metaKey && cursorKey(event);
    },
    key(key) {
      switch (key) {
        case "N": step(-1); return true;
        case "X": shrink(); return true;
        case "n": step(1); return true;
        case "x": grow(); return true;
        case "h": addSelection(); return true;
        case "/": { const box = document.getElementById("doc-search"); box.focus(); box.select(); return true; }  // typing replaces the last search
        default: return false;
      }
    },
    click(event) {
      const target = event.target;
      if (target.closest('[data-action="add-span"]')) { addSelection(); return true; }
      const remove = target.closest("[data-remove]");
      if (remove) { removeSpan(Number(remove.dataset.remove)); return true; }
      const jump = target.closest("[data-go]");
      if (jump) { const s = spans[Number(jump.dataset.go)]; if (s) reveal(s[0]); return true; }
      const searchButton = target.closest("[data-search]");
      if (searchButton) { step(searchButton.dataset.search === "next" ? 1 : -1); return true; }
      return false;
    },
  });
})();
