// Scorecard: a row opens the explorer for its clause type; the page shows how long each in-place update took.
(function () {
  document.addEventListener("click", function (event) {
    if (event.target.closest("a, button, input, select, label")) return;
    var row = event.target.closest("tr[data-href]");
    if (row) window.location.assign(row.getAttribute("data-href"));
  });
  var started = 0;
  document.addEventListener("htmx:beforeRequest", function () { started = performance.now(); });
  document.addEventListener("htmx:afterSettle", function () {
    var out = document.getElementById("client-ms");
    if (out && started) out.textContent = "· page updated in " + (performance.now() - started).toFixed(0) + " ms";
  });
})();
