// Keyboard grading on the blinded review item page. The page works without it:
// every action is a plain radio button, submit button or link.
(function () {
  "use strict";
  let active = 0;

  function groups() {
    return Array.from(document.querySelectorAll("#judgment .grade-group"));
  }

  function paint() {
    const all = groups();
    if (active >= all.length) active = Math.max(0, all.length - 1);
    all.forEach((group, i) => group.classList.toggle("active", i === active));
  }

  function submit(action) {
    const form = document.getElementById("judgment");
    if (!form) return;
    const button = form.querySelector('button[data-action="' + action + '"]');
    // A click (not requestSubmit) so that htmx records which button was used and sends its action.
    if (button && !button.disabled) button.click();
  }

  function follow(which) {
    const link = document.querySelector('a[data-nav="' + which + '"]');
    if (link) window.location.href = link.href;
  }

  document.addEventListener("click", (event) => {
    const group = event.target.closest && event.target.closest("#judgment .grade-group");
    if (group) {
      active = groups().indexOf(group);
      paint();
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type !== "radio"))) return;
    const key = event.key.toLowerCase();
    const all = groups();
    const group = all[active];
    if (group && !group.disabled) {
      const option = group.querySelector('input[type="radio"][data-key="' + CSS.escape(key) + '"]');
      if (option) {
        option.checked = true;
        if (active < all.length - 1) active += 1;
        paint();
        event.preventDefault();
        return;
      }
    }
    switch (event.key) {
      case "ArrowDown": active = Math.min(all.length - 1, active + 1); paint(); event.preventDefault(); return;
      case "ArrowUp": active = Math.max(0, active - 1); paint(); event.preventDefault(); return;
      case "ArrowRight": case "j": follow("next"); return;
      case "ArrowLeft": case "k": follow("previous"); return;
      case "d": submit("save"); return;
      case "c": submit("complete"); return;
      case "r": submit("reopen"); return;
      default: return;
    }
  });

  document.addEventListener("htmx:afterSwap", () => {
    active = 0;
    paint();
  });
  document.addEventListener("DOMContentLoaded", paint);
  if (document.readyState !== "loading") paint();
})();
