// Playground: a failed recompute must never leave the previous texts' figures on the page.
// htmx swaps only 2xx answers; any other answer (413/414 from a proxy, a 400 from an oversized body, a 500)
// or a lost connection replaces the result box with a message saying what happened.
(function () {
  var BOXES = { overlap: true, grounding: true };

  function errorBox(id, message) {
    var box = document.createElement("div");
    box.id = id;
    box.setAttribute("data-testid", id);
    var p = document.createElement("p");
    p.className = "error";
    p.setAttribute("role", "alert");
    p.setAttribute("data-testid", "pg-error");
    p.textContent = message;
    box.appendChild(p);
    return box;
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    var xhr = event.detail.xhr;
    if (!target || !BOXES[target.id] || xhr.status < 400) return;
    var message = "Could not recompute (HTTP " + xhr.status + (xhr.statusText ? " " + xhr.statusText : "") +
      "); the figures of the previous texts were cleared.";
    event.detail.serverResponse = errorBox(target.id, message).outerHTML;
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  });

  // What a screen reader hears after each recompute: the figure of the box that changed, or its error.
  function announce(box) {
    var error = box.querySelector(".error");
    var score = box.querySelector(".score");
    var live = document.getElementById(error ? "pg-live-error" : "pg-live");
    if (!live) return;
    var text = error ? error.textContent.trim()
      : score ? (box.id === "overlap" ? "F1 " : "Grounding ") + score.textContent.trim() : "";
    live.textContent = "";
    if (text) window.setTimeout(function () { live.textContent = text; }, 30);
  }

  document.addEventListener("htmx:load", function (event) {
    var box = event.target;
    if (box && BOXES[box.id]) announce(box);
  });

  document.addEventListener("htmx:sendError", function (event) {
    var target = event.detail.target;
    if (!target || !BOXES[target.id]) return;
    var box = errorBox(target.id, "Could not reach the server; the figures of the previous texts were cleared.");
    target.replaceWith(box);
    announce(box);
  });
})();
