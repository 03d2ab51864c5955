// Scorecard: a row opens the explorer for its clause type; the page shows how long each in-place update took
// (from the request leaving to the new scorecard painted).
(function () {
  document.addEventListener("click", function (event) {
    if (event.target.closest("a, button, input, select, label")) return;
    var row = event.target.closest("tr[data-href]");
    if (row) window.location.assign(row.getAttribute("data-href"));
  });
  var started = 0;
  document.addEventListener("htmx:beforeRequest", function () { started = performance.now(); });
  // htmx:load fires on the new content once it is in the page (the old fragment is gone by then).
  // The card is replaced whole, so a persistent live region outside it says what changed: the new F1 (or the
  // errors), and the sort order after a sort.
  function announce(card) {
    var live = document.getElementById("card-live");
    if (!live || !card || card.id !== "card") return;
    var errors = card.querySelector(".errors, .error");
    var f1 = card.querySelector('[data-testid="headline-f1"]');
    var sorted = card.querySelector("th[aria-sort]");
    var text = errors ? "Not regraded: " + errors.textContent.replace(/\s+/g, " ").trim()
      : f1 ? "Scorecard updated: F1 " + f1.textContent.replace(/\s+/g, " ").trim() +
        (sorted ? "; sorted by " + sorted.textContent.replace(/[▲▼]/g, "").trim() + ", " +
          sorted.getAttribute("aria-sort") : "") + "."
      : "";
    live.textContent = "";
    if (text) window.setTimeout(function () { live.textContent = text; }, 30);
  }
  document.addEventListener("htmx:load", function (event) {
    if (event.target && event.target.id === "card") announce(event.target);
    if (!started) return;
    var began = started;
    started = 0;
    requestAnimationFrame(function () {
      var out = document.getElementById("client-ms");
      if (out) out.textContent = "· page updated in " + (performance.now() - began).toFixed(0) + " ms";
    });
  });
})();
