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

  document.addEventListener("htmx:sendError", function (event) {
    var target = event.detail.target;
    if (!target || !BOXES[target.id]) return;
    target.replaceWith(errorBox(target.id, "Could not reach the server; the figures of the previous texts were cleared."));
  });
})();
