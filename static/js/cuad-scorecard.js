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
  document.addEventListener("htmx:load", function () {
    if (!started) return;
    var began = started;
    started = 0;
    requestAnimationFrame(function () {
      var out = document.getElementById("client-ms");
      if (out) out.textContent = "· page updated in " + (performance.now() - began).toFixed(0) + " ms";
    });
  });
})();
