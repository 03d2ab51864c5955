// A <select data-autosubmit> submits its form when changed (was an inline onchange, which the
// Content-Security-Policy forbids: every script of the product is a static file).
document.addEventListener("change", function (event) {
  var select = event.target.closest("select[data-autosubmit]");
  if (select && select.form) select.form.submit();
});
