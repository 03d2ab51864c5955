// Explorer: the contract text comes as JSON (offsets are exact: no HTML whitespace normalisation);
// clicking a quote wraps [start, end) in <mark class="located"> and scrolls it into view.
(function () {
  var holder = document.getElementById("contract-text");
  var data = document.getElementById("contract-data");
  if (!holder || !data) return;
  var text = JSON.parse(data.textContent);
  holder.textContent = text;
  var status = document.getElementById("locate-status");

  function show(start, end) {
    holder.textContent = "";
    holder.appendChild(document.createTextNode(text.slice(0, start)));
    var mark = document.createElement("mark");
    mark.className = "located";
    mark.setAttribute("data-testid", "located");
    mark.textContent = text.slice(start, end);
    holder.appendChild(mark);
    holder.appendChild(document.createTextNode(text.slice(end)));
    // Scroll the contract box only (not the whole page) so the quote lists stay in view.
    holder.scrollTop = mark.offsetTop - holder.offsetTop - holder.clientHeight / 3;
    holder.scrollIntoView({ block: "nearest" });
    return mark;
  }

  document.addEventListener("click", function (event) {
    if (event.target.closest("a")) return;
    var quote = event.target.closest(".quote");
    if (!quote) return;
    document.querySelectorAll(".quote.active").forEach(function (q) { q.classList.remove("active"); });
    quote.classList.add("active");
    if (!quote.hasAttribute("data-start")) {
      holder.textContent = text;
      status.textContent = "This quote is found nowhere in the contract (not verbatim, not even with case or spacing changed).";
      return;
    }
    var start = parseInt(quote.getAttribute("data-start"), 10);
    var end = parseInt(quote.getAttribute("data-end"), 10);
    show(start, end);
    status.textContent = "Highlighted characters " + start + "–" + end + " of the contract.";
  });
})();
